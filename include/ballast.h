/**
 * \file ballast.h
 * \brief The whole public API of ballast: monitoring (mon), performance
 * introspection (pia) and runtime administration (rta).
 *
 * \section modules Modules
 * | module | folder      | header                | public prefix   | what it does |
 * |--------|-------------|-----------------------|-----------------|--------------|
 * | common | src/common | ballast/common.h | \c ballast_ | error codes, version, the log |
 * | tool | src/tool | ballast/tool.h | \c ballast_tool_ | tools that plug into ballast's events |
 * | mon | src/mon | ballast/mon.h | \c mon_ | regions, the end-of-run report, the profile |
 * | pia | src/pia | ballast/pia.h | \c pia_ | a process reads its own performance data |
 * | assert | src/assert | ballast/pia_assert.h | \c pia_assert_ | performance assertions |
 * | map | src/map | ballast/rta_map.h | \c rta_graph_, \c rta_hw_, \c rta_map_, \c rta_strategy_ | task graphs, the hardware model, the mapping engine |
 * | task | src/task | ballast/rta_task.h | \c rta_task_, \c rta_array_, \c rta_elem_, \c rta_cost_, \c rta_mapping_ | the task tree, registered arrays, the cost model, the tree's mapping |
 * | policy | src/policy | ballast/rta_policy.h | \c rta_policy_, \c rta_reason_ | when to remap (inside: the load-balancing record's reader) |
 * | lb | src/lb | ballast/rta_lb.h | \c rta_lb_ | load-balancing contexts, moving tasks |
 * Each module's code lives in its folder, and the library's internal
 * symbols carry the folder's name as prefix (\c map__, \c task__, ...;
 * common's \c ballast__): the README's Architecture section has the map.
 * ballast/rta.h includes the four rta headers; this header includes all of
 * them (each also compiles on its own). ballast/cresta.h, not included here,
 * holds the CRESTA interface's names as deprecated wrappers (see below).
 *
 * \section naming Names: one name per call
 * - Every public symbol carries its module's prefix (table above);
 *   constants and macros the same in capitals (\c BALLAST_, \c MON_,
 *   \c PIA_, \c RTA_). Types end in \c _t.
 * - A function reads <tt>\<prefix\>_\<noun\>_\<verb\></tt>: the object it
 *   acts on, then what it does: \c rta_task_define, \c rta_task_begin,
 *   \c rta_task_find, \c rta_task_array_register, \c rta_lb_create,
 *   \c rta_lb_perform, \c pia_region_find, \c pia_interval_mark. A query
 *   of a property is named by the property, without \c get_:
 *   \c rta_task_key, \c rta_lb_comm, \c pia_region_data,
 *   \c pia_activity_data. Calls on a module as a whole leave the noun out:
 *   \c rta_step, \c rta_reset, \c mon_report.
 * - The nouns: of rta, \c rta_graph_ (task graphs), \c rta_hw_ (the
 *   hardware model), \c rta_map_ (the mapping engine), \c rta_mapping_ (a
 *   computed mapping), \c rta_task_, \c rta_array_, \c rta_cost_ (the
 *   cost model), \c rta_policy_, \c rta_lb_ (a load-balancing context); of
 *   pia, \c pia_region_, \c pia_activity_, \c pia_actdata_,
 *   \c pia_partner_, \c pia_interval_; \c pia_assert_; of mon,
 *   \c mon_region_, \c mon_profile_.
 * - Opaque objects come in \c _create / \c _destroy pairs (\c _destroy of
 *   NULL does nothing); \c _ex marks the variant of a call that takes an
 *   options struct. Option, configuration and record structs are filled
 *   with defaults by <tt>\<type\>_init(&x)</tt>, which returns void and does
 *   nothing for NULL (\c rta_lb_config_init, \c pia_actdata_init, ...).
 * - Every call has one name. ballast implements the CRESTA project's
 *   runtime interface (Rta-C and the Performance Introspection API), whose
 *   names read verb first (\c rta_define_task, \c pia_get_region_data);
 *   ballast/cresta.h keeps them for code written against CRESTA, as static
 *   inline wrappers the compiler flags as deprecated. Nothing else in the
 *   API is deprecated, and the library exports no second name.
 *
 * \section errors Errors: one convention
 * - A call that can fail returns an \c int (or \c int64_t, or an id type:
 *   \c pia_regid_t, \c pia_act_t). A value >= 0 is success: 0, or the id,
 *   count, index, rank or 1/0 answer the call is named for. A negative value
 *   is a \c BALLAST_E* code (ballast/common.h; ballast_strerror()), never a
 *   bare -1: a NULL or invalid argument is \c BALLAST_EINVAL, an index out
 *   of range \c BALLAST_ERANGE, a key, name or id that does not exist
 *   \c BALLAST_ENOTFOUND. The same accessor answers the same way for the
 *   same fault.
 * - A result that is not a non-negative integer (a double, a record,
 *   several values) comes through output pointers, which are the last
 *   parameters: <tt>pia_region_data(id, &data)</tt>,
 *   <tt>rta_mapping_work(m, i, &work)</tt>, <tt>rta_task_find(key, &task)</tt>.
 *   The call returns the status; on an error the outputs are left unchanged
 *   unless the call says otherwise.
 * - A call returning a pointer (a name, a handle, a read-only record) returns
 *   NULL for a NULL or out-of-range argument and cannot fail otherwise; the
 *   name of a code or enum value is a static string, a placeholder
 *   ("unknown") for a value outside the list (ballast_strerror(),
 *   rta_strategy_name()). A call returning void cannot fail.
 * - The application's callbacks (rta_serial_t) return 0 on success and
 *   non-zero on failure where a failure can change what ballast does (the
 *   move is rolled back); a callback ballast cannot act on returns void
 *   (release()).
 * tools/checks/doc_convention.py checks these rules on the headers.
 */
#ifndef BALLAST_H
#define BALLAST_H
#include <ballast/common.h>
#include <ballast/mon.h>
#include <ballast/pia.h>
#include <ballast/pia_assert.h>
#include <ballast/rta.h>
#include <ballast/tool.h>
#endif
