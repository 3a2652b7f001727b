/**
 * \file ballast.h
 * \brief The whole public API of ballast: monitoring (mon), performance
 * introspection (pia) and runtime administration (rta).
 *
 * \section naming Naming
 * - Prefix: every public symbol carries its module's prefix: \c ballast_
 *   (errors, version, log), \c mon_, \c pia_, \c rta_; constants and macros
 *   the same in capitals (\c BALLAST_, \c MON_, \c PIA_, \c RTA_). Types end
 *   in \c _t.
 * - Functions read <tt>\<module\>_\<object\>_\<verb\></tt>, the object named
 *   first: \c rta_task_begin, \c rta_task_find, \c rta_lb_perform,
 *   \c pia_interval_mark, \c pia_region_parent. Queries that return a
 *   property are named by the property, without \c get_:
 *   \c rta_task_key, \c rta_lb_comm, \c rta_lb_stats. Calls on a module as
 *   a whole leave the object out: \c rta_step, \c rta_reset, \c mon_report.
 * - The objects of rta: \c rta_graph_ (task graphs), \c rta_hw_ (the
 *   hardware model), \c rta_map_ (the mapping engine: \c rta_map_graph,
 *   \c rta_map_tasks, \c rta_map_evaluate), \c rta_mapping_ (a computed
 *   mapping), \c rta_task_, \c rta_cost_ (the cost model), \c rta_policy_,
 *   \c rta_lb_ (a load-balancing context); of pia: \c pia_region_,
 *   \c pia_activity_, \c pia_partner_, \c pia_interval_.
 * - The object comes first among the parameters, and output parameters come
 *   last: <tt>pia_region_activity_data(region, act, out)</tt>,
 *   <tt>rta_task_find(key, &task)</tt>.
 * - Opaque objects come in \c _create / \c _destroy pairs (\c _destroy of
 *   NULL does nothing); \c _ex marks the variant of a call that takes an
 *   options struct.
 * - Option and configuration structs are filled with defaults by
 *   <tt>\<type\>_init(&opts)</tt>, which returns void and does nothing for
 *   NULL: \c rta_hw_options_init, \c rta_map_options_init,
 *   \c rta_map_tasks_options_init, \c rta_lb_config_init,
 *   \c rta_policy_config_init.
 * - Fallible calls return an \c int: 0 (or a non-negative id or count) on
 *   success, a negative \c BALLAST_E* code otherwise (ballast/common.h).
 *
 * \section cresta The CRESTA names
 * ballast implements the interfaces of the CRESTA project's Performance
 * Introspection API and runtime administration (Rta-C). Their names read
 * verb first and are kept, with their CRESTA signatures, as the documented
 * primary names of what they do:
 * - pia: pia_find_region_by_name(), pia_get_region_data(data, id),
 *   pia_find_activity_by_name(), pia_get_activity_data(data, act),
 *   pia_init_activity_data() (output first, as CRESTA has it);
 * - rta: rta_define_task(), rta_begin_task(key), rta_end_task(key),
 *   rta_register_array(), rta_define_lb_context(),
 *   rta_perform_load_balancing(comm).
 * Where CRESTA names a thing by key or communicator, the grammar's form
 * takes the handle: rta_task_begin(task) / rta_task_end(task) beside
 * rta_begin_task(key) / rta_end_task(key); rta_lb_perform(ctx, comm) beside
 * rta_perform_load_balancing(comm); rta_lb_destroy() destroys what
 * rta_define_lb_context() created; rta_unregister_array() undoes
 * rta_register_array().
 *
 * \section deprecated Deprecated names
 * Names of earlier versions stay exported as real functions (not macros),
 * so built programs, LD_PRELOAD tools and the Fortran module keep working.
 * Each header lists them at its end as "Deprecated: old name of X".
 *
 * \section headers Headers
 * This header includes all of them; each also compiles on its own:
 * ballast/common.h, ballast/mon.h, ballast/pia.h, and ballast/rta.h, which
 * includes ballast/rta_hw.h, ballast/rta_task.h, ballast/rta_policy.h and
 * ballast/rta_lb.h; ballast/tool.h is the tools interface (tools that
 * plug into ballast's events).
 */
#ifndef BALLAST_H
#define BALLAST_H
#include <ballast/common.h>
#include <ballast/mon.h>
#include <ballast/pia.h>
#include <ballast/rta.h>
#include <ballast/tool.h>
#endif
