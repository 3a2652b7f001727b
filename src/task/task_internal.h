/*
 * rta's task-side private header (task tree, registered arrays, cost model,
 * tree mapping). Never installed. The mapping engine has its own header.
 *
 * The tree is process-wide state owned by task.c; arrays by task_array.c;
 * the per-task cost window by cost.c. tree_map.c reads all three.
 */
#ifndef BALLAST_RTA_INTERNAL_H
#define BALLAST_RTA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uthash.h> /* the task index no longer uses it; lb's files do */

#include <ballast/mon.h>
#include <ballast/rta.h>

/* ---- registered arrays (task_array.c) ------------------------------------ */

typedef struct rta__array {
  void **slot;               /* the application's pointer, or &own */
  void *own;                 /* the pointer itself when rta registered the
                              * array for a task that arrived without an
                              * unpack callback registering it (rta frees it) */
  rta_type_t type;           /* elem, or an MPI_Type_dup owned by rta */
  int ndims;
  int64_t dims[RTA_MAX_DIMS];
  int64_t count;             /* product of dims */
  size_t elem_bytes;         /* packed bytes of one element */
  size_t mem_bytes;          /* bytes the array occupies in memory */
  struct rta__array *next;   /* registration order */
} rta__array_t;

/** Registers, on a task that arrived with arrays that no unpack callback
 *  registered, the arrays rta holds itself (slot = &own): one per header of
 *  the packed arrays in \a buf (\a len bytes; the payload of array \a lead,
 *  -1 none, is not there: it travelled on its own), or (buf NULL) the
 *  single array of ballast element \a elem and dims. BALLAST_ECALLBACK when an
 *  array has an MPI datatype (only an unpack callback can register its
 *  receiver); BALLAST_ESIZE for a malformed header; BALLAST_ENOMEM. */
int rta__arrays_own(rta_task_t *t, const void *buf, size_t len, int lead,
                    int elem, int ndims, const int64_t *dims);

/** Bytes of the header that precedes each packed array. */
#define RTA__ARRAY_HDR_BYTES (8 * (4 + RTA_MAX_DIMS))

/** Packed bytes of one array: header + elements, each rounded up to 8.
 * The packed arrays of a task: one 8-byte count, then each array. */
int rta__array_packed_size(const rta__array_t *a, size_t *bytes);
/** Packs every registered array of \a t into buf (len >= packed size). */
int rta__arrays_pack(const rta_task_t *t, void *buf, size_t len, size_t *used);
/**
 * Unpacks arrays into the arrays registered on \a t, in order: each must
 * have the packed type; its dims become the packed dims; the memory is
 * (re)allocated with malloc and stored through the application's pointer.
 * BALLAST_ESIZE when the buffer or the registrations do not match.
 */
int rta__arrays_unpack(rta_task_t *t, const void *buf, size_t len,
                       size_t *used);
/** Migration (lb_move.c): the lead array (the largest of a ballast element
 * type with memory, -1 when none; its bytes in *bytes) travels on its own and
 * is adopted on arrival; the *_lead variants leave its payload out of the
 * packed form (header kept) and store \a lead_mem (lead_bytes, malloc'ed,
 * adopted on success only) as that array. lead -1: as the plain ones. */
int rta__arrays_lead(const rta_task_t *t, size_t *bytes);
int rta__arrays_packed_size_lead(const rta_task_t *t, int lead, size_t *bytes);
int rta__arrays_pack_lead(const rta_task_t *t, int lead, void *buf, size_t len,
                          size_t *used);
int rta__arrays_unpack_lead(rta_task_t *t, const void *buf, size_t len,
                            size_t *used, int lead, void *lead_mem,
                            size_t lead_bytes);
/** Frees rta's records of the task's arrays (not the arrays). */
void rta__arrays_clear(rta_task_t *t);

/* ---- cost window (cost.c) ------------------------------------------------- */

typedef struct {
  double *ring;       /* capacity doubles, NULL until the first sample */
  int cap;            /* ring capacity */
  int n;              /* samples held (<= window) */
  int head;           /* next write position */
  long long total;    /* samples ever pushed */
  double last;        /* last sample */
  long long last_step; /* rta_steps() when the last sample was pushed */
  int *regions;       /* mon/PIA region ids this task was clocked under */
  int nregions, capregions;
} rta__cost_t;

void rta__cost_clear(rta__cost_t *c);
/** Called by task.c right after the task's region was entered. */
void rta__cost_on_begin(rta_task_t *t);

/* ---- the task ------------------------------------------------------------- */

struct rta_task {
  char *key;                 /* full path, in the record's own allocation */
  unsigned keyhash;          /* rta__key_hash of key (make_task) */
  const char *name;          /* points into key */
  rta_task_t *parent;
  rta_task_t **children;     /* definition order */
  int nchildren, capchildren;
  int nstages;               /* define_task calls on this task */
  int stage;                 /* stage under the parent, -1 for roots */
  rta_task_params_t params;  /* comm points to comm_copy */
  rta_comm_est_t *comm_copy; /* keys owned */
  uint64_t params_hash;      /* of nprocs, est_work, comm, state_size */
  void *data;                /* application pointer */
  int open;                  /* between begin and end */
  int in_region;             /* its mon region was entered at begin */
  unsigned char doomed, compacted; /* rta__remove_tasks' marks, 0 outside it */
  unsigned char arriving;    /* set by lb around the unpack callback of a
                              * move: arrays registered then may be NULL
                              * (they receive what arrives) */
  mon_region_handle_t region; /* created at the first begin */
  rta__array_t *arrays;      /* registration order */
  int narrays;
  int array0_used;           /* array0 holds a registered array */
  rta__array_t array0;       /* most tasks register one array: its record
                              * lives here, no allocation (task_array.c) */
  rta__cost_t cost;
  struct rta__task_slab *slab; /* the block holding the record, or NULL:
                                * its own allocation (task.c) */
};

/**
 * Removes n tasks (and their subtrees) at once, as n rta_task_remove() calls
 * would, in time linear in the tasks and their parents' children rather
 * than one scan of the parent's children per task. NULL entries are
 * skipped; a task listed twice, or under another listed task, goes once.
 * BALLAST_ESTATE (nothing removed) when one of them or a descendant is open.
 */
int rta__remove_tasks(rta_task_t **v, int n);

/* ---- the tasks by key (task_index.c) ---------------------------------------
 * Every defined task is in the index under its key's hash (keyhash). */

/** The hash the index files a key of \a len bytes under. */
unsigned rta__key_hash(const char *key, size_t len);
/** Room for \a more tasks beyond those indexed, so that as many
 *  rta__index_add calls cannot fail: 0 or BALLAST_ENOMEM. */
int rta__index_reserve(size_t more);
/** The task with \a key (hash \a hash), or NULL. */
rta_task_t *rta__index_find(const char *key, unsigned hash);
/** Indexes t under t->keyhash (room reserved before). */
void rta__index_add(rta_task_t *t);
/** Takes t out of the index. */
void rta__index_del(rta_task_t *t);
/** Takes every task out of the index, calling fn on each, and frees the
 *  index's memory. */
void rta__index_drain(void (*fn)(rta_task_t *));

/** Asks the CPU for the index's slot of t ahead of its removal; of \a key
 *  ahead of its lookup or definition, returning the key's hash
 *  (rta__key_hash) for the definition (rta__task_adopt_hashed). */
void rta__index_prefetch(const rta_task_t *t);
unsigned rta__index_prefetch_key(const char *key);

/** Asks the CPU for the task's record ahead of use (\a deep: the record is
 *  already in cache; then the first array's record when it is not in the
 *  task, and the application's pointer to that array). Loops over
 *  thousands of tasks, whose records are cold, otherwise wait for each
 *  miss in turn; a hint, never a fault. */
#if defined(__GNUC__)
/* Inlined always: GCC finds a function whose only effect is a prefetch
 * pure, and removes its calls. */
#define RTA__ALWAYS_INLINE __attribute__((always_inline))
#else
#define RTA__ALWAYS_INLINE
#endif
static inline RTA__ALWAYS_INLINE void rta__task_prefetch(const rta_task_t *t,
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
    __builtin_prefetch(p + 320);
    __builtin_prefetch(p + 384); /* the end of the record, the key */
  } else if (t->arrays) {
    if (t->arrays != &t->array0) {
      __builtin_prefetch(t->arrays);
      __builtin_prefetch((const char *)t->arrays + 64);
    }
    __builtin_prefetch(t->arrays->slot);
  }
#else
  (void)t;
  (void)deep;
#endif
}

/** Iterates over every task defined on this process (the index's order). */
rta_task_t *rta__task_first(void);
rta_task_t *rta__task_next(const rta_task_t *t);
/**
 * Defines one task that arrives from another process: like one child of
 * rta_define_task(), but in the existing stage \a stage of \a parent (no new
 * stage). BALLAST_EINVAL for a stage the parent does not have here.
 */
int rta__task_adopt(rta_task_t *parent, const char *name,
                    const rta_task_params_t *params, int stage,
                    rta_task_t **out);
/** rta__task_adopt() for a task whose full key \a key (its parent's key,
 *  '/', \a name) has hash \a hash, computed before (rta__index_prefetch_key):
 *  the key is hashed once per arrival. A \a key that is not the task's is
 *  ignored (the hash is computed). */
int rta__task_adopt_hashed(rta_task_t *parent, const char *name,
                           const rta_task_params_t *params, int stage,
                           const char *key, unsigned hash, rta_task_t **out);

/* ---- task descriptions (task_desc.c) -------------------------------------
 * What a destination needs to define a moving task: key, stage and
 * parameters (never callbacks or user pointers, which are local). */

/** Bytes of the task's description (a multiple of 8). */
int rta__task_desc_size(const rta_task_t *t, size_t *bytes);
/** Writes the description; BALLAST_ESIZE when len is too small. */
int rta__task_desc_pack(const rta_task_t *t, void *buf, size_t len,
                        size_t *used);
/**
 * Defines the described task here, under its parent (found by key; it must
 * be defined here, with the stage): BALLAST_ENOTFOUND without the parent,
 * BALLAST_EEXIST when the key is already defined, BALLAST_ESIZE for a
 * truncated or corrupt description.
 */
int rta__task_desc_unpack(const void *buf, size_t len, size_t *used,
                          rta_task_t **out);

/** This process's task of vertex \a i of a mapping of rta_map_tasks, as
 * the mapping's gather found it (NULL when this process has none): no key
 * lookup. Valid until a task is removed; the load balancer reads it during
 * the remap that made the mapping and keeps it current as tasks move
 * (rta__mapping_set_task) for the local list it builds after the move. */
rta_task_t *rta__mapping_task(const rta_mapping_t *m, int64_t i);
void rta__mapping_set_task(rta_mapping_t *m, int64_t i, rta_task_t *t);

/** Number of tasks defined on this process. */
int64_t rta__task_count(void);
/** Number of open tasks. */
int rta__open_depth(void);
/** Parameter hash of a parameter record (FNV-1a over a canonical form). */
uint64_t rta__params_hash(const rta_task_params_t *p);
/**
 * Between open and close, the records of tasks defined on this process are
 * carved from slabs of a few dozen (a remap's thousands of arrivals: a few
 * allocations, records adjacent in memory). A record in a slab is released
 * with its task like any other; a slab's memory is freed once it is closed
 * and its last task removed. Not nested.
 */
void rta__task_slab_open(void);
void rta__task_slab_close(void);
/** Validates a full key: 0, BALLAST_EINVAL or BALLAST_ENAMETOOLONG. */
int rta__check_key(const char *key);

/* ---- cost model reads (cost.c) -------------------------------------------- */

int rta__cost_min_steps(void);
/** Back to the default configuration, step counter and baselines (rta_reset). */
int rta__cost_reset_config(void);
/** Bytes sent per step to each rank of \a comm since the last baseline,
 * measured (placement and scaling). \a out has comm-size entries.
 * Returns 0 and *steps (steps since the baseline, 0 when nothing measured). */
int rta__cost_partner_bytes(MPI_Comm comm, double *out, long long *steps);
/** 1 when rta_step() closed a step under monitoring and no task began since
 * (a second rta_step() now would close an empty step), else 0. */
int rta__cost_step_closed(void);
/** rta_steps() at the task's last measured step; -1 when none. */
long long rta__cost_sample_step(const rta_task_t *t);
/** Resets the partner-volume baseline to now (after a mapping). */
int rta__cost_partner_rebase(MPI_Comm comm);

/* ---- the tree map (tree_map.c) --------------------------------------------- */

/** rta_map_tasks(); when \a graph is not NULL it also receives, on success,
 *  the task graph the engine mapped (vertex i = mapping entry i; the caller
 *  destroys it), for the load-balancing record. */
int rta__map_tasks_keep(MPI_Comm comm, rta_task_t *root, const rta_hw_t *hw,
                        const rta_map_tasks_options_t *opts, rta_mapping_t **out,
                        rta_graph_t **graph);


/* ---- the array allocator (array_alloc.c) ---------------------------------
 * Buffers of 1 MiB and more are 2 MiB aligned and offered transparent huge
 * pages; one of 1-2 MiB gets the whole 2 MiB (rta__large_len). Freed with
 * free(). */
#define RTA__HUGE_BYTES ((size_t)2 << 20)
/** Bytes rta__alloc_large(n) reserves: n, or a whole huge page for 1-2 MiB. */
size_t rta__large_len(size_t n);
/** Memory for a task array or a migration buffer of n bytes; NULL on failure. */
void *rta__alloc_large(size_t n);

#endif /* BALLAST_RTA_INTERNAL_H */
