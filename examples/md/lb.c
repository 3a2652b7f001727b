/*
 * ballast-md and ballast: the phases as rta tasks, the blocks as the tasks of
 * a load-balancing context (--strategy ballast), block state moved by
 * ballast through serialisation callbacks, and the PIA listing (--pia).
 *
 * Task tree on every rank:
 *   step, step/forces, step/integrate, step/halo, step/migrate
 *       per-rank phase tasks (never mapped: they are not under "md"); each
 *       is clocked with rta_task_begin/rta_task_end, so its mon region (named
 *       by the key) holds the phase's wall time, MPI time and count.
 *   md, md/block_<b> (ballast strategy only)
 *       "md" is the context root, defined on every rank with the callbacks;
 *       each rank defines the blocks it owns. A block's force computation is
 *       clocked as its task each step, so the cost model measures the work
 *       of each block; est_work is its particles plus its list pairs, its declared partners
 *       are its neighbour blocks with the ghost bytes they exchange.
 * A moving block's state is [block, n, x[n] y z vx vy vz fx fy fz, id[n]]
 * (doubles; ids bit-copied): size() = 8 (2 + 10 n) bytes, pack() writes it
 * on the source, unpack() rebuilds the block's arrays on the destination,
 * release() frees them where the block no longer lives.
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Room for a task name "block_<b>" or key "md/block_<b>" of an int b. */
#define NAME_LEN 32
/* Steps the cost model averages a block's time over (ballast's default is
 * 10): per-block times are a few hundred microseconds, and on a loaded
 * machine one preemption charged to a block would dominate a shorter window. */
#define COST_WINDOW 20
/* Measured steps before a block's measurements replace its estimate
 * (ballast's default). */
#define COST_MIN_STEPS 3

static const char *phase_names[] = {"forces", "integrate", "halo", "migrate"};
enum { NPHASES = sizeof phase_names / sizeof phase_names[0] };

int md_phases_define(md_sim_t *s) {
  const char *rn = "step";
  rta_task_t *ph[NPHASES];
  int rc = rta_task_define(NULL, 1, &rn, NULL, &s->ph_step);
  if (rc) return rc;
  if ((rc = rta_task_define(s->ph_step, NPHASES, phase_names, NULL, ph))) return rc;
  s->ph_forces = ph[0];
  s->ph_integrate = ph[1];
  s->ph_halo = ph[2];
  s->ph_migrate = ph[3];
  return 0;
}

/* Block index of a task "md/block_<b>", or -1. */
static int block_of(const md_sim_t *s, rta_task_t *t) {
  const char *n = rta_task_name(t);
  static const char prefix[] = "block_";
  const size_t plen = sizeof prefix - 1;
  if (!n || strncmp(n, prefix, plen) != 0) return -1;
  char *end;
  long b = strtol(n + plen, &end, 10);
  return (*end == '\0' && b >= 0 && b < s->nblocks) ? (int)b : -1;
}

static int cb_size(rta_task_t *t, size_t *len, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0) return 1;
  *len = sizeof(double) * md_block_record_len((size_t)s->blocks[b].n);
  return 0;
}

static int cb_pack(rta_task_t *t, void *buf, size_t len, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0) return 1;
  if (len != sizeof(double) * md_block_record_len((size_t)s->blocks[b].n)) return 1;
  md_block_pack(&s->blocks[b], b, buf);
  return 0;
}

static int cb_unpack(rta_task_t *t, const void *buf, size_t len, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0 || len < MD_BREC_HEAD * sizeof(double)) return 1;
  const double *w = buf;
  if ((int)w[0] != b || w[1] < 0) return 1;
  if (len != sizeof(double) * md_block_record_len((size_t)w[1])) return 1;
  /* a block this rank did not own holds nothing: unpack frees it first */
  return md_block_unpack(&s->blocks[b], w) ? 1 : 0;
}

static void cb_release(rta_task_t *t, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0) return;
  md_block_free(&s->blocks[b]);
}

/* Ghost bytes block b sends its neighbour c per step: the particles of the
 * cell layers facing c (one layer per dimension where they differ). */
static double ghost_bytes(const md_sim_t *s, int b, int c) {
  int bc[MD_DIM], cc[MD_DIM];
  md_block_coords(s, b, &bc[0], &bc[1], &bc[2]);
  md_block_coords(s, c, &cc[0], &cc[1], &cc[2]);
  double f = 1.0;
  for (int d = 0; d < MD_DIM; d++) {
    if (bc[d] == cc[d]) continue;
    int w = s->blo[d][bc[d] + 1] - s->blo[d][bc[d]];
    f /= w > 0 ? w : 1;
  }
  /* between list rebuilds a ghost's refresh carries its 3 coordinates */
  return f * s->blocks[b].n * MD_DIM * sizeof(double);
}

/* A block's estimated force work, what it costs before it is measured: its
 * particles plus the pairs within the list cut-off they are expected to
 * have at the block's own density (n x rho x 2/3 pi r^3, each pair once),
 * so a dense block weighs what its pairs cost, not just its particle
 * count. Blocks are taken to be of the average block volume. */
static double est_work(const md_sim_t *s, int b) {
  /* the set-up built the block's Verlet lists: its particles plus the pairs
   * its force loop visits are what a step costs it (md_forces) */
  const md_block_t *blk = &s->blocks[b];
  if (blk->nl.valid && blk->n > 0)
    return blk->n + blk->nl.own_off[blk->n] + blk->nl.gh_off[blk->n];
  double n = blk->n, vol = s->L[0] * s->L[1] * s->L[2] / s->nblocks;
  double r = MD_RC + s->p.skin;
  return n + n * (n / vol) * (2.0 / 3.0) * M_PI * r * r * r;
}

/* Defines the context root "md" (every rank, with the callbacks) and the
 * blocks this rank owns as its tasks, each with its estimated work, state
 * size and neighbour blocks as partners. */
static int define_block_tasks(md_sim_t *s) {
  int rc;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.est_work = 0;
  rp.serial = (rta_serial_t){cb_size, cb_pack, cb_unpack, cb_release};
  rp.user = s;
  const char *rn = "md";
  if ((rc = rta_task_define(NULL, 1, &rn, &rp, &s->md_root))) return rc;
  s->btask = calloc((size_t)s->nblocks, sizeof *s->btask);
  int n = s->nmine;
  size_t nalloc = (size_t)(n ? n : 1);
  char (*names)[NAME_LEN] = calloc(nalloc, sizeof *names);
  const char **np = calloc(nalloc, sizeof *np);
  rta_task_params_t *par = calloc(nalloc, sizeof *par);
  /* partners of my k-th block: ce[MD_NEIGHBOURS_MAX * k ...], keys in pk */
  rta_comm_est_t *ce = calloc(nalloc * MD_NEIGHBOURS_MAX, sizeof *ce);
  char (*pk)[NAME_LEN] = calloc(nalloc * MD_NEIGHBOURS_MAX, sizeof *pk);
  rta_task_t **out = calloc(nalloc, sizeof *out);
  rc = (!s->btask || !names || !np || !par || !ce || !pk || !out) ? BALLAST_ENOMEM : 0;
  for (int k = 0; !rc && k < n; k++) {
    int b = s->mine[k], nb[MD_NEIGHBOURS_MAX];
    snprintf(names[k], sizeof names[k], "block_%d", b);
    np[k] = names[k];
    par[k] = (rta_task_params_t)RTA_TASK_PARAMS_INIT;
    par[k].est_work = est_work(s, b);
    par[k].state_size = sizeof(double) * md_block_record_len((size_t)s->blocks[b].n);
    int m = md_block_neighbours(s, b, nb);
    rta_comm_est_t *mine = ce + MD_NEIGHBOURS_MAX * k;
    for (int j = 0; j < m; j++) {
      char *key = pk[MD_NEIGHBOURS_MAX * k + j];
      snprintf(key, sizeof pk[0], "md/block_%d", nb[j]);
      mine[j].key = key;
      mine[j].bytes = ghost_bytes(s, b, nb[j]);
    }
    par[k].ncomm = m;
    par[k].comm = mine;
  }
  if (!rc && n > 0) rc = rta_task_define(s->md_root, n, np, par, out);
  for (int k = 0; !rc && k < n; k++) s->btask[s->mine[k]] = out[k];
  free(names); free(np); free(par); free(ce); free(pk); free(out);
  return rc;
}

/* The forced list rebuild a remap leaves for the next step, done now:
 * particles to their blocks, new ghosts, every list built (collective). */
static int rebuild_now(md_sim_t *s) {
  int rc;
  md_wrap(s);
  if ((rc = md_migrate(s)) || (rc = md_sort_blocks(s)) || (rc = md_halo_exchange(s)))
    return rc;
  md_mark_build(s, 1);
  for (int k = 0; k < s->nmine; k++)
    if (!s->blocks[s->mine[k]].nl.valid && (rc = md_nlist_build(s, s->mine[k]))) return rc;
  return 0;
}

int md_lb_init(md_sim_t *s) {
  int rc = define_block_tasks(s);
  /* every rank goes into the (collective) context definition, which fails
   * everywhere when one rank's tree is incomplete */
  rta_cost_config_t cc = {COST_WINDOW, COST_MIN_STEPS};
  if (!rc) rc = rta_cost_config_set(&cc);
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.strategy = s->p.lb_random ? RTA_MAP_RANDOM : RTA_MAP_TWOPHASE;
  cfg.seed = (unsigned)s->p.seed;
  /* balance the blocks' estimated work at the first call (made below, in
   * the set-up), as LAMMPS does before step 1; measurements take over after */
  cfg.balance_estimates = 1;
  MPI_Comm comm;
  int rc2 = rta_lb_create(s->comm, s->md_root, &cfg, &s->lb, &comm);
  if (rc2) return rc ? rc : rc2;
  s->comm = comm;
  MPI_Comm_rank(s->comm, &s->rank);
  s->clock_blocks = 1;
  s->lb_remaps_seen = 0;
  /* Under the automatic policy the first call balances the estimates: made
   * here, in the set-up, it places the blocks before step 1, as LAMMPS's
   * fix balance does in its set-up, outside the timed loop. */
  int remapped = 0;
  if (!rc && rta_lb_policy(s->lb)->mode == RTA_POLICY_AUTO)
    rc = md_lb_step(s, &remapped);
  /* and, as LAMMPS's set-up after its balance, the moved blocks' ghosts and
   * every list are built now, not in step 1 */
  if (!rc && remapped == 1) rc = rebuild_now(s);
  return rc;
}

/* After a committed remap: owners from rta, my tasks, neighbour ranks. */
static int adopt(md_sim_t *s) {
  MPI_Comm_rank(s->comm, &s->rank);
  for (int b = 0; b < s->nblocks; b++) {
    char key[NAME_LEN];
    snprintf(key, sizeof key, "md/block_%d", b);
    int rc = rta_lb_task_owner(s->lb, key, &s->owner[b]);
    if (rc) return rc;
    s->btask[b] = NULL;
  }
  md_refresh_mine(s);
  for (int i = 0; i < rta_lb_nlocal(s->lb); i++) {
    rta_task_t *t = rta_lb_local_task(s->lb, i);
    int b = block_of(s, t);
    if (b < 0 || s->owner[b] != s->rank) return BALLAST_ESTATE;
    s->btask[b] = t;
  }
  for (int k = 0; k < s->nmine; k++)
    if (!s->btask[s->mine[k]]) return BALLAST_ESTATE;
  return md_neighbours_update(s);
}

int md_lb_step(md_sim_t *s, int *remapped) {
  *remapped = 0;
  int rc = rta_lb_perform(s->lb, &s->comm);
  if (rc) return rc;
  if ((rc = rta_lb_stats(s->lb, &s->lbst))) return rc;
  if (s->lbst.remaps != s->lb_remaps_seen) {
    s->lb_remaps_seen = s->lbst.remaps;
    /* a committed remap whose mapping keeps every block where it is
     * (rta_task_map weighs migration cost) leaves the owner map as it was:
     * "remaps" counts the owner-map changes, as for the other strategies */
    *remapped = s->lbst.tasks_moved != s->tasks_moved ? 1 : 2;
    if (*remapped == 1) s->remaps++;
    if ((rc = adopt(s))) return rc;
  }
  s->tasks_moved = (long)s->lbst.tasks_moved;
  s->bytes_moved = s->lbst.bytes_moved;
  s->lb_seconds = s->lbst.seconds_mapping + s->lbst.seconds_migrating + s->lbst.seconds_deciding;
  return 0;
}

void md_lb_finish(md_sim_t *s) {
  if (s->lb) {
    (void)rta_lb_destroy(s->lb);
    s->lb = NULL;
    s->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(s->comm, &s->rank);
  }
  free(s->btask);
  s->btask = NULL;
  s->clock_blocks = 0;
  (void)rta_reset();
}

void md_pia_listing(const md_sim_t *s) {
  static const char *regs[] = {"step", "step/forces", "step/integrate", "step/halo",
                               "step/migrate"};
  /* per region: wtime, mtime, count (-1: no data) */
  enum { NR = sizeof regs / sizeof regs[0], NV = 3 };
  double mine[NR * NV], *all = NULL;
  for (int r = 0; r < NR; r++) {
    pia_regdata_t d;
    pia_regid_t id = pia_region_find(regs[r]);
    int ok = id >= 0 && pia_region_data(id, &d) == 0;
    mine[NV * r] = ok ? d.wtime : -1;
    mine[NV * r + 1] = ok ? d.mtime : -1;
    mine[NV * r + 2] = ok ? (double)d.count64 : -1;
  }
  if (s->rank == 0) all = malloc(sizeof(double) * NR * NV * (size_t)s->size);
  MPI_Gather(mine, NR * NV, MPI_DOUBLE, all, NR * NV, MPI_DOUBLE, 0, s->comm);
  if (s->rank != 0 || !all) {
    free(all);
    return;
  }
  printf("\n== PIA region data of the phases (pia_region_find, "
         "pia_region_data) ==\n");
  printf("%-5s %-16s %12s %12s %10s\n", "rank", "region", "wtime (s)", "mtime (s)", "count");
  for (int q = 0; q < s->size; q++)
    for (int r = 0; r < NR; r++) {
      const double *v = all + (size_t)q * NR * NV + NV * r;
      if (v[2] < 0)
        printf("%-5d %-16s %12s %12s %10s\n", q, regs[r], "-", "-", "-");
      else
        printf("%-5d %-16s %12.6f %12.6f %10.0f\n", q, regs[r], v[0], v[1], v[2]);
    }
  fflush(stdout);
  free(all);
}
