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
  struct task__array *next;  /* registration order */
  /* What a remap reads of an array (describe, commit) in its first 64
   * bytes; the dims a state does not have and own after them. */
  rta_type_t type;           /* elem, or an MPI_Type_dup owned by rta */
  int ndims;
  int64_t count;             /* product of dims */
  size_t elem_bytes;         /* packed bytes of one element */
  size_t mem_bytes;          /* bytes the array occupies in memory */
  int64_t dims[RTA_MAX_DIMS];
  void *own;                 /* the pointer itself when rta registered the
                              * array for a task that arrived without an
                              * unpack callback registering it (rta frees it) */
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

/** Frees the task's cost window and regions, and zeroes them. */
void task__cost_clear(rta_task_t *t);
/** A zeroed ring of \a cap samples for \a t: in the record when it has
 *  room for one not in use, else allocated; NULL without memory. */
double *task__ring_alloc(rta_task_t *t, int cap);
/** Frees a ring of \a t (task__ring_alloc) unless it lies in the record. */
void task__ring_free(rta_task_t *t, double *r);
/** Called by task.c right after the task's region was entered. */
void task__cost_on_begin(rta_task_t *t);

/* ---- the task ------------------------------------------------------------- */

/* A task's record is split by how often it is read. The hot part (struct
 * rta_task, 320 bytes: five 64-byte lines) holds what a remap reads of
 * every moving task (describe, commit, removal, define_arrival, the tree's
 * compaction and index, the mapping's gather): the tree's links and marks
 * in the first line, the parameters next, a key of up to 15 bytes, then the
 * first array's record. One allocation holds, after it, a longer key, the
 * cold part (task__cold_t: what begin/end, rta_step and rarely called
 * accessors use) and, for a record carved from a slab during a remap, room
 * for a cost window (an arrival's window needs no allocation of its own).
 * A record whose cold part holds nothing but its name (cold_held 0: no
 * partners, region, regions or cost samples; most arrivals) is described
 * and removed without reading it. The record was 408 bytes and its key with
 * every field together: seven lines a task in each of a remap's loops. */

/** Bytes of a key (with its NUL) held in the hot part. */
#define TASK__KEY_INLINE 16

typedef struct task__cold {
  const char *name;          /* points into key */
  rta_comm_est_t *comm_copy; /* its keys after it, one allocation */
  mon_region_handle_t region; /* created at the first begin */
  task__cost_t cost;
  double *ring_room;         /* room for a window of ring_cap samples in the
                              * record's allocation (slab records), or NULL */
  int ring_cap;
} task__cold_t;

struct rta_task {
  /* line 0: the tree, the index and removal's marks */
  task__array_t *arrays;      /* registration order; first, as
                              * task__view_t says (task_hooks.h) */
  char *key;                 /* full path: key_inline, or in the record's
                              * allocation after it */
  rta_task_t *parent;
  rta_task_t **children;     /* definition order */
  unsigned keyhash;          /* task__key_hash of key (make_task) */
  int stage;                 /* stage under the parent, -1 for roots */
  int nchildren, nstages;    /* nstages: define_task calls on this task */
  int narrays;
  int capchildren;
  unsigned char doomed, compacted; /* task__remove_tasks' marks, 0 outside it */
  unsigned short place;      /* a place of a slab: its size class (task.c);
                              * 0: the record's own allocation */
  unsigned open : 1;         /* between begin and end */
  unsigned in_region : 1;    /* its mon region was entered at begin */
  unsigned arriving : 1;     /* set by lb around the unpack callback of a
                              * move: arrays registered then may be NULL
                              * (they receive what arrives) */
  unsigned array0_used : 1;  /* array0 holds a registered array */
  unsigned cold_held : 1;    /* cold holds more than the name (above) */
  /* lines 1-2: what describe and the mapping's gather read */
  rta_task_params_t params;  /* comm points to cold->comm_copy */
  void *data;                /* application pointer */
  uint64_t params_hash;      /* of nprocs, est_work, comm, state_size */
  task__cold_t *cold;        /* after the key, in the same allocation */
  char key_inline[TASK__KEY_INLINE]; /* key when it fits, else after the
                              * record: a short key lies in the hot lines,
                              * and so do the 32 bytes string functions
                              * read at once from its start (put after the
                              * record, those reads reached the cold part,
                              * one line more a task) */
  /* lines 3-4 */
  task__array_t array0;       /* most tasks register one array: its record
                              * lives here, no allocation (task_array.c) */
};

/** The cost window of \a t, marking its cold part as holding one. */
static inline task__cost_t *task__cost_of(rta_task_t *t) {
  t->cold_held = 1;
  return &t->cold->cost;
}

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
