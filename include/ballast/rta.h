/**
 * \file ballast/rta.h
 * \brief Rta-C: runtime administration (task tree, cost model, load balancing).
 * The hardware model and the mapping are declared in ballast/rta_hw.h, which
 * this header includes.
 */
#ifndef BALLAST_RTA_H
#define BALLAST_RTA_H
#include <ballast/common.h>
#include <ballast/rta_hw.h>
#endif
