/*
 * Private to mon's core (clock.c, thread.c, table.c, aggregate.c,
 * partners.c, regions.c, papi.c, report.c, profile.c, init.c). The wrappers
 * and pia use mon_internal.h only.
 *
 * Memory model of the recorded data:
 *  - every thread owns one mon__tls_t and is its only writer;
 *  - counters that other threads read (aggregates, region statistics, the
 *    running MPI time) are written with relaxed atomic stores and read with
 *    relaxed atomic loads: a reader sees each counter whole, never torn;
 *  - arrays indexed by region id are two-level "chunked" arrays: a fixed
 *    top-level array of chunk pointers, chunks allocated once and published
 *    with a release store. Nothing a reader can reach is ever moved or freed
 *    before teardown;
 *  - hash tables a reader must search (partners) take a per-thread mutex on
 *    insert and on read only; the writer's lookup of an existing entry and its
 *    counter updates take no lock.
 */
#ifndef BALLAST_MON_CORE_H
#define BALLAST_MON_CORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/dist.h"
#include "mon/mon_internal.h"
#include "mon/mon_acts.h"

#define MON__TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- chunked arrays indexed by region id ---------------------------------- */

#define MON__CHUNK_BITS 10
#define MON__CHUNK (1 << MON__CHUNK_BITS)
#define MON__MAX_CHUNKS 16384 /* 16 M regions */
#define MON__MAX_REGIONS (MON__CHUNK * MON__MAX_CHUNKS)

/* ---- per-thread records ---------------------------------------------------- */

/** Running aggregate of one activity (ticks, bytes). tmin = UINT64_MAX when empty. */
typedef struct {
  uint64_t ncalls, nbytes, tsum, tmin, tmax;
} mon__agg_t;

/** Per-thread statistics of one region (closed instances only). */
typedef struct {
  uint64_t count, wticks, mticks, cpu_ns;
} mon__regacc_t;

typedef struct mon__rep mon__rep_t;

/** An open region on a thread's stack. */
typedef struct {
  int id;
  uint64_t t0, m0, c0;
  long long hw0[4];
  unsigned extras;   /* the region extras (mon__region_extras_update) at entry */
  mon__rep_t *rep;   /* the repeated region's series (thread 0), else NULL */
  uint64_t b0, n0;   /* with rep: the thread's MPI bytes and calls at entry */
} mon__frame_t;

typedef struct mon__sig mon__sig_t;
typedef struct mon__pentry mon__pentry_t;

/* A per-thread block allocator (arena.c): entries of one size, freed all
 * together. Zero-initialised it is empty. */
typedef struct {
  struct mon__arena_block *blocks; /* list of blocks, newest first */
  char *next;                      /* next free entry of the newest block */
  unsigned left;                   /* free entries left in it */
} mon__arena_t;

/** Next entry of \a size bytes (a multiple of its alignment), taking a new
 *  block of \a per_block entries when the last is full; NULL on OOM. */
void *mon__arena_get(mon__arena_t *a, size_t size, unsigned per_block);
/** Frees every block; the arena is empty again. */
void mon__arena_free(mon__arena_t *a);

#define MON__SIGCACHE 256
#define MON__PCACHE 64
#define MON__RCACHE 64

struct mon__tls {
  int index;                     /* registration order, 0 = first thread */
  mon__tls_t *next;              /* global list (append only) */

  uint64_t mpi_ticks;            /* running MPI time of this thread (atomic) */
  mon__agg_t act[MON__NACT];     /* whole-run, per activity */
  /* whole-run distribution of each activity's call durations (ns), one
   * cache line each (the state is allocated 64-byte aligned) */
  _Alignas(64) ballast__dist_t actdist[MON__NACT];
  mon__agg_t lib[MON__NACT];     /* the library's own traffic */

  /* region stack */
  mon__frame_t *stack;
  int depth, cap;
  int cur_region;                /* innermost open region, 0 when none */
  /* mon_region_begin's lock-free path: (parent, name pointer) -> child, checked
   * with strcmp, so string literals skip the global lock and the hashing */
  struct {
    const char *name;
    int parent, id;
  } rcache[MON__RCACHE];

  /* per-region data: [chunk][slot], chunks published with release */
  mon__regacc_t *reg[MON__MAX_CHUNKS];
  ballast__dist_t *regdist[MON__MAX_CHUNKS]; /* instance wall times (ns) */
  mon__agg_t **regact[MON__MAX_CHUNKS];     /* per region: MON__NACT aggregates */
  long long (*reghw[MON__MAX_CHUNKS])[4];   /* PAPI, only when counters exist */
  int last_regact_id;                       /* cache of the last block used */
  mon__agg_t *last_regact;

  /* signature table (table.c) */
  mon__sig_t *sigs;
  mon__sig_t *sigcache[MON__SIGCACHE];
  mon__sig_t *siglast[MON__NACT]; /* each activity's last entry (no hash) */
  mon__arena_t sig_arena;         /* the entries */
  uint64_t nsigs;

  /* partner volumes (partners.c) */
  pthread_mutex_t plock;
  mon__pentry_t *partners;
  mon__pentry_t *pcache[MON__PCACHE];
  mon__arena_t p_arena;           /* the entries */
  uint64_t npartners;

  /* PAPI (papi.c) */
  int papi_set;                   /* event set, -1 when none */
};

/* ---- thread.c ------------------------------------------------------------------ */

extern MON__TLS mon__tls_t *mon__tl_self;
/** Calling thread's state, created and registered on first use (NULL on OOM). */
mon__tls_t *mon__tls_get(void);
/** Head of the list of all threads' states (acquire load). */
mon__tls_t *mon__tls_first(void);
int mon__tls_count(void);
/** Frees every thread's state (teardown, single-threaded). */
void mon__tls_free_all(void);

/* ---- clock.c ------------------------------------------------------------------- */

void mon__clock_init(void);
/** 1 when ticks come from the invariant TSC. */
int mon__clock_is_tsc(void);
/** Nanoseconds per tick in 32.32 fixed point (set once by mon__clock_init). */
extern uint64_t mon__ns_mult;
/** A duration of \a ticks in nanoseconds: one multiply, no division. */
static inline uint64_t mon__dur_ns(uint64_t ticks) {
  return (uint64_t)(((unsigned __int128)ticks * mon__ns_mult) >> 32);
}
uint64_t mon__thread_cpu_ns(void);

/* ---- init.c -------------------------------------------------------------------- */

enum { MON__OFF = 0, MON__ON = 1, MON__DONE = 2 };
extern int mon__state; /* MON__OFF before init / when disabled; atomic */
enum { MON__REPORT_NONE, MON__REPORT_TERSE, MON__REPORT_FULL };
typedef struct {
  int disabled;        /* BALLAST_MONITOR=0 */
  int report;          /* MON__REPORT_* */
  const char *profile; /* BALLAST_PROFILE or NULL */
  const char *cube;    /* BALLAST_CUBE or NULL */
  int top;             /* BALLAST_REPORT_TOP */
  int region_cpu;      /* BALLAST_REGION_CPU: CPU time per region (default 1) */
  char command[4096];   /* the command line, escaped, one line */
  char argv[8192];      /* the raw arguments, NUL-separated */
  size_t args_len;      /* bytes of argv used */
  int args_cut;         /* 1 when arguments past argv's size were left out */
  uint64_t t_init, t_fin; /* ticks; t_fin 0 while running */
  uint64_t cpu_fin_ns;    /* process CPU at finalize */
} mon__config_t;
extern mon__config_t mon__cfg;
/** Emits a warning once per distinct (kind, name). Thread safe. */
void mon__warn_once(const char *kind, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t mon__process_cpu_ns(void);

/* ---- table.c ------------------------------------------------------------------- */

void mon__sig_add(mon__tls_t *t, int act, int region, int partner,
                  uint64_t bytes, uint64_t ticks, uint64_t calls);
void mon__sig_free(mon__tls_t *t);

/* ---- aggregate.c --------------------------------------------------------------- */

void mon__agg_reset(mon__agg_t *a, int n);
/** Activity x region block of a thread, allocated on first use (NULL on OOM). */
mon__agg_t *mon__regact_get(mon__tls_t *t, int region);
void mon__regact_free(mon__tls_t *t);
/** Builds the activity name index and direction tables (once). */
void mon__acts_init(void);
/** Every activity of \a region (calls made while it was the innermost
 *  region) summed over threads into out[0 .. MON__NACT-1], as
 *  mon__act_read would give them one by one. Returns 1 when some thread
 *  made MPI calls in the region, 0 when none did (out is all empty),
 *  BALLAST_EINVAL for a bad region. */
int mon__act_read_region(int region, mon__actstats_t *out);
/** Library traffic of activity act summed over threads. */
void mon__lib_read(int act, mon__agg_t *out);

/* ---- partners.c ---------------------------------------------------------------- */

void mon__partner_add(mon__tls_t *t, int region, int partner, uint64_t bytes,
                      int recv);
void mon__partner_free(mon__tls_t *t);
/** Calls cb for each partner with data in region (< 0: whole run), summed over
 *  threads; the callback may be called several times for one partner (once per
 *  thread). Takes each thread's partner lock in turn. */
void mon__partner_foreach(int region,
                          void (*cb)(int partner, const mon__partner_t *p,
                                     void *ctx),
                          void *ctx);
/** The same for a signal handler: a thread whose partner lock is taken is
 *  skipped instead of waited for. Returns how many threads were skipped. */
int mon__partner_foreach_try(int region,
                             void (*cb)(int partner, const mon__partner_t *p,
                                        void *ctx),
                             void *ctx);

/** Every region's own partner volumes summed over partners and threads in
 *  one pass over the entries: out[r] for regions 0 .. n-1 (zeroed first). */
void mon__partner_sum_regions(mon__partner_t *out, int n);

/* ---- regions.c ----------------------------------------------------------------- */

void mon__regions_init(void);
void mon__regions_free(void);
/** Per-thread statistics record of a region (allocates the chunk); NULL on OOM. */
mon__regacc_t *mon__regacc_get(mon__tls_t *t, int region);
/** Closes every region open on the calling thread (warns once). Returns how many. */
int mon__regions_close_all(void);
/** What a region adds to its parent's path: its \a name, less a leading
 *  "<parent's name>/". rta names a task's region by its key ("step/forces"),
 *  which already holds the key of the parent task ("step"); entered inside
 *  that task's region, its path reads "step/forces", not "step/step/forces".
 *  \a parent NULL (a region of ballast_main) gives \a name. */
const char *mon__path_step(const char *parent, const char *name);

/** The distribution of region \a id's instance wall times on thread \a t
 *  (NULL when it has none). */
static inline const ballast__dist_t *mon__regdist_peek(const mon__tls_t *t, int id) {
  ballast__dist_t *chunk = MON__LDACQ(&t->regdist[id >> MON__CHUNK_BITS]);
  return chunk ? &chunk[id & (MON__CHUNK - 1)] : NULL;
}
/** api->dist_quantiles of the tools interface (dist_read.c). */
int mon__tool_dist(int kind, int id, int nq, const double *q, double *out_ns,
                   uint64_t *count);
/** Frees a thread's region distributions (teardown). */
void mon__regdist_free(mon__tls_t *t);

/** Marks every region named \a name repeated, those to come and those that
 *  exist. 0; BALLAST_ENOMEM. */
int mon__region_mark_repeated(const char *name);
/** Recomputes the one word a region's begin and end test for the rarely used
 *  work at its boundaries (PAPI counters, the thread CPU clock, repeated
 *  regions, MPI_T variables): called by whatever changes one of them. */
void mon__region_extras_update(void);
/** 1 when region \a id is repeated, 0 when not, BALLAST_ENOTFOUND for a bad id. */
int mon__region_is_repeated(int id);
/** The series of a repeated region once thread 0 entered it, else NULL. */
mon__rep_t *mon__region_rep(int id);

/* ---- mpit.c: MPI_T performance variables ------------------------------------------- */

/** Variables selected and valid (0: none; the region hot path tests it). */
extern int mon__mpit_n;
/** Their change over the region instance that ended last (thread 0). */
extern double mon__mpit_last[MON_MPIT_MAX];
/** BALLAST_MPIT / mon_mpit_select(): session and handles (after PMPI_Init). */
void mon__mpit_init(void);
/** Reads every variable (per-peer values summed) into out[mon__mpit_n]. */
void mon__mpit_read(double *out);
/** A region begins / ends at stack depth \a depth on thread 0. */
void mon__mpit_push(int depth);
void mon__mpit_pop(int id, int depth);
/** Frees the handles, the session and MPI_T (before PMPI_Finalize). */
void mon__mpit_finalize(void);
/** Frees the figures (teardown). */
void mon__mpit_free(void);
/** The tools interface's api->mpit_region (installed at MPI_Init). */
int mon__tool_mpit_region(int region, int var, const char **name, double *delta,
                          double *max);

/* ---- reps.c: repeated regions ---------------------------------------------------- */

/** BALLAST_REPEAT*, the reduction communicator (collective: mon__init). */
void mon__reps_init(void);
/** Completes every cross-rank batch (collective: mon__finalize). */
void mon__reps_finalize(void);
/** Frees every series (teardown). */
void mon__reps_free(void);
/** A new series for region \a id (thread 0, at its first instance); NULL on OOM. */
mon__rep_t *mon__rep_create(int id);
/** A repetition begins: frame \a f was just pushed with f->rep set. */
void mon__rep_begin(mon__tls_t *t, mon__frame_t *f);
/** A repetition ends with these inclusive figures (ticks, ticks, ns). */
void mon__rep_end(mon__tls_t *t, mon__frame_t *f, uint64_t wticks, uint64_t mticks,
                  uint64_t cpu_ns);

/* ---- papi.c -------------------------------------------------------------------- */

void mon__papi_init(void);
int mon__papi_nevents(void);
const char *mon__papi_event_name(int i);
/** Reads the calling thread's counters into v (zeros when none). */
void mon__papi_read(mon__tls_t *t, long long v[4]);
void mon__papi_thread_free(mon__tls_t *t);

/* ---- report.c / profile.c ------------------------------------------------------ */

/** Collective over MPI_COMM_WORLD through PMPI; rank 0 prints / writes. */
int mon__report(int level);
int mon__profile_write(const char *path);
/** The full report's distribution section (report_dist.c): collective over
 *  MPI_COMM_WORLD; rank 0 prints the merged distributions of the \a k
 *  regions \a ids (local ids, -1 where absent; \a names their paths on
 *  rank 0) and of the activities with calls. 0 or BALLAST_ENOMEM (agreed). */
int mon__report_dists(FILE *f, int rank, const int *ids, const char *const *names, int k);
/** Entries of the partner table a signal handler's part can hold. */
#define MON__PART_PARTNERS 4096
/** This rank's part alone (fault.c), rendered in \a buf of \a cap bytes
 *  without allocating, locking nor vsnprintf (callable from a signal
 *  handler). Returns its length, 0 when it does not fit. */
size_t mon__profile_part_fixed(char *buf, size_t cap, int rank, int nranks,
                               const char *reason);
/** The same in a malloc'ed string (*len bytes), NULL when out of memory. */
char *mon__profile_part(int rank, int nranks, const char *reason, size_t *len);

/* ---- fault.c ------------------------------------------------------------------- */

/** vsnprintf for the conversions the profile uses (d i u ld lu lld llu zu x
 *  with width and zero padding, s, c, %, and g with a precision), async-signal
 *  safe. Returns the length it would need, as vsnprintf. */
int mon__fmt_safe(char *out, size_t cap, const char *fmt, va_list ap);
/** At MPI_Init (monitoring on): with BALLAST_PROFILE set, prepares the part
 *  this rank writes when it dies and installs the signal handlers. */
void mon__fault_init(void);
/** At MPI_Finalize, after the profile was written (\a profile_rc: what
 *  mon__profile_write returned on this rank; only rank 0's is not 0):
 *  removes the handlers and, when every rank learns that rank 0 wrote the
 *  profile, this rank's part; otherwise the part stays for
 *  ballast-profile-merge. Collective over MPI_COMM_WORLD when
 *  BALLAST_PROFILE is set. */
void mon__fault_finalize(int profile_rc);
/** Writes this rank's part now (not from a signal handler), while
 *  monitoring runs or inside MPI_Finalize (its final figures). */
void mon__fault_write(const char *reason);
/** Ticks at which the next periodic part is due (UINT64_MAX: never). */
extern uint64_t mon__fault_next;
/** Called at an MPI call once mon__fault_next passed. */
void mon__fault_tick(uint64_t now);

/** 0 when the public collective calls (mon_report, ...) may run. */
int mon__collective_ok(void);

/* ---- cube_tar.c, cube.c: the Cube4 archive (BALLAST_CUBE) ----------------------- */

/** A ustar header for member \a name (at most 99 bytes) of \a size bytes.
 *  0, or BALLAST_EINVAL for a bad name. */
int mon__tar_header(unsigned char hdr[512], const char *name, uint64_t size,
                    uint64_t mtime);
/** \a size rounded up to whole 512-byte blocks. */
uint64_t mon__tar_padded(uint64_t size);

/** A growing text buffer (anchor.xml); oom set once an allocation failed. */
typedef struct {
  char *s;
  size_t len, cap;
  int oom;
} mon__xb_t;
void mon__xb_put(mon__xb_t *b, const char *p, size_t n);
void mon__xb_printf(mon__xb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** \a len bytes of \a s as XML text (markup escaped, invalid bytes U+FFFD). */
void mon__xb_xml(mon__xb_t *b, const char *s, size_t len);

/** Bytes of a metric's index member (dense). */
#define MON__CUBE_INDEX_SIZE 18
/** The index member of a dense metric into \a out; returns its size. */
size_t mon__cube_index(unsigned char out[MON__CUBE_INDEX_SIZE]);

/** Writes the run's profile as a Cube4 archive at \a path (collective over
 *  MPI_COMM_WORLD, at MPI_Finalize). 0, or a negative BALLAST_E* code on
 *  every rank; rank 0 says why in one line. */
int mon__cube_write(const char *path);

#endif /* BALLAST_MON_CORE_H */
