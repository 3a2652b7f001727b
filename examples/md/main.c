/*
 * ballast-md: driver. Parses the command line, builds the decomposition and
 * the initial state, runs velocity Verlet with each phase clocked as a
 * ballast monitoring region nested in "step", and reports.
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

#include <ballast/common.h>
#include <ballast/mon.h>
#include <ballast/rta.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(md_sim_t *s, int rc, const char *what) {
  fprintf(stderr, "ballast-md: rank %d: %s failed: %s\n", s->rank, what,
          ballast_strerror(rc));
  MPI_Abort(s->comm, 3);
}

/* Global sums (kinetic, potential, momentum, count) and extreme coordinates. */
static void global_sums(md_sim_t *s, double g[8]) {
  double l[8];
  md_local_sums(s, l);
  MPI_Allreduce(l, g, 6, MPI_DOUBLE, MPI_SUM, s->comm);
  MPI_Allreduce(&l[6], &g[6], 1, MPI_DOUBLE, MPI_MIN, s->comm);
  MPI_Allreduce(&l[7], &g[7], 1, MPI_DOUBLE, MPI_MAX, s->comm);
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
  char err[512];
  if (!path) return;
  if (write(s, path, err, sizeof err)) {
    if (s->rank == 0) fprintf(stderr, "ballast-md: %s\n", err);
    *status = 5;
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
  double l[6] = {k1->list_atoms - k0->list_atoms, k1->list_entries - k0->list_entries,
                 k1->build_checks - k0->build_checks, k1->kernel_atoms - k0->kernel_atoms,
                 k1->kernel_checks - k0->kernel_checks, cpu}, g[6], cmax;
  MPI_Reduce(l, g, 6, MPI_DOUBLE, MPI_SUM, 0, s->comm);
  MPI_Reduce(&cpu, &cmax, 1, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  if (s->rank != 0) return;
  long reb = k1->rebuilds - k0->rebuilds, forced = k1->forced - k0->forced;
  int steps = s->p.steps;
  double atom_steps = g[3] > 0 ? g[3] : 1, per_list = g[0] > 0 ? g[1] / g[0] : 0;
  double checks = (g[4] + g[2]) / atom_steps;
  if (!s->p.json_only)
    printf("Verlet lists: skin %.2f, %ld rebuilds in %d steps (%ld forced), %.1f list "
           "entries per atom, %.1f distance checks per atom-step; CPU %.3f us per atom-step "
           "(all ranks), wall %.3f us\n", s->p.skin, reb, steps, forced, per_list, checks,
           1e6 * g[5] / atom_steps, 1e6 * wall / atom_steps);
  printf("{\"md_kernel\": {\"skin\": %.6g, \"steps\": %d, \"rebuilds\": %ld, "
         "\"rebuilds_forced\": %ld, \"steps_per_rebuild\": %.3f, \"list_entries_per_atom\": "
         "%.3f, \"build_checks_per_atom\": %.3f, \"checks_per_atom_step\": %.3f, "
         "\"atom_steps\": %.0f, \"cpu_seconds_sum\": %.6e, \"cpu_seconds_max\": %.6e, "
         "\"wall_seconds\": %.6e, \"cpu_us_per_atom_step\": %.6g, "
         "\"wall_us_per_atom_step\": %.6g}}\n", s->p.skin, steps, reb, forced,
         reb > 0 ? (double)steps / (double)reb : 0.0, per_list, g[0] > 0 ? g[2] / g[0] : 0,
         checks, g[3], g[5], cmax, wall, 1e6 * g[5] / atom_steps, 1e6 * wall / atom_steps);
  fflush(stdout);
}

/* Warm-up before the measured run: steps with the velocities rescaled to
 * the target temperature, so the lattice melts into the liquid at T
 * (the lattice start converts about half the kinetic energy into
 * potential energy). Not clocked, not counted in --steps. */
static void equilibrate(md_sim_t *s) {
  double g[8];
  for (int k = 0; k < s->p.equilibrate; k++) {
    /* only the kinetic energy is used here; the last step's potential
     * energy starts the measured run's energy */
    s->skip_epot = k + 1 < s->p.equilibrate;
    double tf;
    (void)time_step(s, &tf);
    global_sums(s, g);
    double t_now = md_temperature(g[0], g[5]);
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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  md_sim_t sim;
  memset(&sim, 0, sizeof sim);
  md_sim_t *s = &sim;
  s->comm = MPI_COMM_WORLD;
  MPI_Comm_rank(s->comm, &s->rank);
  MPI_Comm_size(s->comm, &s->size);
  char err[512];
  /* Every rank parses the same arguments, so all agree on failure. */
  if (md_parse_args(argc, argv, &s->p, err, sizeof err)) {
    int help = !strcmp(err, "help");
    if (s->rank == 0) {
      if (!help) fprintf(stderr, "ballast-md: %s\n", err);
      md_usage(help ? stdout : stderr);
    }
    MPI_Finalize();
    return help ? 0 : 2;
  }
  int bad = sim_init(s, err, sizeof err) != 0, anybad;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->comm);
  if (anybad) {
    if (bad && (s->rank == 0 || !s->p.json_only))
      fprintf(stderr, "ballast-md: rank %d: %s\n", s->rank, err);
    md_sim_free(s);
    MPI_Finalize();
    return 2;
  }
  const md_params_t *p = &s->p;
  int rc;
  if ((rc = md_phases_define(s))) die(s, rc, "defining the phase tasks");
  if ((rc = md_sort_blocks(s))) die(s, rc, "sorting particles by cell");
  if ((rc = md_halo_exchange(s))) die(s, rc, "halo exchange");
  md_mark_build(s, 1);
  if ((rc = md_forces(s))) die(s, rc, "forces");
  double g[8];
  equilibrate(s);
  /* ballast: the blocks become the tasks of a load-balancing context once
   * the liquid is equilibrated; from here on s->comm is the context's */
  if (p->strategy == MD_BALLAST && (rc = md_lb_init(s)))
    die(s, rc, "defining the load-balancing context");
  global_sums(s, g);
  md_result_t res;
  memset(&res, 0, sizeof res);
  res.e0 = g[0] + g[1];
  res.t0 = md_temperature(g[0], g[5]);
  memcpy(res.mom0, &g[2], sizeof res.mom0);
  int status = 0;
  write_file(s, p->write_start, md_write_data, &status);
  if (s->rank == 0 && !p->json_only)
    printf("ballast-md: %s, %ld particles, box %.2f, %d ranks, %d blocks (%dx%dx%d), "
           "strategy %s%s, %s, dt %g, %d steps, Verlet skin %.3g\n",
           md_scenario_name(p->scenario), s->natoms, s->L[0], s->size, s->nblocks, s->nb[0],
           s->nb[1], s->nb[2], md_strategy_name(p->strategy),
           p->placement ? " (placement)" : "", s->periodic ? "periodic" : "walls", p->dt,
           p->steps, p->skin);

  double *wall = calloc((size_t)p->steps, sizeof(double));
  double *decide = calloc((size_t)p->steps, sizeof(double)); /* ballast: deciding s per step */
  int *lbev = calloc((size_t)p->steps, sizeof(int));          /* ballast: remap at the step */
  double *comp = calloc((size_t)p->steps, sizeof(double));
  double *force = calloc((size_t)p->steps, sizeof(double)); /* force seconds per step */
  md_series_t ser = {calloc((size_t)p->steps, sizeof(double)),
                     calloc((size_t)p->steps, sizeof(double)),
                     calloc((size_t)p->steps, sizeof(double)), NULL};
  if (!wall || !decide || !lbev || !comp || !force || !ser.wall || !ser.cmax || !ser.cavg) die(s, BALLAST_ENOMEM, "setup");
  int every = p->progress > 0 ? (p->steps + p->progress - 1) / p->progress : 0;
  int *newmap = malloc(sizeof(int) * (size_t)s->nblocks);
  if (!newmap) die(s, BALLAST_ENOMEM, "setup");
  int round = 0, last_report = 0;
  md_kstats_t k0 = s->kst;
  double cpu0 = cpu_now();
  double tloop = MPI_Wtime();
  for (int step = 0; step < p->steps; step++) {
    if (p->remap_every > 0 && step > 0 && step % p->remap_every == 0) {
      md_strategy_map(s, p->strategy, p->seed, ++round, newmap);
      if ((rc = md_apply_owner_map(s, newmap))) die(s, rc, "md_apply_owner_map");
    }
    double t0 = MPI_Wtime();
    /* the potential energy costs a sixth of the pair kernel: computed
     * only at the steps whose energy is sampled */
    s->skip_epot = !(every && (step + 1) % every == 0) && step + 1 != p->steps;
    comp[step] = time_step(s, &force[step]);
    /* ballast: one load-balancing call per step (a no-op under BALLAST_LB=off),
     * counted in the step's time */
    int remapped = 0;
    double dec0 = s->lbst.seconds_deciding;
    if (s->lb && (rc = md_lb_step(s, &remapped))) die(s, rc, "rta_lb_perform");
    decide[step] = s->lbst.seconds_deciding - dec0;
    lbev[step] = remapped;
    wall[step] = MPI_Wtime() - t0;
    if (remapped && s->rank == 0 && !p->json_only) {
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
    if (every && ((step + 1) % every == 0 || step + 1 == p->steps)) {
      global_sums(s, g);
      double e = g[0] + g[1], dr = fabs(e - res.e0) / fabs(res.e0);
      if (dr > res.drift_max) res.drift_max = dr;
      /* interval figures for the progress line */
      int n = step + 1 - last_report;
      double lw = 0, mw;
      for (int k = last_report; k <= step; k++) lw += wall[k];
      MPI_Reduce(&lw, &mw, 1, MPI_DOUBLE, MPI_MAX, 0, s->comm);
      double imb = md_imbalance(s, force, last_report, step + 1);
      last_report = step + 1;
      if (s->rank == 0 && !p->json_only) {
        printf("step %6d/%d  E/N %.6f  drift %.2e  T %.4f  %.3f ms/step  imbalance %.3f"
               "  remaps %d\n", step + 1, p->steps, e / g[5], dr, md_temperature(g[0], g[5]),
               1e3 * mw / n, imb, s->remaps);
        fflush(stdout);
      }
    }
  }
  res.wall_total = MPI_Wtime() - tloop;
  double cpu_loop = cpu_now() - cpu0;
  md_kstats_t k1 = s->kst;
  MPI_Allreduce(&cpu_loop, &res.cpu_total, 1, MPI_DOUBLE, MPI_SUM, s->comm);
  MPI_Reduce(wall, ser.wall, p->steps, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  MPI_Reduce(comp, ser.cmax, p->steps, MPI_DOUBLE, MPI_MAX, 0, s->comm);
  MPI_Reduce(comp, ser.cavg, p->steps, MPI_DOUBLE, MPI_SUM, 0, s->comm);
  for (int k = 0; k < p->steps; k++) ser.cavg[k] /= s->size;
  res.imb_first = md_imbalance(s, force, 0, p->window);
  res.imb_last = md_imbalance(s, force, p->steps - p->window, p->steps);
  res.imb_run = md_imbalance(s, force, 0, p->steps);

  global_sums(s, g);
  res.e1 = g[0] + g[1];
  res.ke1 = g[0];
  res.pe1 = g[1];
  res.t1 = md_temperature(g[0], g[5]);
  res.drift = fabs(res.e1 - res.e0) / fabs(res.e0);
  if (res.drift > res.drift_max) res.drift_max = res.drift;
  memcpy(res.mom1, &g[2], sizeof res.mom1);
  res.particles_end = lround(g[5]);
  res.pos_min = g[6];
  res.pos_max = g[7];
  uint64_t ck[3];
  if ((rc = md_id_checksum(s, ck))) die(s, rc, "checksum");
  res.id_sum = ck[0];
  res.id_xor = ck[1];
  res.id_hash = ck[2];
  if (s->lb) {
    /* ballast's deciding time includes waiting in its collective for the
     * rank that is still computing (load imbalance, not ballast's cost): the
     * rank that arrives last at a call waits least, so each step counts the
     * minimum over ranks of the deciding seconds ballast reports for it */
    double *dmin = calloc((size_t)p->steps, sizeof(double));
    if (!dmin) die(s, BALLAST_ENOMEM, "summary");
    MPI_Allreduce(decide, dmin, p->steps, MPI_DOUBLE, MPI_MIN, s->comm);
    s->lb_deciding_min = 0;
    for (int k = 0; k < p->steps; k++) s->lb_deciding_min += dmin[k];
    free(dmin);
    s->lb_seconds = s->lbst.seconds_mapping + s->lbst.seconds_migrating + s->lb_deciding_min;
  }
  md_report(s, &ser, &res);
  kernel_report(s, &k0, &k1, cpu_loop, res.wall_total);
  write_file(s, p->write_data, md_write_data, &status);
  write_file(s, p->write_xyz, md_write_xyz, &status);
  ser.lbev = lbev;
  if (p->trace && s->rank == 0) md_write_trace(s, &ser, p->trace);
  if (p->pia) md_pia_listing(s);
  md_lb_finish(s);

  free(newmap);
  free(wall);
  free(decide);
  free(lbev);
  free(comp);
  free(force);
  free(ser.wall);
  free(ser.cmax);
  free(ser.cavg);
  md_sim_free(s);
  MPI_Finalize();
  return res.particles_end != s->natoms ? 4 : status;
}
