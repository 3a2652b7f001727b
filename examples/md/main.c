/*
 * ballast-md: driver. main() reads as the run's steps: start (command
 * line, decomposition, initial state), prepare (first forces, warm-up,
 * ballast's context), the measured loop of velocity Verlet steps with each
 * phase clocked as a ballast monitoring region nested in "step", the end
 * figures and the reports.
 *
 * Step (velocity Verlet, mass 1):
 *   integrate: v += dt/2 f; x += dt v; walls
 *   migrate:   is a list rebuild due (collective)? If so: periodic wrap,
 *              particles that left their block go to the owning block/rank,
 *              each block sorted by cell
 *   halo:      at a rebuild, ghost copies of neighbouring boundary cells;
 *              otherwise the same ghosts' new positions
 *   forces:    f(x), potential energy (lists rebuilt where stale)
 *   integrate: v += dt/2 f
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Room for an error message (a path, a line number and the problem). */
#define ERR_LEN 512

static void die(md_sim_t *s, int rc, const char *what) {
  fprintf(stderr, "ballast-md: rank %d: %s failed: %s\n", s->rank, what,
          ballast_strerror(rc));
  MPI_Abort(s->comm, MD_EXIT_ABORT);
}

/* Global sums (kinetic, potential, momentum, count) and extreme coordinates,
 * by the MD_SUM_* indices. */
static void global_sums(md_sim_t *s, double g[MD_NSUMS]) {
  double l[MD_NSUMS];
  md_local_sums(s, l);
  MPI_Allreduce(l, g, MD_SUM_ADDED, MPI_DOUBLE, MPI_SUM, s->comm);
  MPI_Allreduce(&l[MD_SUM_POS_MIN], &g[MD_SUM_POS_MIN], 1, MPI_DOUBLE, MPI_MIN, s->comm);
  MPI_Allreduce(&l[MD_SUM_POS_MAX], &g[MD_SUM_POS_MAX], 1, MPI_DOUBLE, MPI_MAX, s->comm);
}

static int sim_setup(md_sim_t *s, char *err, size_t errlen) {
  if (md_geometry_init(s, err, errlen)) return -1;
  s->owner = malloc(sizeof(int) * (size_t)s->nblocks);
  s->mine = malloc(sizeof(int) * (size_t)s->nblocks);
  s->blocks = calloc((size_t)s->nblocks, sizeof(md_block_t));
  if (!s->owner || !s->mine || !s->blocks) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  md_strategy_map(s, s->p.strategy, s->p.seed, 0, s->owner);
  md_refresh_mine(s);
  if (md_neighbours_update(s)) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

static int sim_init(md_sim_t *s, char *err, size_t errlen) {
  /* --read-data, --read-xyz: the file gives the box; every rank reads it whole */
  md_config_t cfg = {0};
  const char *from = s->p.read_data ? s->p.read_data : s->p.read_xyz;
  if (from) {
    if (s->p.read_data ? md_read_data(from, !s->p.walls, &cfg, err, errlen)
                       : md_read_xyz(from, !s->p.walls, &cfg, err, errlen))
      return -1;
    memcpy(s->p.box, cfg.L, sizeof s->p.box);
  }
  int rc = sim_setup(s, err, errlen);
  if (!rc) rc = from ? md_config_place(s, &cfg, err, errlen)
                     : md_scenario_create(s, err, errlen);
  md_config_free(&cfg);
  return rc;
}

/* Collective: writes the configuration to path with write(); a failure is
 * reported (rank 0) and makes the exit status non-zero, the run goes on. */
static void write_file(md_sim_t *s, const char *path,
                       int (*write)(const md_sim_t *, const char *, char *, size_t),
                       int *status) {
  char err[ERR_LEN];
  if (!path) return;
  if (write(s, path, err, sizeof err)) {
    if (s->rank == 0) fprintf(stderr, "ballast-md: %s\n", err);
    *status = MD_EXIT_WRITE;
  }
}

static void phase(rta_task_t *t, int begin) {
  /* Monitoring never changes what the simulation does: a failing clock
   * call would only lose a measurement. */
  if (begin) (void)rta_task_begin(t);
  else (void)rta_task_end(t);
}

/* One velocity Verlet step, phases clocked as rta tasks nested in "step"
 * (mon regions "step", "step/integrate", ...). Returns this rank's compute
 * time (forces + integration); *tforce the force time alone. */
static double time_step(md_sim_t *s, double *tforce) {
  const double h = 0.5 * s->p.dt;
  double tc = 0, t;
  int rc;
  phase(s->ph_step, 1);
  phase(s->ph_integrate, 1);
  t = MPI_Wtime();
  md_kick(s, h);
  md_drift(s, s->p.dt);
  tc += MPI_Wtime() - t;
  phase(s->ph_integrate, 0);
  /* the rebuild decision is collective, so it waits for the slowest
   * neighbour as a halo exchange would: it belongs to "step/migrate" */
  phase(s->ph_migrate, 1);
  int forced = s->rebuild_due, due;
  if ((rc = md_rebuild_due(s, &due))) die(s, rc, "list rebuild decision");
  if (due) {
    md_wrap(s);
    if ((rc = md_migrate(s))) die(s, rc, "particle migration");
    if ((rc = md_sort_blocks(s))) die(s, rc, "sorting particles by cell");
  }
  phase(s->ph_migrate, 0);
  phase(s->ph_halo, 1);
  if (due) {
    if ((rc = md_halo_exchange(s))) die(s, rc, "halo exchange");
    md_mark_build(s, forced);
  } else if ((rc = md_halo_refresh(s))) {
    die(s, rc, "halo refresh");
  }
  phase(s->ph_halo, 0);
  phase(s->ph_forces, 1);
  t = MPI_Wtime();
  if ((rc = md_forces(s))) die(s, rc, "forces");
  *tforce = MPI_Wtime() - t;
  tc += *tforce;
  phase(s->ph_forces, 0);
  phase(s->ph_integrate, 1);
  t = MPI_Wtime();
  md_kick(s, h);
  tc += MPI_Wtime() - t;
  phase(s->ph_integrate, 0);
  phase(s->ph_step, 0);
  return tc;
}

/* CPU seconds of this process (all its threads), for the loop's CPU time:
 * the wall time of a rank that waits by yielding the core is not work. */
static double cpu_now(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)) return 0.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 prints the Verlet-list figures of the measured loop (k1 - k0):
 * rebuilds, list sizes and distance checks per atom, and the loop's CPU
 * time, one line {"md_kernel": ...} (and a human line unless --json-only). */
static void kernel_report(md_sim_t *s, const md_kstats_t *k0, const md_kstats_t *k1,
                          double cpu, double wall) {
  /* the figures summed over ranks */
  enum { LIST_ATOMS, LIST_ENTRIES, BUILD_CHECKS, KERNEL_ATOMS, KERNEL_CHECKS, CPU, NK };
  double l[NK] = {k1->list_atoms - k0->list_atoms, k1->list_entries - k0->list_entries,
                  k1->build_checks - k0->build_checks, k1->kernel_atoms - k0->kernel_atoms,
                  k1->kernel_checks - k0->kernel_checks, cpu}, g[NK], cmax;
  MPI_Reduce(l, g, NK, MPI_DOUBLE, MPI_SUM, 0, s->comm);
  MPI_Reduce(&cpu, &cmax, 1, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  if (s->rank != 0) return;
  long reb = k1->rebuilds - k0->rebuilds, forced = k1->forced - k0->forced;
  int steps = s->p.steps;
  double atom_steps = g[KERNEL_ATOMS] > 0 ? g[KERNEL_ATOMS] : 1;
  double per_list = g[LIST_ATOMS] > 0 ? g[LIST_ENTRIES] / g[LIST_ATOMS] : 0;
  double checks = (g[KERNEL_CHECKS] + g[BUILD_CHECKS]) / atom_steps;
  const double us = 1e6; /* seconds to microseconds */
  if (!s->p.json_only)
    printf("Verlet lists: skin %.2f, %ld rebuilds in %d steps (%ld forced), %.1f list "
           "entries per atom, %.1f distance checks per atom-step; CPU %.3f us per atom-step "
           "(all ranks), wall %.3f us\n", s->p.skin, reb, steps, forced, per_list, checks,
           us * g[CPU] / atom_steps, us * wall / atom_steps);
  printf("{\"md_kernel\": {\"skin\": %.6g, \"steps\": %d, \"rebuilds\": %ld, "
         "\"rebuilds_forced\": %ld, \"steps_per_rebuild\": %.3f, \"list_entries_per_atom\": "
         "%.3f, \"build_checks_per_atom\": %.3f, \"checks_per_atom_step\": %.3f, "
         "\"atom_steps\": %.0f, \"cpu_seconds_sum\": %.6e, \"cpu_seconds_max\": %.6e, "
         "\"wall_seconds\": %.6e, \"cpu_us_per_atom_step\": %.6g, "
         "\"wall_us_per_atom_step\": %.6g}}\n", s->p.skin, steps, reb, forced,
         reb > 0 ? (double)steps / (double)reb : 0.0, per_list,
         g[LIST_ATOMS] > 0 ? g[BUILD_CHECKS] / g[LIST_ATOMS] : 0, checks, g[KERNEL_ATOMS],
         g[CPU], cmax, wall, us * g[CPU] / atom_steps, us * wall / atom_steps);
  fflush(stdout);
}

/* Warm-up before the measured run: steps with the velocities rescaled to
 * the target temperature, so the lattice melts into the liquid at T
 * (the lattice start converts about half the kinetic energy into
 * potential energy). Not clocked, not counted in --steps. */
static void equilibrate(md_sim_t *s) {
  double g[MD_NSUMS];
  for (int k = 0; k < s->p.equilibrate; k++) {
    /* only the kinetic energy is used here; the last step's potential
     * energy starts the measured run's energy */
    s->skip_epot = k + 1 < s->p.equilibrate;
    double tf;
    (void)time_step(s, &tf);
    global_sums(s, g);
    double t_now = md_temperature(g[MD_SUM_KE], g[MD_SUM_N]);
    double f = t_now > 0 ? sqrt(s->p.temperature / t_now) : 1.0;
    for (int m = 0; m < s->nmine; m++) {
      md_block_t *b = &s->blocks[s->mine[m]];
      for (int i = 0; i < b->n; i++) {
        b->vx[i] *= f;
        b->vy[i] *= f;
        b->vz[i] *= f;
      }
    }
  }
}

/* Stop code of start(): the run goes on. */
#define MD_GO_ON (-1)

/* Initialises MPI-side fields, reads the command line and builds the
 * decomposition and the initial state. Returns MD_GO_ON, or the exit
 * status (0 after --help) when the run stops here, everything freed. */
static int start(md_sim_t *s, int argc, char **argv) {
  s->comm = MPI_COMM_WORLD;
  MPI_Comm_rank(s->comm, &s->rank);
  MPI_Comm_size(s->comm, &s->size);
  char err[ERR_LEN];
  /* Every rank parses the same arguments, so all agree on failure. */
  int prc = md_parse_args(argc, argv, &s->p, err, sizeof err);
  if (prc) {
    int help = prc == MD_ARGS_HELP;
    if (s->rank == 0) {
      if (!help) fprintf(stderr, "ballast-md: %s\n", err);
      md_usage(help ? stdout : stderr);
    }
    return help ? 0 : MD_EXIT_USAGE;
  }
  int bad = sim_init(s, err, sizeof err) != 0, anybad;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->comm);
  if (anybad) {
    if (bad && (s->rank == 0 || !s->p.json_only))
      fprintf(stderr, "ballast-md: rank %d: %s\n", s->rank, err);
    md_sim_free(s);
    return MD_EXIT_USAGE;
  }
  return MD_GO_ON;
}

/* The state the measured run starts from: phase tasks, particles sorted,
 * ghosts, first forces, the warm-up and (ballast) the context. */
static void prepare(md_sim_t *s) {
  const md_params_t *p = &s->p;
  int rc;
  if ((rc = md_phases_define(s))) die(s, rc, "defining the phase tasks");
  if ((rc = md_sort_blocks(s))) die(s, rc, "sorting particles by cell");
  if ((rc = md_halo_exchange(s))) die(s, rc, "halo exchange");
  md_mark_build(s, 1);
  if ((rc = md_forces(s))) die(s, rc, "forces");
  equilibrate(s);
  /* ballast: the blocks become the tasks of a load-balancing context once
   * the liquid is equilibrated; from here on s->comm is the context's */
  if (p->strategy == MD_BALLAST && (rc = md_lb_init(s)))
    die(s, rc, "defining the load-balancing context");
}

/* Energy, temperature and momentum the run starts with. */
static void start_figures(md_sim_t *s, md_result_t *res) {
  double g[MD_NSUMS];
  global_sums(s, g);
  memset(res, 0, sizeof *res);
  res->e0 = g[MD_SUM_KE] + g[MD_SUM_PE];
  res->t0 = md_temperature(g[MD_SUM_KE], g[MD_SUM_N]);
  memcpy(res->mom0, &g[MD_SUM_MOM], sizeof res->mom0);
}

static void print_start_line(const md_sim_t *s) {
  const md_params_t *p = &s->p;
  if (s->rank != 0 || p->json_only) return;
  printf("ballast-md: %s, %ld particles, box %.2f, %d ranks, %d blocks (%dx%dx%d), "
         "strategy %s%s, %s, dt %g, %d steps, Verlet skin %.3g\n",
         md_scenario_name(p->scenario), s->natoms, s->L[0], s->size, s->nblocks, s->nb[0],
         s->nb[1], s->nb[2], md_strategy_name(p->strategy),
         p->placement ? " (placement)" : "", s->periodic ? "periodic" : "walls", p->dt,
         p->steps, p->skin);
}

/* The measured loop: this rank's figures of every step, the state of the
 * progress lines and of --remap-every, the kernel counters and clocks. */
typedef struct {
  double *wall;     /* wall seconds of the step, load balancing included */
  double *decide;   /* ballast: its deciding seconds in the step */
  int *lbev;        /* ballast: remap at the step (md_series_t.lbev) */
  double *comp;     /* compute seconds (forces + integration) */
  double *force;    /* force seconds */
  int *newmap;      /* --remap-every: the next owner map */
  int every;        /* steps between progress lines; 0: none */
  int round;        /* --remap-every: maps drawn so far */
  int last_report;  /* first step of the current progress interval */
  md_kstats_t k0, k1; /* kernel counters before and after the loop */
  double cpu0, cpu; /* process CPU seconds at the start; of the loop */
} md_loop_t;

/* Allocates the loop's per-step arrays and the series rank 0 gathers. */
static void loop_alloc(md_sim_t *s, md_loop_t *lp, md_series_t *ser) {
  const md_params_t *p = &s->p;
  size_t n = (size_t)p->steps;
  memset(lp, 0, sizeof *lp);
  lp->wall = calloc(n, sizeof(double));
  lp->decide = calloc(n, sizeof(double));
  lp->lbev = calloc(n, sizeof(int));
  lp->comp = calloc(n, sizeof(double));
  lp->force = calloc(n, sizeof(double));
  *ser = (md_series_t){calloc(n, sizeof(double)), calloc(n, sizeof(double)),
                       calloc(n, sizeof(double)), NULL};
  if (!lp->wall || !lp->decide || !lp->lbev || !lp->comp || !lp->force || !ser->wall ||
      !ser->cmax || !ser->cavg)
    die(s, BALLAST_ENOMEM, "setup");
  lp->every = p->progress > 0 ? (p->steps + p->progress - 1) / p->progress : 0;
  lp->newmap = malloc(sizeof(int) * (size_t)s->nblocks);
  if (!lp->newmap) die(s, BALLAST_ENOMEM, "setup");
}

static void loop_free(md_loop_t *lp, md_series_t *ser) {
  free(lp->newmap);
  free(lp->wall);
  free(lp->decide);
  free(lp->lbev);
  free(lp->comp);
  free(lp->force);
  free(ser->wall);
  free(ser->cmax);
  free(ser->cavg);
}

/* Rank 0 (unless --json-only) says what the remap at step did. */
static void print_remap(md_sim_t *s, int step, int remapped) {
  if (s->rank != 0 || s->p.json_only) return;
  rta_decision_t d;
  rta_lb_last_decision(s->lb, &d);
  printf("step %6d: ballast remap %lld (imbalance %.3f > threshold %.2f, predicted "
         "gain %.3f s > cost %.3f s) took %.3f s: %s, %lld blocks moved so far\n",
         step + 1, s->lbst.remaps, d.imbalance, rta_lb_policy(s->lb)->threshold,
         d.predicted_gain, d.remap_cost, s->lbst.last_cost,
         remapped == 1 ? "owner map changed" : "the mapping kept every block in place",
         s->lbst.tasks_moved);
  fflush(stdout);
}

/* Collective: energy drift sample and the progress line of the interval
 * ending at step. */
static void progress(md_sim_t *s, md_loop_t *lp, md_result_t *res, int step) {
  double g[MD_NSUMS];
  global_sums(s, g);
  double e = g[MD_SUM_KE] + g[MD_SUM_PE], dr = fabs(e - res->e0) / fabs(res->e0);
  if (dr > res->drift_max) res->drift_max = dr;
  /* interval figures for the progress line */
  int n = step + 1 - lp->last_report;
  double lw = 0, mw;
  for (int k = lp->last_report; k <= step; k++) lw += lp->wall[k];
  MPI_Reduce(&lw, &mw, 1, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  double imb = md_imbalance(s, lp->force, lp->last_report, step + 1);
  lp->last_report = step + 1;
  if (s->rank == 0 && !s->p.json_only) {
    printf("step %6d/%d  E/N %.6f  drift %.2e  T %.4f  %.3f ms/step  imbalance %.3f"
           "  remaps %d\n", step + 1, s->p.steps, e / g[MD_SUM_N], dr,
           md_temperature(g[MD_SUM_KE], g[MD_SUM_N]), 1e3 * mw / n, imb, s->remaps);
    fflush(stdout);
  }
}

/* One step of the measured loop: --remap-every's map, the time step, the
 * load-balancing call and the progress line when one is due. */
static void loop_step(md_sim_t *s, md_loop_t *lp, md_result_t *res, int step) {
  const md_params_t *p = &s->p;
  int rc;
  if (p->remap_every > 0 && step > 0 && step % p->remap_every == 0) {
    md_strategy_map(s, p->strategy, p->seed, ++lp->round, lp->newmap);
    if ((rc = md_apply_owner_map(s, lp->newmap))) die(s, rc, "md_apply_owner_map");
  }
  double t0 = MPI_Wtime();
  int sampled = lp->every && (step + 1) % lp->every == 0, last = step + 1 == p->steps;
  /* the potential energy costs a sixth of the pair kernel: computed
   * only at the steps whose energy is sampled */
  s->skip_epot = !sampled && !last;
  lp->comp[step] = time_step(s, &lp->force[step]);
  /* ballast: one load-balancing call per step (a no-op under BALLAST_LB=off),
   * counted in the step's time */
  int remapped = 0;
  double dec0 = s->lbst.seconds_deciding;
  if (s->lb && (rc = md_lb_step(s, &remapped))) die(s, rc, "rta_lb_perform");
  lp->decide[step] = s->lbst.seconds_deciding - dec0;
  lp->lbev[step] = remapped;
  lp->wall[step] = MPI_Wtime() - t0;
  if (remapped) print_remap(s, step, remapped);
  if (lp->every && (sampled || last)) progress(s, lp, res, step);
}

static void time_loop(md_sim_t *s, md_loop_t *lp, md_result_t *res) {
  lp->k0 = s->kst;
  lp->cpu0 = cpu_now();
  double tloop = MPI_Wtime();
  for (int step = 0; step < s->p.steps; step++) loop_step(s, lp, res, step);
  res->wall_total = MPI_Wtime() - tloop;
  lp->cpu = cpu_now() - lp->cpu0;
  lp->k1 = s->kst;
}

/* ballast's own seconds: mapping, migrating and deciding. Its deciding time
 * includes waiting in its collective for the rank that is still computing
 * (load imbalance, not ballast's cost): the rank that arrives last at a call
 * waits least, so each step counts the minimum over ranks of the deciding
 * seconds ballast reports for it. */
static void lb_own_seconds(md_sim_t *s, const md_loop_t *lp) {
  int steps = s->p.steps;
  double *dmin = calloc((size_t)steps, sizeof(double));
  if (!dmin) die(s, BALLAST_ENOMEM, "summary");
  MPI_Allreduce(lp->decide, dmin, steps, MPI_DOUBLE, MPI_MIN, s->comm);
  s->lb_deciding_min = 0;
  for (int k = 0; k < steps; k++) s->lb_deciding_min += dmin[k];
  free(dmin);
  s->lb_seconds = s->lbst.seconds_mapping + s->lbst.seconds_migrating + s->lb_deciding_min;
}

/* Collective: the series rank 0 reports, the imbalances and the state the
 * run ends with (energies, momentum, particles, id checksums). */
static void end_figures(md_sim_t *s, const md_loop_t *lp, md_series_t *ser,
                        md_result_t *res) {
  const md_params_t *p = &s->p;
  int rc;
  MPI_Allreduce(&lp->cpu, &res->cpu_total, 1, MPI_DOUBLE, MPI_SUM, s->comm);
  MPI_Reduce(lp->wall, ser->wall, p->steps, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  MPI_Reduce(lp->comp, ser->cmax, p->steps, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  MPI_Reduce(lp->comp, ser->cavg, p->steps, MPI_DOUBLE, MPI_SUM, 0, s->comm);
  for (int k = 0; k < p->steps; k++) ser->cavg[k] /= s->size;
  res->imb_first = md_imbalance(s, lp->force, 0, p->window);
  res->imb_last = md_imbalance(s, lp->force, p->steps - p->window, p->steps);
  res->imb_run = md_imbalance(s, lp->force, 0, p->steps);

  double g[MD_NSUMS];
  global_sums(s, g);
  res->e1 = g[MD_SUM_KE] + g[MD_SUM_PE];
  res->ke1 = g[MD_SUM_KE];
  res->pe1 = g[MD_SUM_PE];
  res->t1 = md_temperature(g[MD_SUM_KE], g[MD_SUM_N]);
  res->drift = fabs(res->e1 - res->e0) / fabs(res->e0);
  if (res->drift > res->drift_max) res->drift_max = res->drift;
  memcpy(res->mom1, &g[MD_SUM_MOM], sizeof res->mom1);
  res->particles_end = lround(g[MD_SUM_N]);
  res->pos_min = g[MD_SUM_POS_MIN];
  res->pos_max = g[MD_SUM_POS_MAX];
  uint64_t ck[3];
  if ((rc = md_id_checksum(s, ck))) die(s, rc, "checksum");
  res->id_sum = ck[0];
  res->id_xor = ck[1];
  res->id_hash = ck[2];
  if (s->lb) lb_own_seconds(s, lp);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  md_sim_t sim;
  memset(&sim, 0, sizeof sim);
  md_sim_t *s = &sim;
  int status = start(s, argc, argv);
  if (status != MD_GO_ON) {
    MPI_Finalize();
    return status;
  }
  const md_params_t *p = &s->p;
  prepare(s);
  md_result_t res;
  start_figures(s, &res);
  status = 0;
  write_file(s, p->write_start, md_write_data, &status);
  print_start_line(s);

  md_loop_t loop;
  md_series_t ser;
  loop_alloc(s, &loop, &ser);
  time_loop(s, &loop, &res);
  end_figures(s, &loop, &ser, &res);

  md_report(s, &ser, &res);
  kernel_report(s, &loop.k0, &loop.k1, loop.cpu, res.wall_total);
  write_file(s, p->write_data, md_write_data, &status);
  write_file(s, p->write_xyz, md_write_xyz, &status);
  ser.lbev = loop.lbev;
  if (p->trace && s->rank == 0) md_write_trace(s, &ser, p->trace);
  if (p->pia) md_pia_listing(s);
  md_lb_finish(s);

  loop_free(&loop, &ser);
  md_sim_free(s);
  MPI_Finalize();
  return res.particles_end != s->natoms ? MD_EXIT_LOST : status;
}
