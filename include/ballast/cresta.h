/**
 * \file ballast/cresta.h
 * \brief Compatibility: the names of the CRESTA interface (Rta-C and the
 * Performance Introspection API as the CRESTA deliverable prints them),
 * each a deprecated inline wrapper around ballast's one name for the call.
 *
 * Why this header exists: ballast implements the CRESTA runtime interface,
 * and code written against that interface (or its published listings) uses
 * these names. ballast's API has one name per call (see ballast.h, section
 * Naming); this header is the only place where a second name lives. It is
 * not included by ballast.h: include it explicitly. Every name below is
 * marked with the compiler's deprecated attribute, so a build says where
 * the CRESTA names are still used; nothing else in ballast's API is.
 *
 * The wrappers are static inline: the library exports none of these names
 * (a program built against them links to the one names). Each behaves as
 * the call it names, with CRESTA's argument order (output first in
 * pia_get_region_data() and pia_get_activity_data()) and CRESTA's way of
 * naming things (a task by its key, a load-balancing context by its
 * communicator).
 *
 * | CRESTA name                          | ballast's name                     |
 * |--------------------------------------|------------------------------------|
 * | pia_find_region_by_name(name)        | pia_region_find(name)              |
 * | pia_get_region_data(&data, id)       | pia_region_data(id, &data)         |
 * | pia_find_activity_by_name(name)      | pia_activity_find(name)            |
 * | pia_init_activity_data(&data)        | pia_actdata_init(&data)            |
 * | pia_get_activity_data(&data, act)    | pia_activity_data(act, &data)      |
 * | rta_define_task(parent, n, ...)      | rta_task_define(parent, n, ...)    |
 * | rta_begin_task(key)                  | rta_task_find(), rta_task_begin()  |
 * | rta_end_task(key)                    | rta_task_find(), rta_task_end()    |
 * | rta_register_array(task, ...)        | rta_task_array_register(task, ...) |
 * | rta_define_lb_context(comm, ...)     | rta_lb_create(comm, ...)           |
 * | rta_perform_load_balancing(&comm)    | rta_lb_find(), rta_lb_perform()    |
 * | ipm_region(IPM_START, name) (IPM)    | mon_region_begin(name)             |
 * | ipm_region(IPM_END, name) (IPM)      | mon_region_end(name)               |
 *
 * ipm_region() is IPM's region call, which the CRESTA listings use to open
 * regions; MPI_Pcontrol(1, name) and MPI_Pcontrol(-1, name) (the MPI
 * standard's hook, which ballast's wrappers see) do the same without a
 * second name in ballast's API.
 */
#ifndef BALLAST_CRESTA_H
#define BALLAST_CRESTA_H

#include <ballast/mon.h>
#include <ballast/pia.h>
#include <ballast/rta.h>

#ifdef __cplusplus
extern "C" {
#endif

/** \cond */
#define BALLAST_DEPRECATED(one) __attribute__((deprecated("CRESTA name: use " one)))
/** \endcond */

/** \brief CRESTA's name of pia_region_find().
 * \deprecated Use pia_region_find().
 * \return as pia_region_find(). */
BALLAST_DEPRECATED("pia_region_find")
static inline pia_regid_t pia_find_region_by_name(const char *name) {
  return pia_region_find(name);
}

/** \brief CRESTA's form of pia_region_data(), output first.
 * \deprecated Use pia_region_data(id, data).
 * \return as pia_region_data(). */
BALLAST_DEPRECATED("pia_region_data(id, data)")
static inline int pia_get_region_data(pia_regdata_t *data, pia_regid_t id) {
  return pia_region_data(id, data);
}

/** \brief CRESTA's name of pia_activity_find().
 * \deprecated Use pia_activity_find().
 * \return as pia_activity_find(). */
BALLAST_DEPRECATED("pia_activity_find")
static inline pia_act_t pia_find_activity_by_name(const char *name) {
  return pia_activity_find(name);
}

/** \brief CRESTA's name of pia_actdata_init().
 * \deprecated Use pia_actdata_init().
 * \return 0; BALLAST_EINVAL when data is NULL (CRESTA's call returns a
 *         status; pia_actdata_init() returns nothing). */
BALLAST_DEPRECATED("pia_actdata_init")
static inline int pia_init_activity_data(pia_actdata_t *data) {
  pia_actdata_init(data);
  return data ? 0 : BALLAST_EINVAL;
}

/** \brief CRESTA's form of pia_activity_data(), output first.
 * \deprecated Use pia_activity_data(act, data).
 * \return as pia_activity_data(). */
BALLAST_DEPRECATED("pia_activity_data(act, data)")
static inline int pia_get_activity_data(pia_actdata_t *data, pia_act_t act) {
  return pia_activity_data(act, data);
}

/** \brief CRESTA's name of rta_task_define().
 * \deprecated Use rta_task_define().
 * \return as rta_task_define(). */
BALLAST_DEPRECATED("rta_task_define")
static inline int rta_define_task(rta_task_t *parent, int n,
                                  const char *const *names,
                                  const rta_task_params_t *params,
                                  rta_task_t **out) {
  return rta_task_define(parent, n, names, params, out);
}

/** \brief CRESTA's begin_task(key): rta_task_begin() of the task found by
 * rta_task_find().
 * \deprecated Find the task once with rta_task_find(), then rta_task_begin().
 * \return 0; rta_task_find()'s codes (BALLAST_EINVAL, BALLAST_ENAMETOOLONG,
 *         BALLAST_ENOTFOUND); then as rta_task_begin(). */
BALLAST_DEPRECATED("rta_task_find and rta_task_begin")
static inline int rta_begin_task(const char *key) {
  rta_task_t *task;
  int rc = rta_task_find(key, &task);
  return rc ? rc : rta_task_begin(task);
}

/** \brief CRESTA's end_task(key): rta_task_end() of the task found by
 * rta_task_find().
 * \deprecated Find the task once with rta_task_find(), then rta_task_end().
 * \return 0; rta_task_find()'s codes (BALLAST_EINVAL, BALLAST_ENAMETOOLONG,
 *         BALLAST_ENOTFOUND); then as rta_task_end(). */
BALLAST_DEPRECATED("rta_task_find and rta_task_end")
static inline int rta_end_task(const char *key) {
  rta_task_t *task;
  int rc = rta_task_find(key, &task);
  return rc ? rc : rta_task_end(task);
}

/** \brief CRESTA's name of rta_task_array_register().
 * \deprecated Use rta_task_array_register().
 * \return as rta_task_array_register(). */
BALLAST_DEPRECATED("rta_task_array_register")
static inline int rta_register_array(rta_task_t *task, void **array,
                                     rta_type_t type, int ndims,
                                     const int64_t *dims) {
  return rta_task_array_register(task, array, type, ndims, dims);
}

/** \brief CRESTA's name of rta_lb_create().
 * \deprecated Use rta_lb_create().
 * \return as rta_lb_create(). */
BALLAST_DEPRECATED("rta_lb_create")
static inline int rta_define_lb_context(MPI_Comm comm, rta_task_t *root,
                                        const rta_lb_config_t *cfg,
                                        rta_lb_context_t **ctx,
                                        MPI_Comm *out_comm) {
  return rta_lb_create(comm, root, cfg, ctx, out_comm);
}

/** \brief CRESTA's perform_load_balancing(comm): rta_lb_perform() of the
 * context whose application communicator is \a *comm (rta_lb_find()).
 * \deprecated Keep the context rta_lb_create() gave and call rta_lb_perform().
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when no context owns
 *         \a *comm (nothing is done, the call is then not collective); then
 *         as rta_lb_perform(). */
BALLAST_DEPRECATED("rta_lb_perform")
static inline int rta_perform_load_balancing(MPI_Comm *comm) {
  rta_lb_context_t *ctx;
  if (!comm)
    return BALLAST_EINVAL;
  int rc = rta_lb_find(*comm, &ctx);
  return rc ? rc : rta_lb_perform(ctx, comm);
}

#ifndef IPM_START
/** IPM's ipm_region() operation that enters a region (MPI_Pcontrol's 1). */
#define IPM_START 1
#endif
#ifndef IPM_END
/** IPM's ipm_region() operation that leaves a region (MPI_Pcontrol's -1). */
#define IPM_END (-1)
#endif

/** \brief IPM's region call: ipm_region(IPM_START, name) is
 * mon_region_begin(name), ipm_region(IPM_END, name) is mon_region_end(name).
 * \deprecated Use mon_region_begin() and mon_region_end().
 * \return as mon_region_begin() / mon_region_end(); BALLAST_EINVAL for
 *         another \a op (with a warning naming it). */
BALLAST_DEPRECATED("mon_region_begin and mon_region_end")
static inline int ipm_region(int op, const char *name) {
  if (op == IPM_START)
    return mon_region_begin(name);
  if (op == IPM_END)
    return mon_region_end(name);
  ballast_log(BALLAST_LOG_WARN, "ipm_region: unknown operation %d (ignored)", op);
  return BALLAST_EINVAL;
}

#undef BALLAST_DEPRECATED

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_CRESTA_H */
