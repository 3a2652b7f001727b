/**
 * \file ballast.h
 * \brief The whole public API of ballast: monitoring (mon), performance
 * introspection (pia) and runtime administration (rta).
 */
#ifndef BALLAST_H
#define BALLAST_H
#include <ballast/common.h>
#include <ballast/mon.h>
#include <ballast/pia.h>
#include <ballast/rta.h>
#endif
