/**
 * \file ballast/pia.h
 * \brief The Performance Introspection API.
 */
#ifndef BALLAST_PIA_H
#define BALLAST_PIA_H
#include <ballast/common.h>
#endif
