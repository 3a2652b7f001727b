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
 *       of each block; est_work is its particle count, its declared partners
 *       are its neighbour blocks with the ghost bytes they exchange.
 * A moving block's state is [block, n, x[n] y z vx vy vz fx fy fz, id[n]]
 * (doubles; ids bit-copied): size() = 8 (2 + 10 n) bytes, pack() writes it
 * on the source, unpack() rebuilds the block's arrays on the destination,
 * release() frees them where the block no longer lives.
 */
#include "md.h"

#include <ballast/common.h>
#include <ballast/pia.h>
#include <ballast/rta.h>
#include <stdlib.h>
#include <string.h>

static const char *phase_names[] = {"forces", "integrate", "halo", "migrate"};

int md_phases_define(md_sim_t *s) {
  const char *rn = "step";
  rta_task_t *ph[4];
  int rc = rta_task_define(NULL, 1, &rn, NULL, &s->ph_step);
  if (rc) return rc;
  if ((rc = rta_task_define(s->ph_step, 4, phase_names, NULL, ph))) return rc;
  s->ph_forces = ph[0];
  s->ph_integrate = ph[1];
  s->ph_halo = ph[2];
  s->ph_migrate = ph[3];
  return 0;
}

/* Block index of a task "md/block_<b>", or -1. */
static int block_of(const md_sim_t *s, rta_task_t *t) {
  const char *n = rta_task_name(t);
  if (!n || strncmp(n, "block_", 6) != 0) return -1;
  char *end;
  long b = strtol(n + 6, &end, 10);
  return (*end == '\0' && b >= 0 && b < s->nblocks) ? (int)b : -1;
}

static int cb_size(rta_task_t *t, size_t *len, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0) return 1;
  *len = sizeof(double) * (2 + 10 * (size_t)s->blocks[b].n);
  return 0;
}

static int cb_pack(rta_task_t *t, void *buf, size_t len, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0) return 1;
  const md_block_t *blk = &s->blocks[b];
  size_t n = (size_t)blk->n;
  if (len != sizeof(double) * (2 + 10 * n)) return 1;
  double *w = buf;
  w[0] = b;
  w[1] = (double)n;
  const double *arr[9] = {blk->x, blk->y, blk->z, blk->vx, blk->vy, blk->vz,
                          blk->fx, blk->fy, blk->fz};
  for (int a = 0; a < 9; a++)
    if (n) memcpy(w + 2 + a * n, arr[a], sizeof(double) * n);
  if (n) memcpy(w + 2 + 9 * n, blk->id, sizeof(int64_t) * n);
  return 0;
}

static int cb_unpack(rta_task_t *t, const void *buf, size_t len, void *user) {
  md_sim_t *s = user;
  int b = block_of(s, t);
  if (b < 0 || len < 2 * sizeof(double)) return 1;
  const double *w = buf;
  if ((int)w[0] != b || w[1] < 0) return 1;
  size_t n = (size_t)w[1];
  if (len != sizeof(double) * (2 + 10 * n)) return 1;
  md_block_t *blk = &s->blocks[b];
  md_block_free(blk); /* a block this rank did not own holds nothing */
  if (md_block_reserve(blk, (int)n)) return 1;
  double *arr[9] = {blk->x, blk->y, blk->z, blk->vx, blk->vy, blk->vz,
                    blk->fx, blk->fy, blk->fz};
  for (int a = 0; a < 9; a++)
    if (n) memcpy(arr[a], w + 2 + a * n, sizeof(double) * n);
  if (n) memcpy(blk->id, w + 2 + 9 * n, sizeof(int64_t) * n);
  blk->n = (int)n;
  return 0;
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
  int bc[3], cc[3];
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
  double n = s->blocks[b].n, vol = s->L[0] * s->L[1] * s->L[2] / s->nblocks;
  double r = MD_RC + s->p.skin;
  return n + n * (n / vol) * (2.0 / 3.0) * 3.14159265358979 * r * r * r;
}

int md_lb_init(md_sim_t *s) {
  int rc;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.est_work = 0;
  rp.serial = (rta_serial_t){cb_size, cb_pack, cb_unpack, cb_release};
  rp.user = s;
  const char *rn = "md";
  if ((rc = rta_task_define(NULL, 1, &rn, &rp, &s->md_root))) return rc;
  s->btask = calloc((size_t)s->nblocks, sizeof *s->btask);
  int n = s->nmine;
  char (*names)[32] = calloc((size_t)(n ? n : 1), sizeof *names);
  const char **np = calloc((size_t)(n ? n : 1), sizeof *np);
  rta_task_params_t *par = calloc((size_t)(n ? n : 1), sizeof *par);
  rta_comm_est_t *ce = calloc((size_t)(n ? n : 1) * 26, sizeof *ce);
  char (*pk)[32] = calloc((size_t)(n ? n : 1) * 26, sizeof *pk);
  rta_task_t **out = calloc((size_t)(n ? n : 1), sizeof *out);
  rc = (!s->btask || !names || !np || !par || !ce || !pk || !out) ? BALLAST_ENOMEM : 0;
  for (int k = 0; !rc && k < n; k++) {
    int b = s->mine[k], nb[26];
    snprintf(names[k], sizeof names[k], "block_%d", b);
    np[k] = names[k];
    par[k] = (rta_task_params_t)RTA_TASK_PARAMS_INIT;
    par[k].est_work = est_work(s, b);
    par[k].state_size = sizeof(double) * (2 + 10 * (size_t)s->blocks[b].n);
    int m = md_block_neighbours(s, b, nb);
    for (int j = 0; j < m; j++) {
      snprintf(pk[26 * k + j], sizeof pk[0], "md/block_%d", nb[j]);
      ce[26 * k + j].key = pk[26 * k + j];
      ce[26 * k + j].bytes = ghost_bytes(s, b, nb[j]);
    }
    par[k].ncomm = m;
    par[k].comm = ce + 26 * k;
  }
  if (!rc && n > 0) rc = rta_task_define(s->md_root, n, np, par, out);
  for (int k = 0; !rc && k < n; k++) s->btask[s->mine[k]] = out[k];
  free(names); free(np); free(par); free(ce); free(pk); free(out);
  /* every rank goes into the (collective) context definition, which fails
   * everywhere when one rank's tree is incomplete */
  /* Per-block times are a few hundred microseconds: on a loaded machine a
   * single preemption charged to one block dominates it, so the cost model
   * averages over 20 steps instead of 10. */
  rta_cost_config_t cc = {20, 3};
  if (!rc) rc = rta_cost_config_set(&cc);
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.strategy = s->p.lb_random ? RTA_MAP_RANDOM : RTA_MAP_TWOPHASE;
  cfg.seed = (unsigned)s->p.seed;
  /* balance the particle counts (each block's est_work) at the first call,
   * as LAMMPS does before step 1; measurements take over after */
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
  if (!rc && rta_lb_policy(s->lb)->mode == RTA_POLICY_AUTO) {
    int remapped;
    rc = md_lb_step(s, &remapped);
  }
  return rc;
}

/* After a committed remap: owners from rta, my tasks, neighbour ranks. */
static int adopt(md_sim_t *s) {
  MPI_Comm_rank(s->comm, &s->rank);
  for (int b = 0; b < s->nblocks; b++) {
    char key[32];
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
     * (rta_map_tasks weighs migration cost) leaves the owner map as it was:
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
  enum { NR = 5 };
  double mine[NR * 3], *all = NULL;
  for (int r = 0; r < NR; r++) {
    pia_regdata_t d;
    pia_regid_t id = pia_region_find(regs[r]);
    int ok = id >= 0 && pia_region_data(id, &d) == 0;
    mine[3 * r] = ok ? d.wtime : -1;
    mine[3 * r + 1] = ok ? d.mtime : -1;
    mine[3 * r + 2] = ok ? (double)d.count64 : -1;
  }
  if (s->rank == 0) all = malloc(sizeof(double) * NR * 3 * (size_t)s->size);
  MPI_Gather(mine, NR * 3, MPI_DOUBLE, all, NR * 3, MPI_DOUBLE, 0, s->comm);
  if (s->rank != 0 || !all) {
    free(all);
    return;
  }
  printf("\n== PIA region data of the phases (pia_region_find, "
         "pia_region_data) ==\n");
  printf("%-5s %-16s %12s %12s %10s\n", "rank", "region", "wtime (s)", "mtime (s)", "count");
  for (int q = 0; q < s->size; q++)
    for (int r = 0; r < NR; r++) {
      const double *v = all + (size_t)q * NR * 3 + 3 * r;
      if (v[2] < 0)
        printf("%-5d %-16s %12s %12s %10s\n", q, regs[r], "-", "-", "-");
      else
        printf("%-5d %-16s %12.6f %12.6f %10.0f\n", q, regs[r], v[0], v[1], v[2]);
    }
  fflush(stdout);
  free(all);
}
