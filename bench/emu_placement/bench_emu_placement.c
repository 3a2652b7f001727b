/* Placement benchmark on the emulated cluster (issue 7 part 3): 4 ranks on
 * 2 nodes x 2 ranks with a bandwidth-shaped inter-node link (run.sh sets it
 * up). Two communication-bound workloads, 4 tasks each, task t run by rank t
 * of the communicator of the placement under test:
 *  - pairs: the heavy pairs (t0,t2), (t1,t3) exchange HEAVY bytes per step,
 *    the light pairs (t0,t1), (t2,t3) 4 KiB: the default rank order (ranks
 *    0,1 on node A) splits both heavy pairs across the link;
 *  - stencil: a 5-point Jacobi sweep on a 2x2 process grid, task t at
 *    (t % 2, t / 2) (x fastest, like a row-major Cartesian order), each block
 *    NX x NY doubles with NX >> NY: the y-halos (NX doubles) are heavy, the
 *    x-halos (NY doubles) light, and the default order puts the y-neighbours
 *    (t, t ^ 2) on different nodes. The blocks are the tasks' registered
 *    state, moved by ballast's remap.
 * Placements: default (MPI_COMM_WORLD), random (MPI_Comm_split by seeded
 * random permutations, a different one each repetition, NRAND in turn),
 * ballast (a load-balancing context in placement mode with the explicit
 * policy and the two-phase strategy: a few exchanges measured by mon, then
 * rta_lb_perform(), then the exchange runs through the returned
 * communicator). One run, repetitions interleaved over the placements; the
 * time of one exchange is the max over ranks; medians and their ratios to
 * the default placement are printed. The stencil's halo exchange is timed
 * alone (the "time per exchange"); its Jacobi sweep, the same work
 * in every placement, is timed apart after a barrier and reported as the
 * extra row stencil+sweep (exchange + sweep), so the sweep of 4 ranks
 * sharing 2 cores no longer hides what placement changes. The stencil's final blocks are compared
 * across placements (bitwise equal checksums), so each placement computed
 * the same thing.
 * usage: bench_emu_placement [reps [heavy_bytes [seed]]] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ballast/rta_lb.h>
#include "bench_util.h"

enum { NT = 4, LIGHT = 4096, WARM = 3, NRAND = 6, NPLACE = 3, HOST = 64 };
enum { NY = 8 }; /* stencil block: NX x NY interior cells, NX from heavy bytes */

static const char *place_name[NPLACE] = {"default", "random", "ballast"};

#define DIE(...)                                                             \
  do {                                                                       \
    fprintf(stderr, __VA_ARGS__);                                            \
    fputc('\n', stderr);                                                     \
    MPI_Abort(MPI_COMM_WORLD, 1);                                            \
  } while (0)

static int nx_cells; /* stencil block width */

/* ---- workloads ---------------------------------------------------------- */

static void pairs_step(MPI_Comm c, int t, char *sbuf, char *rbuf, int heavy) {
  int h = t ^ 2, l = t ^ 1; /* t ^ 2 == (t + 2) % 4 */
  sbuf[0] = (char)(t + 1);
  if (MPI_Sendrecv(sbuf, heavy, MPI_BYTE, h, 1, rbuf, heavy, MPI_BYTE, h, 1, c,
                   MPI_STATUS_IGNORE) ||
      MPI_Sendrecv(sbuf, LIGHT, MPI_BYTE, l, 2, rbuf + heavy, LIGHT, MPI_BYTE,
                   l, 2, c, MPI_STATUS_IGNORE))
    DIE("pairs exchange failed");
  if (rbuf[0] != (char)(h + 1))
    DIE("pairs: task %d got the heavy message of the wrong task", t);
}

/* Block with a ghost layer: (nx + 2) x (NY + 2), index x + (nx + 2) * y. */
#define AT(u, x, y) ((u)[(size_t)(x) + (size_t)(nx_cells + 2) * (size_t)(y)])

static double *block_new(int t) {
  size_t n = (size_t)(nx_cells + 2) * (NY + 2);
  double *u = calloc(n, sizeof *u);
  if (!u)
    DIE("out of memory");
  for (int y = 1; y <= NY; y++)
    for (int x = 1; x <= nx_cells; x++)
      AT(u, x, y) = (double)((t * 7919 + x * 31 + y * 17) % 1000) / 1000.0;
  return u;
}

/* The halo exchange of one stencil step (the part placement can change). */
static void stencil_halo(MPI_Comm c, int t, double *u, double *col_s,
                         double *col_r) {
  int px = t % 2, py = t / 2, xn = t ^ 1, yn = t ^ 2;
  /* y-halo: the row next to the neighbour (py 0: top row NY -> ghost NY+1). */
  int send_row = py == 0 ? NY : 1, ghost_row = py == 0 ? NY + 1 : 0;
  if (MPI_Sendrecv(&AT(u, 1, send_row), nx_cells, MPI_DOUBLE, yn, 3,
                   &AT(u, 1, ghost_row), nx_cells, MPI_DOUBLE, yn, 3, c,
                   MPI_STATUS_IGNORE))
    DIE("stencil y-halo failed");
  int send_col = px == 0 ? nx_cells : 1, ghost_col = px == 0 ? nx_cells + 1 : 0;
  for (int y = 1; y <= NY; y++)
    col_s[y - 1] = AT(u, send_col, y);
  if (MPI_Sendrecv(col_s, NY, MPI_DOUBLE, xn, 4, col_r, NY, MPI_DOUBLE, xn, 4, c,
                   MPI_STATUS_IGNORE))
    DIE("stencil x-halo failed");
  for (int y = 1; y <= NY; y++)
    AT(u, ghost_col, y) = col_r[y - 1];
}

/* One Jacobi sweep into tmp, copied back (the same work in every placement). */
static void stencil_sweep(double *u, double *tmp) {
  int W = nx_cells + 2;
  for (int y = 1; y <= NY; y++)
    for (int x = 1; x <= nx_cells; x++)
      tmp[x + (size_t)W * y] = 0.2 * (AT(u, x, y) + AT(u, x - 1, y) +
                                      AT(u, x + 1, y) + AT(u, x, y - 1) +
                                      AT(u, x, y + 1));
  for (int y = 1; y <= NY; y++)
    memcpy(&AT(u, 1, y), &tmp[1 + (size_t)W * y], (size_t)nx_cells * sizeof *u);
}

/* Halo exchange then one Jacobi sweep. */
static void stencil_step(MPI_Comm c, int t, double *u, double *tmp,
                         double *col_s, double *col_r) {
  stencil_halo(c, t, u, col_s, col_r);
  stencil_sweep(u, tmp);
}

static uint64_t block_sum(const double *u) {
  uint64_t h = 1469598103934665603ull;
  for (int y = 1; y <= NY; y++)
    for (int x = 1; x <= nx_cells; x++) {
      uint64_t b;
      memcpy(&b, &AT(u, x, y), sizeof b);
      h = (h ^ b) * 1099511628211ull;
    }
  return h;
}

/* ---- ballast tasks: a stencil task's state is its block ------------------- */

typedef struct {
  int index;
  double *u;
} btask_t;

static int b_size(rta_task_t *t, size_t *len, void *user) {
  (void)t;
  (void)user;
  *len = sizeof(int);
  return 0;
}
static int b_pack(rta_task_t *t, void *buf, size_t len, void *user) {
  (void)user;
  (void)len;
  memcpy(buf, &((btask_t *)rta_task_data(t))->index, sizeof(int));
  return 0;
}
static int b_unpack(rta_task_t *t, const void *buf, size_t len, void *user) {
  (void)user;
  btask_t *p = calloc(1, sizeof *p);
  if (!p || len != sizeof(int))
    return 1;
  memcpy(&p->index, buf, sizeof(int));
  rta_task_set_data(t, p);
  int64_t z[2] = {0, 0};
  return rta_task_array_register(t, (void **)&p->u, rta_type_elem(RTA_DOUBLE), 2, z);
}
static void b_release(rta_task_t *t, void *user) {
  (void)user;
  free(rta_task_data(t));
}

/* Defines root \a rn with task t<me> (declared partners as the workload's)
 * and a placement-mode context; runs WARM exchanges through its
 * communicator, then the remap. Returns the new communicator. */
static MPI_Comm ballast_place(const char *rn, int stencil, int me, int heavy,
                              rta_lb_context_t **ctx, btask_t **bt,
                              char *sbuf, char *rbuf, double *tmp,
                              double *cs, double *cr, double *secs) {
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  if (stencil)
    rp.serial = (rta_serial_t){b_size, b_pack, b_unpack, b_release};
  rta_task_t *root, *t;
  if (rta_task_define(NULL, 1, &rn, &rp, &root))
    DIE("define root %s", rn);
  char name[8], hk[32], lk[32];
  snprintf(name, sizeof name, "t%d", me);
  snprintf(hk, sizeof hk, "%s/t%d", rn, me ^ 2);
  snprintf(lk, sizeof lk, "%s/t%d", rn, me ^ 1);
  rta_comm_est_t ce[2] = {{hk, stencil ? nx_cells * 8.0 : heavy},
                          {lk, stencil ? NY * 8.0 : LIGHT}};
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.ncomm = 2;
  p.comm = ce;
  const char *nm = name;
  if (rta_task_define(root, 1, &nm, &p, &t))
    DIE("define task");
  *bt = NULL;
  if (stencil) {
    btask_t *b = calloc(1, sizeof *b);
    if (!b)
      DIE("out of memory");
    b->index = me;
    b->u = block_new(me);
    int64_t dims[2] = {NY + 2, nx_cells + 2};
    if (rta_task_array_register(t, (void **)&b->u, rta_type_elem(RTA_DOUBLE), 2, dims))
      DIE("register array");
    rta_task_set_data(t, b);
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_TWOPHASE;
  cfg.measure_links = 1; /* ballast's measured-model mapping */
  MPI_Comm c;
  if (rta_lb_create(MPI_COMM_WORLD, root, &cfg, ctx, &c))
    DIE("rta_lb_create");
  for (int k = 0; k < WARM; k++) {
    if (stencil)
      stencil_step(c, me, ((btask_t *)rta_task_data(t))->u, tmp, cs, cr);
    else
      pairs_step(c, me, sbuf, rbuf, heavy);
    if (k < WARM - 1 && rta_step())
      DIE("rta_step");
  }
  double t0 = MPI_Wtime();
  if (rta_lb_perform(*ctx, &c))
    DIE("rta_lb_perform");
  *secs = MPI_Wtime() - t0;
  if (stencil) {
    *bt = rta_task_data(rta_lb_local_task(*ctx, 0));
    int r;
    MPI_Comm_rank(c, &r);
    if ((*bt)->index != r)
      DIE("rank %d hosts task %d after the remap", r, (*bt)->index);
  }
  return c;
}

/* ---- helpers ------------------------------------------------------------- */

/* The node (A: world rank 0's, B: the other) of the process running each
 * task in c, as "t0:A t1:A ..." for the log; returns the heavy pairs (t, t^2;
 * (t + 2) % 4 is the same) split across nodes. Collective over c and world. */
static int describe(MPI_Comm c, char *out, size_t len) {
  char me[HOST] = {0}, all[NT][HOST], first[HOST];
  gethostname(me, sizeof me - 1);
  MPI_Allgather(me, HOST, MPI_CHAR, all, HOST, MPI_CHAR, c);
  char w[NT][HOST];
  MPI_Allgather(me, HOST, MPI_CHAR, w, HOST, MPI_CHAR, MPI_COMM_WORLD);
  memcpy(first, w[0], HOST);
  size_t o = 0;
  int split = 0;
  for (int t = 0; t < NT; t++) {
    o += (size_t)snprintf(out + o, len - o, "%st%d:%c", t ? " " : "", t,
                          strcmp(all[t], first) ? 'B' : 'A');
    split += strcmp(all[t], all[t ^ 2]) != 0; /* heavy partner: t ^ 2 */
  }
  return split / 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (np != NT)
    DIE("run with 4 ranks (2 nodes x 2)");
  int reps = argc > 1 ? atoi(argv[1]) : 21;
  int heavy = argc > 2 ? atoi(argv[2]) : 512 << 10;
  unsigned seed = argc > 3 ? (unsigned)atoi(argv[3]) : 12345u;
  if (reps < 1 || heavy < 8 * 16)
    DIE("usage: bench_emu_placement [reps>=1 [heavy_bytes>=128 [seed]]]");
  nx_cells = heavy / 8;

  /* The measured model, for the record. */
  rta_hw_options_t ho;
  rta_hw_options_init(&ho);
  ho.measure_links = 1;
  rta_hw_t *hw = NULL;
  if (rta_hw_discover_ex(MPI_COMM_WORLD, &ho, &hw))
    DIE("rta_hw_discover_ex");
  double lat = 0, bw = 0;
  if (rta_hw_nnodes(hw) != 2 || rta_hw_link(hw, 0, 1, &lat, &bw))
    DIE("expected 2 nodes with a measured link");
  if (me == 0)
    printf("measured inter-node link: latency %.1f us, bandwidth %.2f MB/s\n",
           lat * 1e6, bw / 1e6);
  rta_hw_destroy(hw);

  char *sbuf = calloc(1, (size_t)heavy + LIGHT);
  char *rbuf = calloc(1, (size_t)heavy + LIGHT);
  double *tmp = calloc((size_t)(nx_cells + 2) * (NY + 2), sizeof *tmp);
  double cs[NY], cr[NY];
  if (!sbuf || !rbuf || !tmp)
    DIE("out of memory");

  /* Random placements: seeded permutations, the same on every rank. */
  MPI_Comm rnd[NRAND];
  srand(seed);
  for (int k = 0; k < NRAND; k++) {
    int perm[NT];
    for (int i = 0; i < NT; i++)
      perm[i] = i;
    for (int i = NT - 1; i > 0; i--) {
      int j = rand() % (i + 1), x = perm[i];
      perm[i] = perm[j];
      perm[j] = x;
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, perm[me], &rnd[k]);
  }

  /* ballast: one context per workload, each remapped after its warm-up. */
  rta_lb_context_t *ctx[2];
  btask_t *bt_unused, *bt = NULL;
  double remap_s[2];
  MPI_Comm bal[2];
  bal[0] = ballast_place("pairs", 0, me, heavy, &ctx[0], &bt_unused, sbuf,
                         rbuf, tmp, cs, cr, &remap_s[0]);
  bal[1] = ballast_place("stencil", 1, me, heavy, &ctx[1], &bt, sbuf, rbuf,
                         tmp, cs, cr, &remap_s[1]);

  /* Stencil blocks of the default and random placements (task = rank). */
  int r_def = me, r_rnd[NRAND], r_bal;
  for (int k = 0; k < NRAND; k++)
    MPI_Comm_rank(rnd[k], &r_rnd[k]);
  MPI_Comm_rank(bal[1], &r_bal);
  double *u_def = block_new(r_def);
  /* Each random permutation keeps its own blocks (task r_rnd[k]'s). */
  double *u_rnd[NRAND];
  int sweeps_rnd[NRAND] = {0};
  for (int k = 0; k < NRAND; k++)
    u_rnd[k] = block_new(r_rnd[k]);

  /* rows: the pairs' exchange, the stencil's halo exchange, and the
   * stencil's whole step (exchange + the sweep, timed apart) */
  static const char *wl_name[3] = {"pairs", "stencil", "stencil+sweep"};
  double *t[3][NPLACE];
  for (int w = 0; w < 3; w++)
    for (int p = 0; p < NPLACE; p++)
      if (!(t[w][p] = malloc((size_t)reps * sizeof(double))))
        DIE("out of memory");
  for (int i = 0; i < reps; i++)
    for (int w = 0; w < 2; w++)
      for (int p = 0; p < NPLACE; p++) {
        int k = i % NRAND;
        MPI_Comm c = p == 0 ? MPI_COMM_WORLD : p == 1 ? rnd[k] : bal[w];
        int task;
        MPI_Comm_rank(c, &task);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        double *u = p == 0 ? u_def : p == 1 ? u_rnd[k] : bt->u;
        if (w == 0)
          pairs_step(c, task, sbuf, rbuf, heavy);
        else
          stencil_halo(c, task, u, cs, cr);
        double dt = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[w][p][i] = mx;
        if (w == 1) {
          /* the sweep, timed apart: the whole step is exchange + sweep */
          MPI_Barrier(MPI_COMM_WORLD);
          t0 = MPI_Wtime();
          stencil_sweep(u, tmp);
          dt = MPI_Wtime() - t0;
          MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          t[2][p][i] = t[1][p][i] + mx;
        }
        if (w == 1 && p == 1)
          sweeps_rnd[k]++;
      }

  /* Check: ballast's blocks (WARM + reps sweeps) equal those of a reference
   * run in the default placement with as many sweeps, and each random
   * permutation's blocks those of a reference run of its sweep count. */
  double *u_ref = block_new(me);
  for (int i = 0; i < WARM + reps; i++)
    stencil_step(MPI_COMM_WORLD, me, u_ref, tmp, cs, cr);
  uint64_t mine[2] = {block_sum(u_ref), bt ? block_sum(bt->u) : 0};
  uint64_t ref[NT], got[NT];
  MPI_Allgather(&mine[0], 1, MPI_UINT64_T, ref, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  MPI_Allgather(&mine[1], 1, MPI_UINT64_T, got, 1, MPI_UINT64_T, bal[1]);
  int ok = memcmp(ref, got, sizeof ref) == 0;
  /* Random: permutation k ran sweeps_rnd[k] sweeps of task r_rnd[k]. */
  for (int k = 0; k < NRAND; k++) {
    double *v = block_new(me);
    for (int i = 0; i < sweeps_rnd[k]; i++)
      stencil_step(MPI_COMM_WORLD, me, v, tmp, cs, cr);
    uint64_t a = block_sum(v), b = block_sum(u_rnd[k]), all_a[NT], all_b[NT];
    MPI_Allgather(&a, 1, MPI_UINT64_T, all_a, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    MPI_Allgather(&b, 1, MPI_UINT64_T, all_b, 1, MPI_UINT64_T, rnd[k]);
    ok &= memcmp(all_a, all_b, sizeof all_a) == 0;
    free(v);
  }
  if (!ok)
    DIE("stencil results differ between placements");

  if (me == 0) {
    printf("4 ranks, 2 nodes x 2; heavy %d B, light %d B; stencil block "
           "%d x %d doubles (y-halo %d B, x-halo %d B); %d repetitions\n",
           heavy, LIGHT, nx_cells, NY, nx_cells * 8, NY * 8, reps);
    printf("ballast remap (mapping + migration): pairs %.3f s, stencil %.3f s\n",
           remap_s[0], remap_s[1]);
  }
  char desc[128];
  for (int w = 0; w < 2; w++) {
    int s = describe(MPI_COMM_WORLD, desc, sizeof desc);
    if (me == 0)
      printf("%-8s default : %s (heavy pairs split: %d)\n", wl_name[w], desc, s);
    s = describe(bal[w], desc, sizeof desc);
    if (me == 0)
      printf("%-8s ballast : %s (heavy pairs split: %d)\n", wl_name[w], desc, s);
    int splits = 0;
    for (int k = 0; k < NRAND; k++)
      splits += describe(rnd[k], desc, sizeof desc);
    if (me == 0)
      printf("%-8s random  : %d permutations, %d heavy pairs split in all "
             "(of %d)\n", wl_name[w], NRAND, splits, 2 * NRAND);
  }
  if (me == 0) {
    printf("\n%-13s %12s %12s %12s %10s %10s\n", "workload", "default ms",
           "random ms", "ballast ms", "rnd/def", "bal/def");
    for (int w = 0; w < 3; w++) {
      double m[NPLACE];
      for (int p = 0; p < NPLACE; p++)
        m[p] = bench_median(t[w][p], reps);
      printf("%-13s %12.3f %12.3f %12.3f %10.3f %10.3f\n", wl_name[w],
             m[0] * 1e3, m[1] * 1e3, m[2] * 1e3, m[1] / m[0], m[2] / m[0]);
      printf("RESULT %s ballast/default %.3f random/default %.3f\n",
             wl_name[w], m[2] / m[0], m[1] / m[0]);
    }
    printf("(medians of the per-exchange time, max over ranks; ratios to "
           "the %s placement; stencil+sweep adds the Jacobi sweep, timed "
           "apart after a barrier)\n", place_name[0]);
  }

  for (int w = 0; w < 3; w++)
    for (int p = 0; p < NPLACE; p++)
      free(t[w][p]);
  for (int k = 0; k < NRAND; k++) {
    free(u_rnd[k]);
    MPI_Comm_free(&rnd[k]);
  }
  free(u_def);
  free(u_ref);
  if (bt) {
    free(bt->u);
    free(bt);
  }
  rta_lb_destroy(ctx[0]);
  rta_lb_destroy(ctx[1]);
  rta_task_t *root;
  if (!rta_task_find("pairs", &root))
    rta_task_remove(root);
  if (!rta_task_find("stencil", &root))
    rta_task_remove(root);
  free(sbuf);
  free(rbuf);
  free(tmp);
  MPI_Finalize();
  return 0;
}
