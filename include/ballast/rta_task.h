/**
 * \file ballast/rta_task.h
 * \brief The task runtime of rta: the task tree, begin/end of tasks,
 * registered arrays, the cost model and the mapping of a task tree onto the
 * hardware. The hardware model and the mapping engine are declared in
 * ballast/rta_map.h, which this header includes; load balancing (which moves
 * tasks) is in ballast/rta_lb.h. Include ballast/rta.h for the whole module.
 *
 * \section rta_tree The task tree
 * A task is named by a path key such as \c "md/block_17": the key of its
 * parent, a slash, and the task's own name. Tasks without a parent are
 * roots (key = name). rta_task_define() adds \c n children to a parent; the
 * children of one call are \e parallel siblings, and successive calls on the
 * same parent form a \e sequence of \e stages (stage 0 is the first call).
 *
 * SPMD ownership: every process builds its own tree. A process defines the
 * tasks it owns (with their global keys) and every shared ancestor of them
 * (the context root at least). A leaf task is owned by the process that
 * defined it; a leaf defined on several processes is a shared leaf, allowed
 * only for multiprocessor tasks (nprocs > 1, at most nprocs definers).
 * Parameters of a task defined on several processes must agree; that is
 * checked when rta_task_map() gathers the tree (BALLAST_EMISMATCH).
 *
 * \section rta_cost The cost model
 * rta_task_begin() / rta_task_end() clock a task through mon as a region named by the task's
 * key. rta_step() closes one step (for example one time step of the
 * simulation): for every task it reads, through PIA's interval data, the
 * time spent in the task since the previous rta_step() and pushes it into a
 * moving window of the last \c window steps. Once \c min_steps steps are
 * measured the task's measured time per step replaces its estimate
 * (rta_task_cost()); until then the estimate serves. rta_task_map() turns
 * both into one scale (see there).
 *
 * \section rta_serial Serialisation
 * A task's state moves between processes in two parts: its registered arrays
 * (rta_task_array_register(); no callback needed on either side, see
 * rta_task_array_register()) and everything else, through the four callbacks of
 * rta_serial_t. On the source process rta calls
 * size() then pack() into a buffer of exactly that size; on the destination
 * unpack() with the same bytes; after the move is committed on every rank,
 * free() on the source. If the move is rolled back after a successful
 * unpack(), free() is called on the destination instead, so each unpack() is
 * matched by exactly one free() somewhere.
 * Function and user pointers are local to a process, so they are never sent:
 * a task without its own callbacks (all four NULL) uses those of its nearest
 * ancestor that has them, on the process where it runs. Defining the
 * callbacks on a shared ancestor (defined on every process) therefore makes
 * them available wherever a task moves.
 *
 * \section rta_threads Threads
 * The task tree and the cost model are process-wide and not thread safe:
 * define, begin/end and rta_step() from one thread (typically the one that
 * calls MPI). Read-only accessors may be called from any thread while no
 * other thread modifies the tree.
 */
#ifndef BALLAST_RTA_TASK_H
#define BALLAST_RTA_TASK_H
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <ballast/common.h>
#include <ballast/rta_map.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest task key (full path) in bytes, without the terminating NUL. */
#define RTA_KEY_MAX 255
/** Most dimensions a registered array may have. */
#define RTA_MAX_DIMS 8

/** A task of the tree (opaque). Handles stay valid until the task is removed. */
typedef struct rta_task rta_task_t;

/* ---- parameters ----------------------------------------------------------- */

/** One declared communication partner: the partner's full key and the bytes
 * this task sends it per step. */
typedef struct {
  const char *key; /**< partner's full path key */
  double bytes;    /**< bytes sent to the partner per step (>= 0) */
} rta_comm_est_t;

/**
 * \brief The serialisation callbacks of a task (replacing CRESTA Rta-C's one
 * callback <tt>int (*)(int opcode, void *buffer)</tt> by one per operation).
 * size(), pack() and unpack() return 0 on success or any non-zero value on
 * failure: rta then reports BALLAST_ECALLBACK and rolls the move back on
 * every rank. release() returns nothing: it runs when the outcome is
 * already decided (after a committed move, or while rolling one back), so
 * there is nothing a failure could change. Each receives the task, the
 * buffer and its length where there is one, and the user pointer given with
 * the callbacks.
 */
typedef struct {
  /** Bytes pack() will need for the task's state, excluding registered arrays. */
  int (*size)(rta_task_t *task, size_t *len, void *user);
  /** Writes the state into \a buf, exactly \a len bytes (the size() value). */
  int (*pack)(rta_task_t *task, void *buf, size_t len, void *user);
  /** On the destination: rebuilds the state from \a buf of \a len bytes. May
   * call rta_task_set_data(), and rta_task_array_register() on \a task to receive
   * the arrays into the application's own pointers (else rta holds them). */
  int (*unpack)(rta_task_t *task, const void *buf, size_t len, void *user);
  /** The "free" operation (named release so no malloc-debugging macro for
   * free() can clash with it): releases the task's state on this process,
   * after a committed move on the source, or after a rolled-back unpack on
   * the destination. Registered arrays are freed by rta, not here. It
   * cannot fail. */
  void (*release)(rta_task_t *task, void *user);
} rta_serial_t;

/** Parameters of a task. Start from RTA_TASK_PARAMS_INIT. */
typedef struct {
  int nprocs;                 /**< processors the task needs (>= 1; > 1: multiprocessor task) */
  double est_work;            /**< estimated work per step, any unit (>= 0) */
  int ncomm;                  /**< number of entries in \c comm */
  const rta_comm_est_t *comm; /**< declared partners; copied by rta_task_define() */
  size_t state_size;          /**< estimated bytes of state beyond registered arrays */
  rta_serial_t serial;        /**< callbacks; all NULL: inherit from the nearest ancestor */
  void *user;                 /**< passed to every callback */
} rta_task_params_t;

/** Defaults: one processor, work 1, no partners, no state, inherited callbacks. */
#define RTA_TASK_PARAMS_INIT {1, 1.0, 0, NULL, 0, {NULL, NULL, NULL, NULL}, NULL}

/* ---- the tree --------------------------------------------------------------- */

/**
 * \brief Adds \a n parallel children to \a parent (a new stage of it), or \a n
 * root tasks when \a parent is NULL.
 * \param parent the parent task, or NULL for roots.
 * \param n number of children (>= 1).
 * \param names the children's own names (no '/'); the key of each child is
 *        parent key + "/" + name. Copied.
 * \param params \a n parameter records (copied, including the partner keys),
 *        or NULL for RTA_TASK_PARAMS_INIT for every child.
 * \param out NULL, or an array of \a n that receives the new handles.
 * \return 0; BALLAST_EINVAL for n < 1, a NULL or empty name, a name with '/',
 * or bad parameters (nprocs < 1, negative or non-finite work or bytes, ncomm
 * < 0, a NULL/empty partner key, a task naming itself as partner);
 * BALLAST_ENAMETOOLONG when a key or partner key exceeds RTA_KEY_MAX;
 * BALLAST_EEXIST when a key is already defined on this process or repeats in
 * the call; BALLAST_ENOMEM. On error nothing is added and one warning names
 * the key. Not collective, not thread safe.
 */
BALLAST_API int rta_task_define(rta_task_t *parent, int n,
                                const char *const *names,
                                const rta_task_params_t *params,
                                rta_task_t **out);

/**
 * \brief Finds a task by its full key, in O(1).
 * \return 0 and \a *out; BALLAST_EINVAL for NULL arguments or an empty key;
 * BALLAST_ENAMETOOLONG; BALLAST_ENOTFOUND when no task of that key is defined
 * on this process (\a *out is then NULL).
 */
BALLAST_API int rta_task_find(const char *key, rta_task_t **out);

/**
 * \brief Removes a task and its whole subtree from this process's tree,
 * releasing rta's records (not the application's arrays or state).
 * Handles to removed tasks become invalid.
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ESTATE when the task or one of
 * its descendants is between begin and end.
 */
BALLAST_API int rta_task_remove(rta_task_t *task);

/**
 * \brief Removes every task and resets the cost model and its configuration.
 * Call before MPI_Finalize to free everything. \return 0 (success; it
 * cannot fail).
 */
BALLAST_API int rta_reset(void);

/** \brief The task's full key (owned by rta, valid while the task exists),
 * or NULL for NULL. */
BALLAST_API const char *rta_task_key(const rta_task_t *task);
/** \brief The task's own name (last component of the key), or NULL for NULL. */
BALLAST_API const char *rta_task_name(const rta_task_t *task);
/** \brief The parent, or NULL for a root and for NULL. */
BALLAST_API rta_task_t *rta_task_parent(const rta_task_t *task);
/** \brief The task's children on this process.
 * \return the number of children defined on this process; BALLAST_EINVAL
 *         for NULL. */
BALLAST_API int rta_task_nchildren(const rta_task_t *task);
/** \brief The i-th child in definition order, or NULL when out of range. */
BALLAST_API rta_task_t *rta_task_child(const rta_task_t *task, int i);
/** \brief The task's stages on this process.
 * \return the number of stages (rta_task_define() calls) under the task on
 *         this process; BALLAST_EINVAL for NULL. */
BALLAST_API int rta_task_nstages(const rta_task_t *task);
/** \brief The stage of the task under its parent.
 * \return the stage index (0-based); BALLAST_ENOTFOUND for a root, which has
 *         no parent; BALLAST_EINVAL for NULL. */
BALLAST_API int rta_task_stage(const rta_task_t *task);
/**
 * \brief The task's parameters as stored by rta (read-only; the partner keys
 * point into rta's copies), or NULL for NULL.
 */
BALLAST_API const rta_task_params_t *rta_task_params(const rta_task_t *task);
/** \brief Attaches an application pointer to the task (rta never reads it). */
BALLAST_API void rta_task_set_data(rta_task_t *task, void *data);
/** \brief The application pointer attached with rta_task_set_data(), or NULL. */
BALLAST_API void *rta_task_data(const rta_task_t *task);
/**
 * \brief The callbacks that serve the task on this process: its own, else
 * those of its nearest ancestor that has some. \return 0 and fills \a ops and
 * \a user; BALLAST_ENOTFOUND when neither the task nor an ancestor has any.
 */
BALLAST_API int rta_task_serial(const rta_task_t *task, rta_serial_t *ops,
                                void **user);

/* ---- begin / end ------------------------------------------------------------ */

/**
 * \brief Marks the start of the task's execution. The task becomes the
 * innermost open task and is clocked through mon as the region named by its
 * key. (A key is turned into a handle once with rta_task_find().)
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ESTATE when the task is already
 * open, and before MPI_Init or after MPI_Finalize (nothing could be
 * measured; the task is not opened). Errors log one warning naming the key.
 * Not thread safe.
 */
BALLAST_API int rta_task_begin(rta_task_t *task);
/**
 * \brief Marks the end of the task's execution.
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ESTATE outside
 * MPI_Init..MPI_Finalize; BALLAST_EMISMATCH when the task is not open, is not
 * the innermost open task, or a region opened inside it is still open (the
 * open tasks stay as they were).
 */
BALLAST_API int rta_task_end(rta_task_t *task);
/** \brief The innermost open task, or NULL. */
BALLAST_API rta_task_t *rta_task_current(void);

/* ---- registered arrays ------------------------------------------------------ */

/** ballast's own element types, for arrays registered without an MPI datatype. */
typedef enum {
  RTA_BYTE = 1,
  RTA_CHAR,
  RTA_INT8,
  RTA_UINT8,
  RTA_INT16,
  RTA_UINT16,
  RTA_INT32,
  RTA_UINT32,
  RTA_INT64,
  RTA_UINT64,
  RTA_INT,
  RTA_LONG,
  RTA_FLOAT,
  RTA_DOUBLE,
  RTA_COMPLEX_FLOAT,  /**< float _Complex */
  RTA_COMPLEX_DOUBLE, /**< double _Complex */
  RTA_ELEM_END_       /**< not a type: one past the last */
} rta_elem_t;

/** Which member of rta_type_t is meant. */
typedef enum { RTA_TYPE_ELEM = 1, RTA_TYPE_MPI = 2 } rta_type_kind_t;

/** An element type: a ballast element type or an MPI datatype. Build it with
 * rta_type_elem() or rta_type_mpi(). */
typedef struct {
  rta_type_kind_t kind;      /**< which member of \c u holds the type */
  /** The type itself, as \c kind says. */
  union {
    rta_elem_t elem;         /**< a ballast element type (RTA_TYPE_ELEM) */
    MPI_Datatype mpi;        /**< an MPI datatype (RTA_TYPE_MPI) */
  } u;
} rta_type_t;

/** \brief An rta_type_t for a ballast element type. */
static inline rta_type_t rta_type_elem(rta_elem_t e) {
  rta_type_t t;
  t.kind = RTA_TYPE_ELEM;
  t.u.elem = e;
  return t;
}
/** \brief An rta_type_t for an MPI datatype (predefined or committed derived). */
static inline rta_type_t rta_type_mpi(MPI_Datatype d) {
  rta_type_t t;
  t.kind = RTA_TYPE_MPI;
  t.u.mpi = d;
  return t;
}

/** \brief Size in bytes of one element of a ballast element type, 0 if invalid. */
BALLAST_API size_t rta_elem_size(rta_elem_t e);

/**
 * \brief Registers an array as part of the task's state, so rta moves it
 * with the task without any callback.
 *
 * rta keeps \a array (the address of the application's pointer) and, after
 * a move, stores the array's new address through it. The array holds
 * dims[0] x ... x dims[ndims-1] elements of \a type, contiguous (the last
 * dimension fastest; only the element count matters for moving it). It must
 * be allocated with malloc() (or calloc/realloc, or rta_array_alloc()): at a
 * move rta releases it on the source (free(), or keeps the memory for later
 * arrivals in the load-balancing context's pool, see rta_lb.h) and
 * allocates the new one on the destination as rta_array_alloc() does
 * (free() releases it). The dims are
 * copied: after resizing, unregister and register again. An MPI datatype is
 * duplicated (MPI_Type_dup), so the application may free its own; it must be
 * committed and have a non-negative true lower bound.
 * Arrays are packed in registration order. On a destination rta registers
 * the arriving arrays itself (no callback needed; read them with
 * rta_task_array()), unless the arriving task's unpack() callback registers
 * the pointers that receive them (same order, types; needed for MPI
 * datatypes): see "Moving a task" in rta_lb.h. When an array leaves, rta
 * frees it and sets the pointer it was registered with to NULL.
 * \return 0; BALLAST_EINVAL for NULL task or array, ndims outside
 * 1..RTA_MAX_DIMS, NULL dims, a negative dimension, an invalid element type
 * or MPI_DATATYPE_NULL, and for a NULL \a *array whose dims give elements
 * (except in an arriving task's unpack callback, where a NULL array
 * receives what arrives); the warning names the task and the array; BALLAST_EEXIST when \a array is already
 * registered on the task; BALLAST_EOVERFLOW when the byte size overflows;
 * BALLAST_ENOTSUP for a datatype with a negative true lower bound;
 * BALLAST_EMPI; BALLAST_ENOMEM. Not collective, not thread safe.
 */
BALLAST_API int rta_task_array_register(rta_task_t *task, void **array,
                                   rta_type_t type, int ndims,
                                   const int64_t *dims);

/**
 * \brief Memory for a large registered array, allocated the way rta
 * allocates arriving arrays: below 1 MiB plain malloc(); from 1 MiB aligned
 * to 2 MiB (a whole 2 MiB page for 1-2 MiB) and offered transparent huge
 * pages where Linux has them (madvise). Release it with free().
 *
 * Open MPI's single-copy transport pins the sender's pages one by one, so an
 * array on huge pages moves faster at a remap (15-19 against 9-11 GB/s
 * between two ranks of a 2-core VM). Arrays that arrived through rta are
 * already such memory; this function gives it to the application's first
 * arrays too. Optional: any malloc'ed array may be registered.
 * \return the memory, uninitialised, or NULL when out of memory (bytes == 0
 * returns a unique pointer, as malloc(1)). Thread safe.
 */
BALLAST_API void *rta_array_alloc(size_t bytes);

/**
 * \brief Forgets a registered array (the array itself is left alone).
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when \a array is not
 * registered on the task.
 */
BALLAST_API int rta_task_array_unregister(rta_task_t *task, void **array);

/**
 * \brief The dims of a registered array of \a task (after a move: the dims it
 * arrived with).
 * \return the number of dims (1..RTA_MAX_DIMS) and fills \a dims (room for
 * RTA_MAX_DIMS); BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when \a array is
 * not registered on the task.
 */
BALLAST_API int rta_task_array_dims(const rta_task_t *task, void **array,
                                    int64_t *dims);

/**
 * \brief The i-th registered array of a task (registration order): the
 * address of the pointer rta keeps up to date, to read the array through
 * (<tt>double *x = *(double **)slot</tt>) and to pass to
 * rta_task_array_dims() and rta_task_array_unregister(). For an array the
 * application registered, its own pointer's address; for an array that
 * arrived with a task whose arrays no unpack callback registered, a pointer
 * rta holds (and frees when the array leaves again, is unregistered or the
 * task removed).
 * \return 0 and \a *slot; BALLAST_EINVAL for NULL or i < 0;
 * BALLAST_ENOTFOUND when the task has fewer than i + 1 arrays.
 */
BALLAST_API int rta_task_array(const rta_task_t *task, int i, void ***slot);

/** \brief The arrays registered on the task.
 * \return the number of arrays registered on the task; BALLAST_EINVAL for
 *         NULL. */
BALLAST_API int rta_task_narrays(const rta_task_t *task);

/**
 * \brief Bytes the task's registered arrays take once packed for a move:
 * an 8-byte count, then for each array a fixed header of 96 bytes (type,
 * dims) and its elements (count x element size for ballast types, what
 * MPI_Pack_size says for MPI datatypes), rounded up to 8 bytes. The size callback's bytes are not included.
 * \return 0 and \a *bytes; BALLAST_EINVAL for NULL; BALLAST_EMPI when MPI
 * cannot size a datatype; BALLAST_EOVERFLOW.
 */
BALLAST_API int rta_task_arrays_packed_size(const rta_task_t *task,
                                            size_t *bytes);

/* ---- cost model ----------------------------------------------------------- */

/** Cost model configuration. */
typedef struct {
  int window;    /**< steps in the moving average (>= 1; default 10) */
  int min_steps; /**< measured steps before measurements replace estimates
                      (1..window; default 3) */
} rta_cost_config_t;

/**
 * \brief Sets the cost model configuration. Windows already holding more
 * steps than the new window keep only the most recent ones.
 * \return 0; BALLAST_EINVAL for NULL, window < 1, or min_steps outside
 * 1..window. Not thread safe.
 */
BALLAST_API int rta_cost_config_set(const rta_cost_config_t *cfg);
/** \brief The current configuration. \return 0; BALLAST_EINVAL for NULL. */
BALLAST_API int rta_cost_config_get(rta_cost_config_t *cfg);
/** \brief Sets only the window (min_steps is clamped to it).
 * \return as rta_cost_config_set(). */
BALLAST_API int rta_cost_set_window(int steps);

/**
 * \brief Closes one step of the cost model.
 *
 * Call it once per application step on every process, outside any task, at
 * the same point of the step each time (rta's load balancing calls it too
 * when it runs, unless the application called it since the previous
 * load-balancing call and no task began since: then that step is the one
 * judged, so calling both rta_step() and rta_lb_perform() judges
 * as one call does). For every task defined on this process that ran during the
 * step, the time spent in it since the previous rta_step() (wall time minus
 * time inside MPI: the task's own work, not waiting for slower partners;
 * capped by the thread's CPU time in the task when mon records it, so a
 * preemption on a shared core does not count as work) enters its moving
 * window. A task that did not run in the step is left
 * alone. Time spent in a task before its first rta_step() counts in the
 * first step.
 * \return 0; BALLAST_ESTATE when a task is still open (nothing is recorded)
 * and outside MPI_Init..MPI_Finalize;
 * BALLAST_EDISABLED when monitoring is switched off (estimates serve);
 * other negative codes from PIA. Not collective, not thread safe.
 */
BALLAST_API int rta_step(void);

/** \brief The steps closed so far.
 * \return the number of steps closed by rta_step() so far (the first mark
 *         included). */
BALLAST_API long long rta_steps(void);

/** What the cost model knows of one task. */
typedef struct {
  double est_work;  /**< the declared estimate */
  double avg_time;  /**< moving average of the measured seconds per step (0 when none) */
  double last_time; /**< seconds in the last measured step */
  int nsteps;       /**< measured steps in the window (<= window) */
  long long total_steps; /**< measured steps since the task was defined */
  int measured;     /**< 1 when nsteps >= min_steps: avg_time replaces est_work */
} rta_task_cost_t;

/**
 * \brief The cost model's view of one task on this process.
 * \return 0; BALLAST_EINVAL for NULL.
 */
BALLAST_API int rta_task_cost(const rta_task_t *task, rta_task_cost_t *out);

/* ---- mapping a task tree ------------------------------------------------ */

/** Options of rta_task_map(). Fill with rta_task_map_options_init(). */
typedef struct {
  rta_strategy_t strategy;   /**< default RTA_MAP_TWOPHASE */
  int fresh;                 /**< 1: ignore where tasks live now (no migration
                                  cost, nothing counted as migrated); 0 (default):
                                  remap from the current owners */
  rta_map_options_t engine;  /**< the mapping engine's options (balance,
                                  steps between remaps, seed) */
} rta_task_map_options_t;

/** \brief Fills \a o with the defaults (two-phase, remap, engine defaults). */
BALLAST_API void rta_task_map_options_init(rta_task_map_options_t *o);

/** The result of rta_task_map(): one entry per leaf task, sorted by key (opaque). */
typedef struct rta_mapping rta_mapping_t;

/**
 * \brief Gathers the leaf tasks under \a root from every process of \a comm,
 * with their costs, builds the global task graph and maps it onto \a hw.
 *
 * Collective over \a comm: every process calls it with the same \a hw
 * description, the same options and its own handle of the shared root
 * (defined on every process with the same key). The leaves (tasks under
 * \a root without children on any process) become the vertices, sorted by
 * key, so the graph and the result are the same on every process.
 *
 * Costs. Vertex weight = measured seconds per step (rta_task_cost()) where
 * the task is measured, else its estimate scaled by sum(measured) /
 * sum(estimates) over the measured tasks (raw estimates when none is).
 * Edge weight = bytes per step. In placement mode (every process owns
 * exactly one leaf) the bytes are measured per pair of processes from mon's
 * partner volumes since the previous rta_task_map() (or since the cost
 * model started), divided by the steps in between; otherwise they are the
 * declared rta_comm_est_t bytes, scaled per process by the bytes it was
 * measured to send over the bytes its tasks declare to send to tasks on
 * other processes. Declared figures serve whenever nothing was measured.
 * State size = registered arrays + the declared state_size.
 *
 * With RTA_MAP_TWOPHASE every process takes part in the mapping (phase 2 of
 * each node runs on one of them, rta_map_graph_par()); other strategies are
 * computed on rank 0 and broadcast.
 *
 * rta's own MPI traffic here is counted apart from the application's.
 *
 * \param comm the context's communicator; its size must equal the slots of \a hw
 *        (slot = rank in \a comm).
 * \param root this process's handle of the shared root.
 * \param hw the hardware model (rta_hw_discover() on \a comm).
 * \param opts NULL for the defaults of rta_task_map_options_init().
 * \param out receives the mapping (same on every process); destroy it with
 *        rta_mapping_destroy().
 * \return 0; BALLAST_EINVAL for NULL arguments or a size mismatch between
 * \a comm and \a hw; BALLAST_EMISMATCH when processes disagree on the root
 * key or a task defined on several processes has different parameters (one
 * warning, on every rank, names the key, two of the ranks and the
 * parameter); BALLAST_EEXIST when a
 * single-processor leaf is defined on several processes, or a multiprocessor
 * one on more than nprocs; BALLAST_ENOTFOUND when a declared partner key is
 * not a leaf under \a root, and when no process has a leaf under \a root;
 * BALLAST_EREMOTE when another process failed (its own code is logged
 * there); BALLAST_EMPI; BALLAST_ENOMEM; the mapping
 * engine's codes. Every process fails or none does: the process that failed
 * returns its own code, the others BALLAST_EREMOTE (or the same code, where
 * every process found the same problem).
 */
BALLAST_API int rta_task_map(MPI_Comm comm, rta_task_t *root,
                             const rta_hw_t *hw,
                             const rta_task_map_options_t *opts,
                             rta_mapping_t **out);

/** \brief Destroys a mapping; NULL does nothing. */
BALLAST_API void rta_mapping_destroy(rta_mapping_t *m);
/** \brief The mapping's leaf tasks.
 * \return the number of leaf tasks (vertices) in the mapping; BALLAST_EINVAL
 *         for NULL. */
BALLAST_API int64_t rta_mapping_ntasks(const rta_mapping_t *m);
/** \brief Key of task \a i (sorted order), NULL when out of range. */
BALLAST_API const char *rta_mapping_key(const rta_mapping_t *m, int64_t i);
/** \brief Finds the task of \a key (binary search).
 * \return its index (>= 0); BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when
 *         the mapping has no such task. */
BALLAST_API int64_t rta_mapping_find(const rta_mapping_t *m, const char *key);
/** \brief The rank (slot) the mapping assigns to task \a i.
 * \return the rank (>= 0); BALLAST_EINVAL for NULL; BALLAST_ERANGE for \a i
 *         outside 0 .. rta_mapping_ntasks() - 1 (the same for every
 *         rta_mapping_ accessor below that takes an index). */
BALLAST_API int rta_mapping_slot(const rta_mapping_t *m, int64_t i);
/** \brief The rank that owns task \a i now (lowest definer).
 * \return the rank (>= 0); BALLAST_EINVAL for NULL; BALLAST_ERANGE. */
BALLAST_API int rta_mapping_owner(const rta_mapping_t *m, int64_t i);
/** \brief The processes that defined task \a i.
 * \return their number: 1, or up to nprocs for a multiprocessor task;
 *         BALLAST_EINVAL for NULL; BALLAST_ERANGE. */
BALLAST_API int rta_mapping_ndefiners(const rta_mapping_t *m, int64_t i);
/** \brief The nprocs of task \a i.
 * \return the number of processes the task asked for; BALLAST_EINVAL for
 *         NULL; BALLAST_ERANGE. */
BALLAST_API int rta_mapping_nprocs(const rta_mapping_t *m, int64_t i);
/** \brief The vertex weight used for task \a i (see rta_task_map()).
 * \return 0 and \a *out; BALLAST_EINVAL for NULL \a m or \a out;
 *         BALLAST_ERANGE (\a *out unchanged). */
BALLAST_API int rta_mapping_work(const rta_mapping_t *m, int64_t i, double *out);
/** \brief The state bytes used for task \a i.
 * \return 0 and \a *out; BALLAST_EINVAL for NULL \a m or \a out;
 *         BALLAST_ERANGE (\a *out unchanged). */
BALLAST_API int rta_mapping_state_bytes(const rta_mapping_t *m, int64_t i,
                                        double *out);
/** \brief The mapping's mode.
 * \return 1 when the mapping was computed in placement mode (one leaf per
 *         rank), 0 otherwise; BALLAST_EINVAL for NULL. */
BALLAST_API int rta_mapping_placement(const rta_mapping_t *m);
/** \brief Quality figures of the mapping (computed by the mapping engine), or
 * NULL. The figures are the same on every rank except the seconds* timings,
 * which may be the local rank's (two-phase maps phase 2 in parallel). */
BALLAST_API const rta_map_quality_t *rta_mapping_quality(const rta_mapping_t *m);

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_RTA_TASK_H */
