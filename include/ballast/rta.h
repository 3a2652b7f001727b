/**
 * \file ballast/rta.h
 * \brief Rta-C, runtime administration: the whole module in one include.
 *
 * rta is layered; each part has its own header and each header compiles on
 * its own:
 * - ballast/rta_map.h: task graphs, the hardware model (hwloc, simulated
 *   machines) and the mapping engine (SCOTCH, remapping, mapping quality);
 * - ballast/rta_task.h: the task tree, begin/end of tasks, registered
 *   arrays, the cost model and rta_task_map();
 * - ballast/rta_policy.h: when to remap (explicit, automatic, off);
 * - ballast/rta_lb.h: load-balancing contexts, which remap a task subtree
 *   and move task state between processes.
 */
#ifndef BALLAST_RTA_H
#define BALLAST_RTA_H
#include <ballast/rta_map.h>
#include <ballast/rta_task.h>
#include <ballast/rta_policy.h>
#include <ballast/rta_lb.h>
#endif /* BALLAST_RTA_H */
