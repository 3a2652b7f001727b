/**
 * \file ballast/rta_hw.h
 * \brief Rta-C hardware model and two-phase SCOTCH mapping.
 */
#ifndef BALLAST_RTA_HW_H
#define BALLAST_RTA_HW_H
#include <ballast/common.h>
#endif
