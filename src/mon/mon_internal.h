/*
 * mon's internal contract. Never installed.
 *
 * Three parties use it:
 *  - the generated PMPI wrappers (src/mon/wrappers, tools/gen_wrappers.py):
 *    the hot-path half (mon__enter .. mon__leave, mon__record, mon__account);
 *  - mon's own core (clock.c, thread.c, regions.c, table.c, report.c, ...),
 *    which implements everything here;
 *  - pia (src/pia), which only uses the read half (mon__*_read, lookups).
 *
 * Rules that hold across the contract:
 *  - Activity ids are dense ints 0..MON__NACT-1 generated from the wrapper
 *    spec (mon_acts.h, generated into the build tree), followed by group ids
 *    (all p2p, all collectives, ...). mon__act_find() resolves both.
 *  - Region ids are dense, stable ints; 0 is the implicit whole-program
 *    region "ballast_main" (IPM's "ipm_main"); ids never change or get reused.
 *  - The hot path takes no lock and allocates only when a new signature or a
 *    new (region, activity) block appears for the first time on a thread.
 *  - Writers are the owning thread only; readers of other threads see
 *    per-thread counters through relaxed atomics, so reads are safe while
 *    other threads are inside MPI.
 *  - Times are kept in clock ticks (mon__ticks) and converted to seconds on
 *    read.
 */
#ifndef BALLAST_MON_INTERNAL_H
#define BALLAST_MON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ballast/mon.h>

#include "common/dist.h"
#include "mon/mon_hooks.h"

/* ---- atomics (the core and the wrappers) ---------------------------------------------------- */

#define MON__LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define MON__ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define MON__LDACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define MON__STREL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* Single-writer add: a load and a store, no locked instruction. */
#define MON__ADD(p, v) MON__ST((p), MON__LD(p) + (v))

/* ---- clock --------------------------------------------------------------- */

/** Monotonic ticks: invariant TSC when the CPU has one, else CLOCK_MONOTONIC ns. */
uint64_t mon__ticks(void);
/** \a ticks as nanoseconds on CLOCK_MONOTONIC's time base: the clock of
 *  the tools interface's events (ballast/tool.h). */
uint64_t mon__ticks_ns(uint64_t ticks);
/** mon__ticks_ns(mon__ticks()). */
uint64_t mon__now_ns(void);
/** Seconds per tick (calibrated once at mon__init). */
double mon__tick_seconds(void);

/* ---- life cycle ------------------------------------------------------------ */

/** Called by the MPI_Init/MPI_Init_thread wrappers after PMPI_Init*. */
void mon__init(int *argc, char ***argv);
/** Called by the MPI_Finalize wrapper before PMPI_Finalize: report, profile. */
void mon__finalize(void);
/** Called by the MPI_Finalize wrapper after PMPI_Finalize: BALLAST_HTML's page. */
void mon__after_finalize(void);
/* html.c: the profile's "run" member and BALLAST_HTML (read at mon__init);
 * mon__html_finalize (collective, in mon__finalize) writes the profile the
 * page is drawn from, given the BALLAST_PROFILE write's code (rank 0). */
void mon__html_init(void);
void mon__html_finalize(int profile_rc);

/* ---- hot path (wrappers) ------------------------------------------------- */

typedef struct mon__tls mon__tls_t;

/**
 * Enters a wrapper. Returns the calling thread's state with its reentrancy
 * guard set, or NULL when monitoring is off, not initialised, finalised, or the
 * thread is already inside a wrapper (then the wrapper only calls PMPI).
 */
mon__tls_t *mon__enter(void);
/** Leaves a wrapper entered with a non-NULL mon__enter(). */
void mon__leave(mon__tls_t *t);

/** No partner (collectives without a root, local calls). */
#define MON_NO_PARTNER (-1)

/**
 * Records one call of activity \a act that took \a ticks, moved \a bytes with
 * world rank \a partner (or MON_NO_PARTNER). Updates the signature table, the
 * per-activity and per-(activity, region) aggregates, the current region's MPI
 * time and, when partner >= 0 and bytes > 0, the partner volume.
 * Inside the library's own traffic (ballast__lib_depth() > 0) it records into the
 * library's separate aggregates instead.
 */
void mon__record(mon__tls_t *t, int act, int partner, uint64_t bytes,
                 uint64_t ticks);

/**
 * Credits bytes of an operation that completes later (nonblocking and
 * persistent requests, at Wait/Test) to activity \a act and partner, without
 * counting a call or time. Region attribution: the region current when the
 * operation completes.
 */
void mon__account(mon__tls_t *t, int act, int partner, uint64_t bytes);

/** World rank of \a rank in \a comm, through a per-communicator cache. */
int mon__world_rank(MPI_Comm comm, int rank);
/** Forget the cache entry of a communicator about to be freed. */
void mon__comm_forget(MPI_Comm comm);

/* ---- regions (core) ---------------------------------------------------------- */

/** Maximum region name length in bytes (without the NUL). */
#define MON__NAME_MAX 255

/* ---- read side (pia, report) -------------------------------------------------
 * All reads are local, O(1) in the number of regions and signatures (they
 * may be O(number of threads)), and return 0 or a negative BALLAST_E* code.
 */

typedef struct {
  uint64_t count;      /* times entered and left */
  double wtime;        /* inclusive wall seconds */
  double mtime;        /* seconds in MPI inside the region (inclusive) */
  double cputime;      /* CPU seconds */
  long long hwc[4];    /* PAPI counters, 0 where none */
  int nhwc;            /* number of valid entries in hwc */
} mon__regstats_t;

typedef struct {
  uint64_t ncalls;
  uint64_t nbytes;
  double tsum, tmin, tmax; /* seconds; tmin = +inf / tmax = 0 when ncalls == 0 */
} mon__actstats_t;

typedef struct {
  uint64_t bytes;      /* sent to the partner (sends, puts, accumulates) */
  uint64_t msgs;
  uint64_t rbytes;     /* received from the partner (receives, gets) */
  uint64_t rmsgs;
} mon__partner_t;

/* MPI_T performance variables (mpit.c): what pia's pia_mpit_* answer. */
/** Of variable \a var in region \a id: the sum of its changes over the
 *  instances and the largest value read at their boundaries. 0;
 *  BALLAST_ENOTFOUND for a bad var. */
int mon__mpit_region(int id, int var, double *delta, double *max);
const char *mon__mpit_name(int var); /* NULL for a bad var */
int mon__mpit_class(int var);        /* MPI_T_PVAR_CLASS_*, -1 for a bad var */
int mon__mpit_count(void);
/** Reads variable \a var now: 0; BALLAST_ENOTFOUND; BALLAST_ESTATE off
 *  thread 0 or outside the run. */
int mon__mpit_read_one(int var, double *value);

/* Repeated regions (reps.c): what pia's pia_region_rep_* answer. */
typedef struct {
  uint64_t count, keep, oldest;  /* repetitions; ring size; oldest kept */
  int warming, last;             /* still warming up; last label (-1: none) */
  uint64_t warm_end, outliers, good;
  double good_mean, good_min, good_max, good_sd, good_median, median; /* seconds */
  uint64_t skipped, reduce_every;
} mon__repinfo_t;
typedef struct {
  uint64_t index;
  int label, nuser, reduced, xslow;
  double wtime, mtime, cputime;
  uint64_t bytes, calls;
  double user[MON_REP_USER_MAX];
  int nmpit;
  double mpit[MON_MPIT_MAX];
  long long ru[4]; /* vcsw, ivcsw, minflt, majflt */
  int nhw;         /* PAPI counters kept (0: none on this machine) */
  long long hw[4];
  double xmax, xmin, xmean, xwait;
} mon__rep_rec_t;
/** 0; BALLAST_ENOTFOUND (bad id); BALLAST_ESTATE (not repeated). */
int mon__rep_info(int region, mon__repinfo_t *out);
/** 0; BALLAST_ENOTFOUND (bad id); BALLAST_ERANGE (index not kept);
 *  BALLAST_ESTATE (not repeated). */
int mon__rep_get(int region, uint64_t index, mon__rep_rec_t *out);
/** Repeated regions with a series, in id order: first, next (-1: none). */
int mon__reps_first(void);
int mon__reps_next(int region);
/** User counters (mon_rep_counter_create). */
int mon__reps_user_count(void);
const char *mon__reps_user_name(int i);

int mon__region_count(void);
const char *mon__region_name(int id);            /* NULL for a bad id */
int mon__region_find(const char *name);          /* first created with name */
int mon__region_find_child(int parent, const char *name);
int mon__region_current(void);                   /* calling thread's innermost */
int mon__region_depth(void);                     /* calling thread's open regions */
int mon__region_parent(int id);
int mon__region_first_child(int id);
int mon__region_next_sibling(int id);
int mon__region_read(int id, mon__regstats_t *out);

int mon__act_count(void);                        /* activities + groups */
const char *mon__act_name(int act);
int mon__act_find(const char *name);             /* O(1), groups included */
/** region < 0: whole run. Accumulates into *out (caller initialises). */
int mon__act_read(int act, int region, mon__actstats_t *out);
/** region < 0: whole run. */
int mon__partner_read(int region, int partner, mon__partner_t *out);

/* Distributions (dist_read.c): every region's instance wall times and every
 * activity's call durations, kept per thread in nanoseconds
 * (common/dist.h), read summed over threads. */

/** Summary of a distribution, in seconds. */
typedef struct {
  uint64_t count;       /* values in the distribution */
  uint64_t lost;        /* values left out of the buckets (out of memory) */
  double min, max;      /* exact; 0 when count == 0 */
  double mean, var;     /* var: sample variance (n - 1) */
} mon__diststats_t;

/**
 * Quantiles in seconds of region \a id's instance wall times (or, for
 * mon__act_quantiles, activity or group \a act's call durations, whole run),
 * each within 1/128 of the exact one (common/dist.h); \a st (may be NULL)
 * receives the summary. nq may be 0 (summary only). Region 0 (the whole
 * program) has no instances: BALLAST_ENODATA.
 * \return 0; BALLAST_EINVAL (NULL, q outside [0, 1]); BALLAST_ENOTFOUND (bad
 *         id); BALLAST_ENODATA (nothing recorded yet: out unchanged, st zeros);
 *         BALLAST_ENOMEM.
 */
int mon__region_quantiles(int id, const double *q, int nq, double *out,
                          mon__diststats_t *st);
int mon__act_quantiles(int act, const double *q, int nq, double *out,
                       mon__diststats_t *st);
/** Adds the distribution (ns) of region \a id / activity \a act over all
 *  threads into \a f. \return 0, BALLAST_EINVAL or BALLAST_ENOTFOUND. */
int mon__region_dist_flat(int id, ballast__dist_flat_t *f);
int mon__act_dist_flat(int act, ballast__dist_flat_t *f);
/** Calls cb with every non-empty bucket (index, count) of region \a id /
 *  activity \a act summed over threads (buckets in increasing order). */
int mon__region_dist_foreach(int id, int (*cb)(unsigned b, uint64_t n, void *ctx),
                             void *ctx);
int mon__act_dist_foreach(int act, int (*cb)(unsigned b, uint64_t n, void *ctx),
                          void *ctx);

/* ---- signature tables (report, profile, tests) ------------------------------
 * Not O(1): these visit every signature. Only call them while no other thread
 * records (after MPI_Finalize's mon__finalize, or in tests).
 */

typedef struct {
  int act, region, partner, thread; /* the signature ... */
  uint64_t bytes;                   /* ... including the message size */
  uint64_t count, nbytes;           /* calls; bytes credited (incl. completions) */
  double tsum, tmin, tmax;          /* seconds; tmin = 0 when count == 0 */
} mon__sigview_t;

/** Number of distinct signatures over all threads. */
uint64_t mon__sig_count(void);
/** Calls cb for each signature; stops at and returns cb's first non-zero. */
int mon__sig_foreach(int (*cb)(const mon__sigview_t *s, void *ctx), void *ctx);

/** Called by the report and the profile on rank 0. */
void mon__report_sections_print(FILE *f);
void mon__report_sections_json(FILE *f);
/* This rank's members of the sections (",\"name\":value" each), malloc'ed;
 * NULL when there are none or no memory. */
char *mon__report_sections_rank_json(void);

#endif /* BALLAST_MON_INTERNAL_H */
