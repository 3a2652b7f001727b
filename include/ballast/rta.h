/**
 * \file ballast/rta.h
 * \brief Rta-C: runtime administration (tasks, hardware model, mapping).
 */
#ifndef BALLAST_RTA_H
#define BALLAST_RTA_H
#include <ballast/common.h>
#endif
