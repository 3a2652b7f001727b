/*
 * What the task runtime offers load balancing (src/lb), and nothing more: the
 * handful of operations a remap needs on tasks beyond the public API. lb
 * includes this header of task, never task_internal.h (the build links only
 * this file into lb's include path; tools/checks/layers.py checks the
 * includes and that every task__ symbol lb uses of task is declared here).
 *
 * - a task's cost window, exported into a move's descriptor and restored on
 *   the arriving task (or seeded by a warm start);
 * - a task's registered arrays: their shape, packed form and lead array,
 *   adopted on arrival, handed back or freed when the task leaves;
 * - defining an arriving task in its parent's existing stage, with its key
 *   hashed ahead, into slabs of records, and removing many tasks at once;
 * - the tree map with its task graph kept, the mapping's tasks, and the
 *   cost model's step and partner-volume reads.
 *
 * Callers must hold what they pass; none of these is thread safe.
 */
#ifndef BALLAST_TASK_HOOKS_H
#define BALLAST_TASK_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <ballast/rta.h>

/* ---- the cost window (cost.c) --------------------------------------------- */

/** Copies the task's cost samples, oldest first, into \a out (at most \a max
 *  of them); returns how many, and in *total the samples ever pushed. */
int task__cost_export(const rta_task_t *t, double *out, int max,
                      long long *total);
/** Restores a window of \a n samples (oldest first; the last rta window of
 *  them kept) on a task, \a total ever pushed. 0 or BALLAST_ENOMEM. */
int task__cost_restore(rta_task_t *t, const double *s, int n,
                       long long total);
/** The cost model's min_steps (rta_cost_config_t). */
int task__cost_min_steps(void);
/** 1 when rta_step() closed a step under monitoring and no task began since
 * (a second rta_step() now would close an empty step), else 0. */
int task__cost_step_closed(void);
/** rta_steps() at the task's last measured step; -1 when none. */
long long task__cost_sample_step(const rta_task_t *t);
/** Bytes sent per step to each rank of \a comm since the last baseline,
 * measured (placement and scaling). \a out has comm-size entries.
 * Returns 0 and *steps (steps since the baseline, 0 when nothing measured). */
int task__cost_partner_bytes(MPI_Comm comm, double *out, long long *steps);

/* ---- registered arrays (task_array.c) ------------------------------------- */

/** The task's only registered array when it is of a ballast element type,
 *  else NULL; fills its element type and bytes in memory. */
void **task__single_array(const rta_task_t *t, int *elem, size_t *bytes);
/** Dims of the task's first array; BALLAST_ENOTFOUND when it has none. */
int task__array_shape(const rta_task_t *t, int *ndims, int64_t *dims);
/** Stores \a mem (\a bytes, malloc'ed, adopted on success) as the task's
 *  single registered array of element \a elem with the given dims; frees
 *  what the slot held. BALLAST_ESIZE when the registration does not match. */
int task__adopt_array(rta_task_t *t, int elem, int ndims,
                      const int64_t *dims, void *mem, size_t bytes);
/** Frees every registered array of the task (free(*slot); *slot = NULL). */
void task__free_arrays(rta_task_t *t);
/** A task that left: the memory of each array of a ballast element type is
 *  handed to \a give (which owns it then), the rest freed; every slot NULL. */
void task__give_arrays(rta_task_t *t,
                       void (*give)(void *arg, void *mem, size_t bytes),
                           void *arg);
/** Around an arriving task's unpack callback (on = 1, then 0): arrays it
 *  registers then may be NULL, they receive what arrives. */
void task__arriving(rta_task_t *t, int on);
/**
 * Registers, on a task that arrived with arrays that no unpack callback
 * registered, the arrays rta holds itself: one per header of the packed
 * arrays in \a buf (\a len bytes; the payload of array \a lead, -1 none, is
 * not there: it travelled on its own), or (buf NULL) the single array of
 * ballast element \a elem and dims. BALLAST_ECALLBACK when an array has an
 * MPI datatype (only an unpack callback can register its receiver);
 * BALLAST_ESIZE for a malformed header; BALLAST_ENOMEM.
 */
int task__arrays_own(rta_task_t *t, const void *buf, size_t len, int lead,
                     int elem, int ndims, const int64_t *dims);
/** The lead array (the largest of a ballast element type with memory, -1
 * when none; its bytes in *bytes) travels on its own and is adopted on
 * arrival; the *_lead calls leave its payload out of the packed form (header
 * kept) and store \a lead_mem (lead_bytes, malloc'ed, adopted on success
 * only) as that array. lead -1: every array packed whole. The packed
 * arrays: one 8-byte count, then each array (header, elements, each rounded
 * up to 8). BALLAST_ESIZE when a buffer or the registrations do not match. */
int task__arrays_lead(const rta_task_t *t, size_t *bytes);
int task__arrays_packed_size_lead(const rta_task_t *t, int lead, size_t *bytes);
int task__arrays_pack_lead(const rta_task_t *t, int lead, void *buf, size_t len,
                           size_t *used);
int task__arrays_unpack_lead(rta_task_t *t, const void *buf, size_t len,
                             size_t *used, int lead, void *lead_mem,
                             size_t lead_bytes);

/* ---- arriving and leaving tasks (task.c, task_index.c) -------------------- */

/**
 * Defines one task that arrives from another process: like one child of
 * rta_task_define(), but in the existing stage \a stage of \a parent (no new
 * stage). BALLAST_EINVAL for a stage the parent does not have here.
 */
int task__adopt(rta_task_t *parent, const char *name,
                const rta_task_params_t *params, int stage,
                rta_task_t **out);
/** task__adopt() for a task whose full key \a key (its parent's key,
 *  '/', \a name) has hash \a hash, computed before (task__index_prefetch_key):
 *  the key is hashed once per arrival. A \a key that is not the task's is
 *  ignored (the hash is computed). */
int task__adopt_hashed(rta_task_t *parent, const char *name,
                       const rta_task_params_t *params, int stage,
                       const char *key, unsigned hash, rta_task_t **out);
/** Asks the CPU for the index's slot of \a key ahead of its lookup or
 *  definition; returns the key's hash for task__adopt_hashed. */
unsigned task__index_prefetch_key(const char *key);
/**
 * Removes n tasks (and their subtrees) at once, as n rta_task_remove() calls
 * would, in time linear in the tasks and their parents' children rather
 * than one scan of the parent's children per task. NULL entries are
 * skipped; a task listed twice, or under another listed task, goes once.
 * BALLAST_ESTATE (nothing removed) when one of them or a descendant is open.
 */
int task__remove_tasks(rta_task_t **v, int n);
/**
 * Between open and close, the records of tasks defined on this process are
 * carved from slabs of a few dozen (a remap's thousands of arrivals: a few
 * allocations, records adjacent in memory). A record in a slab is released
 * with its task like any other; its place serves a later arrival of its
 * size. The slabs are freed when, closed, they hold no task. Not nested.
 */
void task__slab_open(void);
void task__slab_close(void);

/* ---- the tree map (tree_map.c) -------------------------------------------- */

/** rta_task_map(); when \a graph is not NULL it also receives, on success,
 *  the task graph the engine mapped (vertex i = mapping entry i; the caller
 *  destroys it), for the load-balancing record. */
int task__map_keep(MPI_Comm comm, rta_task_t *root, const rta_hw_t *hw,
                   const rta_task_map_options_t *opts, rta_mapping_t **out,
                   rta_graph_t **graph);
/** This process's task of vertex \a i of a mapping of rta_task_map, as
 * the mapping's gather found it (NULL when this process has none): no key
 * lookup. Valid until a task is removed; the load balancer reads it during
 * the remap that made the mapping and keeps it current as tasks move
 * (task__mapping_set_task) for the local list it builds after the move. */
rta_task_t *task__mapping_task(const rta_mapping_t *m, int64_t i);
void task__mapping_set_task(rta_mapping_t *m, int64_t i, rta_task_t *t);

/* ---- prefetch, inline (a remap's loops over thousands of cold records) ----
 * The task record stays opaque: struct rta_task (task_internal.h) begins
 * with its array list and key and an array record with the application's
 * pointer, as the views below say (task_hooks.c checks both at compile
 * time), and what a remap reads of a record (its hot part, with a key of
 * up to 15 bytes; task_internal.h) lies in its first TASK__RECORD_BYTES. */

#define TASK__RECORD_BYTES 320
typedef struct task__array_view {
  void **slot;
} task__array_view_t;
typedef struct task__view {
  const task__array_view_t *arrays;
  const char *key;
} task__view_t;

#if defined(__GNUC__)
/* Inlined always: GCC finds a function whose only effect is a prefetch
 * pure, and removes its calls. */
#define TASK__ALWAYS_INLINE __attribute__((always_inline))
#else
#define TASK__ALWAYS_INLINE
#endif

/** Asks the CPU for the task's record ahead of use (\a deep: the record is
 *  already in cache; then its first array's record and the application's
 *  pointer to that array). Loops over thousands of tasks, whose records are
 *  cold, otherwise wait for each miss in turn; a hint, never a fault. */
static inline TASK__ALWAYS_INLINE void task__prefetch(const rta_task_t *t,
                                                      int deep) {
#if defined(__GNUC__)
  if (!t)
    return;
  if (!deep) {
    /* Written out: GCC removes a loop whose only effect is a prefetch. */
    const char *p = (const char *)t;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
    __builtin_prefetch(p + 192);
    __builtin_prefetch(p + 256);
    /* The key's end: a record not on a line's start (its own allocation)
     * spans one line more. */
    __builtin_prefetch(p + TASK__RECORD_BYTES - 1);
  } else {
    const task__view_t *v = (const task__view_t *)(const void *)t;
    const task__array_view_t *a = v->arrays;
    /* The key, wherever it lies: a long one follows the record's hot
     * lines (task_internal.h). */
    __builtin_prefetch(v->key);
    if (a) {
      /* When the array's record lies in the task's (most tasks: one array),
       * these lines are in cache already and the hints cost nothing. */
      __builtin_prefetch(a);
      __builtin_prefetch((const char *)a + 64);
      __builtin_prefetch(a->slot);
    }
  }
#else
  (void)t;
  (void)deep;
#endif
}

#endif /* BALLAST_TASK_HOOKS_H */
