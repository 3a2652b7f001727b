/*
 * ballast-md: a 3D Lennard-Jones molecular dynamics code (reduced units,
 * Verlet neighbour lists built over linked cells, velocity Verlet)
 * decomposed into blocks of cells, each block a unit of work owned by one
 * rank through an owner map that may change between steps. This header is
 * the example's internal contract; it is not part of ballast's API.
 *
 * Units: sigma = epsilon = mass = k_B = 1. Potential: LJ truncated at
 * rc = 2.5 and shifted so that U(rc) = 0 (the force is the plain LJ force
 * inside rc, zero outside), the standard "truncated and shifted" choice:
 * the shift removes the energy jump at the cutoff, so total energy is a
 * conserved quantity of the discrete dynamics up to the O(dt^2) error of
 * velocity Verlet and the small force jump at rc.
 */
#ifndef BALLAST_MD_H
#define BALLAST_MD_H

#include <mpi.h>
#include <ballast.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define MD_RC 2.5          /* cutoff radius (sigma) */
#define MD_SKIN 0.3        /* default Verlet-list skin (sigma), --skin */
#define MD_DIM 3
/* Doubles per particle in a migration record: block, x, v, f, id. */
#define MD_MREC 11
/* Doubles per ghost record: target block, x, y, z. */
#define MD_GREC 4
/* Doubles per ghost refresh between rebuilds: x, y, z. */
#define MD_RREC MD_DIM
/* Most blocks adjacent to one block: its 26-neighbourhood (3^3 - 1). */
#define MD_NEIGHBOURS_MAX 26
/* Without --window, a run is measured in this many windows (steps / 10). */
#define MD_WINDOWS_PER_RUN 10
/* Without --blocks, about this many blocks per rank (room to rebalance). */
#define MD_BLOCKS_PER_RANK 8
/* Fewest cells per dimension: the 3 x 3 x 3 cells around a cell must be
 * distinct cells, or a pair would be found twice through periodic images. */
#define MD_MIN_CELLS 3
/* Particles per unit cell of the FCC lattice the scenarios start from. */
#define MD_FCC_SITES 4

/* md_parse_args's answer when --help was given. */
#define MD_ARGS_HELP 1
/* Exit statuses of ballast-md (README: 0, or these). */
enum {
  MD_EXIT_USAGE = 2,  /* bad arguments or starting configuration */
  MD_EXIT_ABORT = 3,  /* a failed call during the run (MPI_Abort) */
  MD_EXIT_LOST = 4,   /* the particle count changed */
  MD_EXIT_WRITE = 5   /* a --write-* file could not be written */
};

/* The global sums of md_local_sums / MPI reductions, by index. */
enum {
  MD_SUM_KE = 0,      /* kinetic energy */
  MD_SUM_PE = 1,      /* potential energy */
  MD_SUM_MOM = 2,     /* momentum x, y, z (3 entries) */
  MD_SUM_N = 5,       /* particle count */
  MD_SUM_ADDED = 6,   /* entries reduced by MPI_SUM: the ones above */
  MD_SUM_POS_MIN = 6, /* smallest coordinate (MPI_MIN) */
  MD_SUM_POS_MAX = 7, /* largest coordinate (MPI_MAX) */
  MD_NSUMS = 8
};

typedef enum { MD_UNIFORM = 0, MD_DROPLET, MD_CLUSTER } md_scenario_t;
typedef enum { MD_BLOCK = 0, MD_RANDOM, MD_ROUNDROBIN, MD_BALLAST } md_strategy_t;

/* splitmix64: a small, seedable, reproducible generator. */
static inline uint64_t md_rng_next(uint64_t *st) {
  uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/* Uniform in [0, 1). */
static inline double md_rng_uniform(uint64_t *st) {
  return (double)(md_rng_next(st) >> 11) * 0x1p-53;
}

/* Command-line parameters (options.c). */
typedef struct {
  md_scenario_t scenario;
  md_strategy_t strategy;
  long particles;      /* requested count; the lattice rounds it to 4*M^3 */
  int steps;
  double dt;
  int nb[MD_DIM];      /* blocks per dimension; 0 = choose */
  unsigned long seed;
  int walls;           /* reflecting walls instead of periodic boundaries */
  int placement;       /* one block per rank */
  int window;          /* steps per measurement window; 0 = choose */
  int remap_every;     /* re-apply the strategy's map every K steps; 0 = never */
  int json_only;
  double rho;          /* liquid density */
  double temperature;  /* initial temperature */
  double drift;        /* cluster drift speed (along x) */
  int equilibrate;     /* warm-up steps with velocity rescaling, unmeasured */
  int progress;        /* progress lines (number of reports over the run) */
  int pia;             /* print the phases' PIA region data at the end */
  const char *trace;   /* file for the per-step times (rank 0), or NULL */
  int lb_random;       /* ballast: map with RTA_MAP_RANDOM instead of two-phase */
  double skin;         /* Verlet-list skin: lists hold pairs within rc + skin;
                          < 0 until md_geometry_init resolves the default */
  const char *read_data;   /* LAMMPS data file to start from, or NULL (io.c) */
  const char *read_xyz;    /* extended XYZ frame to start from, or NULL */
  const char *write_data;  /* data file written at the end of the run, or NULL */
  const char *write_start; /* data file of the state the measured run starts from */
  const char *write_xyz;   /* extended XYZ frame written at the end, or NULL */
  double box[MD_DIM];  /* box lengths from --read-data; 0: from --particles and --rho */
} md_params_t;

/* Verlet neighbour lists of one block (nlist.c), CSR over its owned
 * particles i (sorted by cell at the build):
 *   own_j[own_off[i] .. own_off[i+1])  owned j > i within rc + skin at the
 *                                      build (half list: Newton's third law
 *                                      inside the block);
 *   gh_j[gh_off[i] .. gh_off[i+1])     ghosts g within rc + skin (full: the
 *                                      pair is computed by both blocks).
 * valid is 0 when the block's particles or ghosts changed identity (a
 * rebuild, the block arrived by a remap); md_forces then rebuilds it. The
 * list is never serialised with a block. */
typedef struct {
  int valid;
  int *own_off, *gh_off;   /* [n + 1] */
  int *own_j, *gh_j;
  int offcap, ojcap, gjcap;
} md_nlist_t;

/* One block: its owned particles as growable structure-of-arrays, and the
 * ghost copies of neighbouring particles it needs for the force loop. */
typedef struct {
  int n, cap;
  double *x, *y, *z, *vx, *vy, *vz, *fx, *fy, *fz;
  int64_t *id;
  int ng, gcap;
  double *gx, *gy, *gz;
  /* Verlet lists: positions at the last list build (allocated with x, not
   * serialised: a moved block forces a rebuild) and the lists themselves */
  double *x0, *y0, *z0;
  md_nlist_t nl;
} md_block_t;

/* A growable buffer of doubles (send/receive staging). */
typedef struct {
  double *v;
  size_t n, cap;
} md_dbuf_t;

/* Per-dimension geometry of one cell: the blocks whose extended cell range
 * (the block plus one ghost layer) contains the cell or its periodic image,
 * with the image shift in box lengths. At most 4 entries are possible. */
typedef struct {
  int n;
  int blk[4];
  int shift[4];
} md_ghostmap_t;

/* Scratch arrays of the list builds and the sorting (nlist.c). */
typedef struct {
  int *start, *gstart;  /* [nbin + 1] first owned / ghost index of each bin */
  int ccap;
  int *pc;              /* bin of each owned particle, then of each ghost */
  double *sx, *sy, *sz; /* ghost positions sorted by bin */
  int *sidx;            /* ghost index of each sorted ghost */
  int *perm;            /* bin-order permutation (sorting, binning) */
  double *tmp;          /* staging of one array while permuting */
  int pcap;
} md_scratch_t;

/* The ghost plan of the last rebuild (halo.c): between rebuilds every ghost
 * keeps its slot and only its position is refreshed from its source
 * particle (plus the periodic shift). Local ghosts are copied directly;
 * remote ones travel as 3 doubles per ghost, in the order recorded here at
 * both ends (send entries per neighbour rank k: sendp[sendp_off[k] ..
 * sendp_off[k+1]); receive slots recvp[recvp_off[k] .. recvp_off[k+1])). */
typedef struct {
  int sb, si;           /* source block and owned index */
  int tb, tg;           /* target block and ghost slot (local copies only) */
  double sh[MD_DIM];    /* periodic shift (box lengths times -1, 0 or 1) */
} md_gsrc_t;
typedef struct {
  int tb, tg;           /* target block and ghost slot */
} md_gslot_t;
typedef struct {
  int valid;            /* 0: no plan (a rebuild is due) */
  md_gsrc_t *loc;       /* local copies */
  int nloc, loccap;
  md_gsrc_t *sendp;     /* remote sources, grouped by neighbour rank */
  int *sendp_off;       /* [nnbr + 1] */
  int nsend, sendcap;
  md_gslot_t *recvp;    /* remote targets, grouped by neighbour rank */
  int *recvp_off;       /* [nnbr + 1] */
  int nrecv, recvcap;
} md_hplan_t;

/* Kernel statistics (summed over this rank's builds and steps). */
typedef struct {
  long rebuilds;        /* list rebuilds (collective: equal on every rank) */
  long forced;          /* of which forced (start, remap, block arrival) */
  double list_atoms;    /* owned particles over all list builds */
  double list_entries;  /* list entries (own half + ghost) over all builds */
  double build_checks;  /* distance checks made by the builds */
  double kernel_atoms;  /* owned particles over all force evaluations */
  double kernel_checks; /* list entries visited by the force evaluations */
} md_kstats_t;

typedef struct {
  md_params_t p;
  MPI_Comm comm;
  int rank, size;

  /* geometry (cells.c) */
  double L[MD_DIM];     /* box lengths */
  int nc[MD_DIM];       /* cells per dimension */
  double cs[MD_DIM];    /* cell size (>= rc) */
  int nb[MD_DIM];       /* blocks per dimension */
  int nblocks;
  int *blo[MD_DIM];     /* block i spans cells [blo[i], blo[i+1]) */
  int *cell_blk[MD_DIM];/* block index (per dimension) of each cell */
  md_ghostmap_t *gmap[MD_DIM];
  int periodic;

  /* ownership (blocks.c) */
  int *owner;           /* owner[nblocks]: rank owning each block */
  md_block_t *blocks;   /* [nblocks]; storage only where owner == rank */
  int *mine;            /* my blocks, ascending */
  int nmine;

  /* neighbourhood (halo.c) */
  int *nbr;             /* ranks owning blocks adjacent to mine (sorted) */
  int nnbr;
  md_dbuf_t *sendb;     /* [nnbr] */
  md_dbuf_t recvb;
  md_dbuf_t localq;     /* records for blocks on this rank */
  int *rank_slot;       /* rank -> index in nbr, or -1 */

  /* bookkeeping */
  long natoms;          /* global particle count at start */
  int remaps;
  long tasks_moved;
  double bytes_moved;
  double lb_seconds;
  double epot_local;    /* potential energy of my particles (last forces) */
  int skip_epot;        /* 1: md_forces may skip the energy (epot_local NAN) */
  md_scratch_t scr;

  /* Verlet lists (nlist.c, halo.c): rlist = rc + skin is the list cut-off
   * and the minimum cell edge; a rebuild is due when forced (rebuild_due,
   * set whenever the neighbour ranks or block owners change) or when some
   * particle moved more than skin / 2 since the last build (decided
   * together: one MPI_Allreduce per step). */
  double rlist;
  int rebuild_due;
  md_hplan_t hplan;
  md_kstats_t kst;

  /* ballast (lb.c): phases are rta tasks of the per-rank tree "step"; with
   * --strategy ballast each block is the task "md/block_<b>" of the load-
   * balancing context, its force computation clocked as that task. */
  rta_task_t *ph_step, *ph_forces, *ph_integrate, *ph_halo, *ph_migrate;
  rta_task_t *md_root;
  rta_task_t **btask;   /* [nblocks]: task of each block I own, else NULL */
  int clock_blocks;     /* 1: md_forces clocks each block as its task */
  rta_lb_context_t *lb;
  long long lb_remaps_seen;
  rta_lb_stats_t lbst;  /* the context's statistics after the last call */
  double lb_deciding_min; /* sum over steps of the min over ranks of the deciding seconds */
} md_sim_t;

/* options.c */
int md_parse_args(int argc, char **argv, md_params_t *p, char *err, size_t errlen);
void md_usage(FILE *out);
/* Formats an error message into err (at most len bytes); returns -1. */
int md_errf(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *md_scenario_name(md_scenario_t s);
const char *md_strategy_name(md_strategy_t s);

/* cells.c: geometry */
int md_geometry_init(md_sim_t *s, char *err, size_t errlen);
void md_geometry_free(md_sim_t *s);
int md_block_index(const md_sim_t *s, int bx, int by, int bz);
void md_block_coords(const md_sim_t *s, int b, int *bx, int *by, int *bz);
int md_cell_coord(const md_sim_t *s, int d, double x);
int md_block_of_pos(const md_sim_t *s, double x, double y, double z);
/* Blocks adjacent to b (26-neighbourhood, with periodic wrap), b excluded,
 * without duplicates; returns the count written to out (<= MD_NEIGHBOURS_MAX). */
int md_block_neighbours(const md_sim_t *s, int b, int *out);

/* blocks.c: block storage, owner maps, migration of whole blocks */
int md_block_reserve(md_block_t *blk, int cap);
/* Appends one particle: r9 = x, y, z, vx, vy, vz, fx, fy, fz. */
int md_block_push(md_block_t *blk, const double *r9, int64_t id);
void md_block_remove(md_block_t *blk, int i);
void md_block_free(md_block_t *blk);
/* Frees every block, the owner map, the neighbourhood, the scratch and the
 * geometry (the end of a run). */
void md_sim_free(md_sim_t *s);
int md_ghost_reserve(md_block_t *blk, int cap);
/* A block's state as one record of doubles, the form in which a whole block
 * moves between ranks, through ballast's serialisation callbacks (lb.c) or
 * md_apply_owner_map alike: [block, n, x[n] y z vx vy vz fx fy fz, id[n]],
 * the ids bit-copied. The lists and ghosts are not part of it. */
#define MD_BREC_HEAD 2          /* block, n */
#define MD_BREC_PER_PARTICLE 10 /* 9 coordinates and the id */
static inline size_t md_block_record_len(size_t n) {
  return MD_BREC_HEAD + MD_BREC_PER_PARTICLE * n;
}
/* Writes block b's record (md_block_record_len(blk->n) doubles) to w. */
void md_block_pack(const md_block_t *blk, int b, double *w);
/* Replaces blk's particles by those of the record w (whose header the
 * caller checked). Returns 0 or BALLAST_ENOMEM (blk then empty). */
int md_block_unpack(md_block_t *blk, const double *w);
void md_strategy_map(const md_sim_t *s, md_strategy_t st, unsigned long seed,
                     int round, int *owner);
void md_refresh_mine(md_sim_t *s);
/* Collective: moves every block whose owner changes to its new owner (count
 * then structure-of-arrays data over MPI), then adopts new_owner. Returns 0,
 * BALLAST_EINVAL when new_owner is invalid or differs between ranks (nothing
 * moves), BALLAST_ENOMEM or BALLAST_EMPI. */
int md_apply_owner_map(md_sim_t *s, const int *new_owner);

/* halo.c: neighbour ranks, ghost exchange, particle migration */
int md_neighbours_update(md_sim_t *s);
void md_neighbours_free(md_sim_t *s);
int md_halo_exchange(md_sim_t *s);
int md_migrate(md_sim_t *s);
int md_dbuf_reserve(md_dbuf_t *b, size_t cap);
void md_dbuf_free(md_dbuf_t *b);

/* halo.c, Verlet-list steps: md_halo_exchange (above) builds the ghost set
 * and its plan; md_halo_refresh only moves the ghosts' positions along the
 * plan (no probing: both ends know the counts). */
int md_halo_refresh(md_sim_t *s);
void md_hplan_free(md_hplan_t *h);

/* nlist.c: Verlet lists, cell sorting and the pair kernel.
 *
 * Rule across block and rank boundaries: a pair of particles of the same
 * block is computed once (half list, Newton's third law). A pair whose
 * members are in different blocks (on the same rank or not) is computed by
 * both blocks, each from its own particle and a ghost of the other, each
 * adding the force to its own particle only and half of the pair energy.
 * No force is sent back, so a block's forces do not depend on where its
 * neighbours live and a moved block needs no reverse communication.
 *
 * Between rebuilds particles are not migrated and, in a periodic box, not
 * wrapped: an owned position may lie up to skin / 2 outside its block (and
 * the box). md_rebuild_due is collective. */
int md_rebuild_due(md_sim_t *s, int *due);
/* Periodic boxes: owned positions back into [0, L) (rebuilds only: a
 * ghost's position is its source's plus a fixed shift). */
void md_wrap(md_sim_t *s);
/* The particles of each of my blocks sorted by cell (every array permuted
 * alike), so that memory follows space; lists marked invalid. */
int md_sort_blocks(md_sim_t *s);
/* Marks the positions of the build (x0) and counts the rebuild. */
void md_mark_build(md_sim_t *s, int forced);
int md_nlist_build(md_sim_t *s, int b);
/* Forces of block b from its lists (valid); with eflag its potential
 * energy share (else 0). */
double md_nlist_forces(md_block_t *blk, int eflag);
void md_nlist_free(md_nlist_t *nl);

/* physics.c */
int md_forces(md_sim_t *s);
void md_scratch_free(md_scratch_t *w);
void md_kick(md_sim_t *s, double h);
void md_drift(md_sim_t *s, double dt);
/* This rank's MD_NSUMS sums (the MD_SUM_* indices). */
void md_local_sums(const md_sim_t *s, double out[MD_NSUMS]);

/* Temperature of n particles of total kinetic energy ke (mass 1, k_B = 1):
 * T = 2 ke / (3 (n - 1)), the total momentum taking 3 degrees of freedom
 * (LAMMPS's compute temp does the same). The only definition in ballast-md:
 * the initial velocities, the warm-up's rescaling and every printed T. */
static inline double md_temperature(double ke, double n) {
  return n > 1 ? 2.0 * ke / (3.0 * (n - 1.0)) : 0.0;
}

/* io.c: configuration files. A configuration read from a file, positions
 * in [0, L) (periodic) or [0, L] (walls) relative to the box origin. */
typedef struct {
  long n;
  int periodic;
  double L[MD_DIM];
  int64_t *id;       /* ballast-md ids (file id - 1) */
  double *r;         /* [6 n]: x, y, z, vx, vy, vz */
} md_config_t;
/* Collective: rank 0 writes every particle, sorted by id, as a LAMMPS data
 * file (atom_style atomic, %.17g). Returns 0, or -1 on every rank with err
 * naming the file and the problem. */
int md_write_data(const md_sim_t *s, const char *path, char *err, size_t errlen);
/* Collective: the same as an extended XYZ frame (species, id, pos, velo). */
int md_write_xyz(const md_sim_t *s, const char *path, char *err, size_t errlen);
/* Reads a LAMMPS data file (atom_style atomic, mass 1, orthogonal box) into
 * c. Returns 0, or -1 with err "path:line: problem" and c empty. */
int md_read_data(const char *path, int periodic, md_config_t *c, char *err, size_t errlen);
/* Reads an extended XYZ frame as md_write_xyz writes it (diagonal Lattice,
 * Properties=species:S:1:id:I:1:pos:R:3:velo:R:3); errors as md_read_data. */
int md_read_xyz(const char *path, int periodic, md_config_t *c, char *err, size_t errlen);
void md_config_free(md_config_t *c);
/* Pushes c's particles that fall in my blocks; sets s->natoms. */
int md_config_place(md_sim_t *s, const md_config_t *c, char *err, size_t errlen);

/* scenario.c */
int md_scenario_create(md_sim_t *s, char *err, size_t errlen);

/* lb.c: ballast's task tree, load balancing and PIA listing */
/* Defines the phase tasks (every strategy). Returns 0 or a BALLAST_E* code. */
int md_phases_define(md_sim_t *s);
/* Collective: defines "md" and my blocks as tasks, creates the load-balancing
 * context and switches s->comm to the context's communicator. */
int md_lb_init(md_sim_t *s);
/* Collective: one rta_lb_perform() call; after a remap adopts the
 * new owners (and, in placement mode, the new communicator and rank). Sets
 * *remapped: 0 no remap, 1 a remap that moved blocks, 2 a committed remap
 * whose mapping moved nothing. */
int md_lb_step(md_sim_t *s, int *remapped);
/* Collective: the context's statistics, destroys it (s->comm back to the
 * world), removes every task. */
void md_lb_finish(md_sim_t *s);
/* Rank 0 prints the phases' PIA region data (max over ranks of wtime, mtime). */
void md_pia_listing(const md_sim_t *s);

/* summary.c */
typedef struct {
  double *wall;      /* per step: max over ranks of wall time */
  double *cmax;      /* per step: max over ranks of compute time */
  double *cavg;      /* per step: mean over ranks of compute time */
  int *lbev;         /* per step (trace only): 1 remap moved blocks, 2 remap moved none */
} md_series_t;
/* End-of-run figures gathered on every rank (md_report prints on rank 0). */
typedef struct {
  double e0, e1, ke1, pe1;   /* total energy at start and end, end split */
  double t0, t1;             /* temperature at start and end (md_temperature) */
  double drift, drift_max;   /* |E - E0| / |E0| at the end, max over samples */
  double mom0[3], mom1[3];   /* total momentum at start and end */
  double pos_min, pos_max;   /* extreme coordinates over all particles */
  double wall_total;         /* seconds of the time-step loop */
  double cpu_total;          /* CPU seconds of the loop, summed over ranks */
  double imb_first, imb_last, imb_run; /* md_imbalance of the first, last window, run */
  long particles_end;
  uint64_t id_sum, id_xor, id_hash;
} md_result_t;
double md_median(const double *v, int n);
/* Collective: THE imbalance of ballast-md (summary and progress lines): max
 * over ranks / mean over ranks of each rank's force time summed over steps
 * [from, to) (tforce: this rank's force seconds per step). Summing before
 * the ratio makes it robust to a rank losing its core for a moment. Built
 * from the times ballast's policy judges (each block's force time is its
 * task time; the policy takes per-rank medians where this takes sums).
 * 1 when no time was measured. */
double md_imbalance(const md_sim_t *s, const double *tforce, int from, int to);
/* Collective: sum, xor and hash-sum of all particle ids (out[3]). */
int md_id_checksum(const md_sim_t *s, uint64_t out[3]);
/* Rank 0 prints the human summary (unless --json-only) and the JSON line. */
void md_report(const md_sim_t *s, const md_series_t *ser, const md_result_t *r);
/* Rank 0: one line per step (step, wall max, compute max, compute mean,
 * imbalance, ballast remap 0/1/2) into path; a warning on stderr when it cannot be written. */
void md_write_trace(const md_sim_t *s, const md_series_t *ser, const char *path);

#endif
