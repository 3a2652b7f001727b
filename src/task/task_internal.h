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

#include <ballast/mon.h>
#include <ballast/rta.h>

#include "task/task_hooks.h" /* what lb may use; declared there once */

/* ---- registered arrays (task_array.c) ------------------------------------ */

typedef struct task__array {
  void **slot;               /* the application's pointer, or &own; first,
                              * as task__array_view_t says (task_hooks.h) */
  void *own;                 /* the pointer itself when rta registered the
                              * array for a task that arrived without an
                              * unpack callback registering it (rta frees it) */
  rta_type_t type;           /* elem, or an MPI_Type_dup owned by rta */
  int ndims;
  int64_t dims[RTA_MAX_DIMS];
  int64_t count;             /* product of dims */
  size_t elem_bytes;         /* packed bytes of one element */
  size_t mem_bytes;          /* bytes the array occupies in memory */
  struct task__array *next;   /* registration order */
} task__array_t;


/** Bytes of the header that precedes each packed array. */
#define TASK__ARRAY_HDR_BYTES (8 * (4 + RTA_MAX_DIMS))

/** Packed bytes of one array: header + elements, each rounded up to 8.
 * The packed arrays of a task: one 8-byte count, then each array. */
int task__array_packed_size(const task__array_t *a, size_t *bytes);
/** Packs every registered array of \a t into buf (len >= packed size). */
int task__arrays_pack(const rta_task_t *t, void *buf, size_t len, size_t *used);
/**
 * Unpacks arrays into the arrays registered on \a t, in order: each must
 * have the packed type; its dims become the packed dims; the memory is
 * (re)allocated with malloc and stored through the application's pointer.
 * BALLAST_ESIZE when the buffer or the registrations do not match.
 */
int task__arrays_unpack(rta_task_t *t, const void *buf, size_t len,
                        size_t *used);
/** Frees rta's records of the task's arrays (not the arrays). */
void task__arrays_clear(rta_task_t *t);

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
} task__cost_t;

void task__cost_clear(task__cost_t *c);
/** Called by task.c right after the task's region was entered. */
void task__cost_on_begin(rta_task_t *t);

/* ---- the task ------------------------------------------------------------- */

struct rta_task {
  task__array_t *arrays;      /* registration order; first, as
                              * task__view_t says (task_hooks.h) */
  char *key;                 /* full path, in the record's own allocation */
  unsigned keyhash;          /* task__key_hash of key (make_task) */
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
  unsigned char doomed, compacted; /* task__remove_tasks' marks, 0 outside it */
  unsigned char arriving;    /* set by lb around the unpack callback of a
                              * move: arrays registered then may be NULL
                              * (they receive what arrives) */
  mon_region_handle_t region; /* created at the first begin */
  int narrays;
  int array0_used;           /* array0 holds a registered array */
  task__array_t array0;       /* most tasks register one array: its record
                              * lives here, no allocation (task_array.c) */
  task__cost_t cost;
  struct task__slab *slab; /* non-NULL: the record is a place in a slab
                                * of records; NULL: its own allocation
                                * (task.c) */
};


/* ---- the tasks by key (task_index.c) ---------------------------------------
 * Every defined task is in the index under its key's hash (keyhash). */

/** The hash the index files a key of \a len bytes under. */
unsigned task__key_hash(const char *key, size_t len);
/** Room for \a more tasks beyond those indexed, so that as many
 *  task__index_add calls cannot fail: 0 or BALLAST_ENOMEM. */
int task__index_reserve(size_t more);
/** The task with \a key (hash \a hash), or NULL. */
rta_task_t *task__index_find(const char *key, unsigned hash);
/** Indexes t under t->keyhash (room reserved before). */
void task__index_add(rta_task_t *t);
/** Takes t out of the index. */
void task__index_del(rta_task_t *t);
/** Takes every task out of the index, calling fn on each, and frees the
 *  index's memory. */
void task__index_drain(void (*fn)(rta_task_t *));

/** Asks the CPU for the index's slot of t ahead of its removal (of a key:
 *  task__index_prefetch_key, task_hooks.h). */
void task__index_prefetch(const rta_task_t *t);

/** Iterates over every task defined on this process (the index's order). */
rta_task_t *task__first(void);
rta_task_t *task__next(const rta_task_t *t);

/** Number of tasks defined on this process. */
int64_t task__count(void);
/** Number of open tasks. */
int task__open_depth(void);
/** Parameter hash of a parameter record (FNV-1a over a canonical form). */
uint64_t task__params_hash(const rta_task_params_t *p);
/** Validates a full key: 0, BALLAST_EINVAL or BALLAST_ENAMETOOLONG. */
int task__check_key(const char *key);

/* ---- cost model reads (cost.c) -------------------------------------------- */

/** Back to the default configuration, step counter and baselines (rta_reset). */
int task__cost_reset_config(void);
/** Resets the partner-volume baseline to now (after a mapping). */
int task__cost_partner_rebase(MPI_Comm comm);




#endif /* BALLAST_RTA_INTERNAL_H */
