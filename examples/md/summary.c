/*
 * End of run: the id checksum, medians over measurement windows, the human
 * summary and the one-line JSON record {"md_summary": {...}}.
 *
 * Per step, wall = max over ranks of the step's wall time; window times
 * per step are medians over the window's steps. Imbalance: md_imbalance
 * (max / mean over ranks of the force time summed over the window).
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double md_median(const double *v, int n) {
  if (n <= 0) return 0.0;
  double *c = malloc(sizeof(double) * (size_t)n);
  if (!c) return NAN;
  memcpy(c, v, sizeof(double) * (size_t)n);
  qsort(c, (size_t)n, sizeof(double), cmp_double);
  double m = (n % 2) ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  free(c);
  return m;
}

static uint64_t mix(uint64_t x) {
  uint64_t st = x;
  return md_rng_next(&st);
}

int md_id_checksum(const md_sim_t *s, uint64_t out[3]) {
  uint64_t loc[2] = {0, 0}, x = 0, sum[2];
  for (int k = 0; k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      loc[0] += (uint64_t)b->id[i];
      loc[1] += mix((uint64_t)b->id[i]);  /* a lost + duplicated pair shows here */
      x ^= (uint64_t)b->id[i];
    }
  }
  if (MPI_Allreduce(loc, sum, 2, MPI_UINT64_T, MPI_SUM, s->comm) != MPI_SUCCESS ||
      MPI_Allreduce(&x, &out[1], 1, MPI_UINT64_T, MPI_BXOR, s->comm) != MPI_SUCCESS)
    return BALLAST_EMPI;
  out[0] = sum[0];
  out[2] = sum[1];
  return 0;
}

double md_imbalance(const md_sim_t *s, const double *tforce, int from, int to) {
  double loc = 0, mx = 0, sum = 0;
  for (int k = from; k < to; k++) loc += tforce[k];
  if (MPI_Allreduce(&loc, &mx, 1, MPI_DOUBLE, MPI_MAX, s->comm) != MPI_SUCCESS ||
      MPI_Allreduce(&loc, &sum, 1, MPI_DOUBLE, MPI_SUM, s->comm) != MPI_SUCCESS)
    return NAN;
  return sum > 0 ? mx / (sum / s->size) : 1.0;
}

typedef struct {
  double tps, tps_first, tps_last;
} windows_t;

static windows_t windows(const md_series_t *ser, int steps, int w) {
  windows_t r;
  r.tps = md_median(ser->wall, steps);
  r.tps_first = md_median(ser->wall, w);
  r.tps_last = md_median(ser->wall + steps - w, w);
  return r;
}

void md_report(const md_sim_t *s, const md_series_t *ser, const md_result_t *r) {
  if (s->rank != 0) return;
  const md_params_t *p = &s->p;
  windows_t w = windows(ser, p->steps, p->window);
  char hash[32];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)r->id_hash);
  if (!p->json_only) {
    printf("\n== ballast-md summary ==\n");
    printf("scenario %s, strategy %s%s, %d ranks, %d blocks (%dx%dx%d), %s\n",
           md_scenario_name(p->scenario), md_strategy_name(p->strategy),
           p->placement ? " (placement: one block per rank)" : "", s->size, s->nblocks,
           s->nb[0], s->nb[1], s->nb[2], s->periodic ? "periodic" : "reflecting walls");
    printf("particles %ld at start, %ld at end; box %.3f^3, %dx%dx%d cells\n", s->natoms,
           r->particles_end, s->L[0], s->nc[0], s->nc[1], s->nc[2]);
    printf("steps %d, dt %g; loop %.3f s (CPU %.3f s over all ranks)\n", p->steps, p->dt,
           r->wall_total, r->cpu_total);
    printf("time per step (median): %.3f ms; first window %.3f ms, last window %.3f ms "
           "(window %d steps)\n", 1e3 * w.tps, 1e3 * w.tps_first, 1e3 * w.tps_last,
           p->window);
    printf("imbalance (max/avg over ranks of the force time summed over the window): "
           "first window %.3f, last window %.3f, run %.3f\n", r->imb_first, r->imb_last,
           r->imb_run);
    if (s->lb) {
      const rta_policy_config_t *pc = rta_lb_policy(s->lb);
      static const char *mode[] = {"off", "explicit", "auto"};
      printf("ballast load balancing (policy %s, threshold %.2f, window %d, warm-up %d): "
             "%lld calls, %lld remaps (%d changed the owner map), %ld blocks moved (%.3g MB)\n",
             pc ? mode[pc->mode] : "?", pc ? pc->threshold : 0, pc ? pc->window : 0,
             pc ? pc->warmup : 0, s->lbst.calls, s->lbst.remaps, s->remaps, s->tasks_moved,
             s->bytes_moved / 1e6);
      printf("  imbalance judged by ballast: first %.3f, before last remap %.3f, "
             "predicted %.3f, after %.3f, latest %.3f\n", s->lbst.imbalance_first,
             s->lbst.imbalance_before, s->lbst.imbalance_predicted, s->lbst.imbalance_after,
             s->lbst.imbalance_last);
      printf("  cost %.4f s = mapping %.4f + migrating %.4f + deciding %.4f "
             "(%.2f%% of the loop)\n", s->lb_seconds, s->lbst.seconds_mapping,
             s->lbst.seconds_migrating, s->lb_deciding_min,
             r->wall_total > 0 ? 100.0 * s->lb_seconds / r->wall_total : 0.0);
    } else {
      printf("owner-map changes %d, blocks moved %ld (%.3g MB), %.4f s in md_apply_owner_map\n",
             s->remaps, s->tasks_moved, s->bytes_moved / 1e6, s->lb_seconds);
    }
    printf("energy per particle: start %.8f, end %.8f (kinetic %.6f, potential %.6f)\n",
           r->e0 / s->natoms, r->e1 / s->natoms, r->ke1 / s->natoms, r->pe1 / s->natoms);
    printf("temperature (2 KE / (3 (N - 1))): start %.6f, end %.6f\n", r->t0, r->t1);
    printf("relative energy drift %.3e (max over samples %.3e)\n", r->drift, r->drift_max);
    printf("momentum start (%.3e, %.3e, %.3e), end (%.3e, %.3e, %.3e)\n", r->mom0[0],
           r->mom0[1], r->mom0[2], r->mom1[0], r->mom1[1], r->mom1[2]);
    printf("particle ids: sum %llu, xor %llu, hash %s\n", (unsigned long long)r->id_sum,
           (unsigned long long)r->id_xor, hash);
  }
  printf("{\"md_summary\": {\"steps\": %d, \"ranks\": %d, \"particles\": %ld, "
         "\"particles_end\": %ld, \"scenario\": \"%s\", \"strategy\": \"%s\", "
         "\"placement\": %s, \"walls\": %s, \"blocks\": %d, \"blocks_xyz\": [%d, %d, %d], "
         "\"box\": %.17g, \"dt\": %g, \"seed\": %lu, \"window\": %d, "
         "\"time_per_step\": %.6e, \"time_per_step_first_window\": %.6e, "
         "\"time_per_step_last_window\": %.6e, \"imbalance_first_window\": %.6f, "
         "\"imbalance_last_window\": %.6f, \"imbalance_run\": %.6f, "
         "\"remaps\": %d, \"tasks_moved\": %ld, \"bytes_moved\": %.0f, \"lb_seconds\": %.6e, "
         "\"loop_seconds\": %.6e, \"loop_cpu_seconds\": %.6e, \"lb_calls\": %lld, \"lb_remaps\": %lld, \"lb_seconds_mapping\": %.6e, "
         "\"lb_seconds_migrating\": %.6e, \"lb_seconds_deciding\": %.6e, "
         "\"lb_imbalance_first\": %.6f, \"lb_imbalance_last\": %.6f, "
         "\"energy_initial\": %.17g, \"energy_final\": %.17g, \"kinetic_final\": %.17g, "
         "\"potential_final\": %.17g, \"temperature_initial\": %.17g, "
         "\"temperature_final\": %.17g, \"energy_drift\": %.6e, \"energy_drift_max\": %.6e, "
         "\"momentum_initial\": [%.17g, %.17g, %.17g], \"momentum_final\": [%.17g, %.17g, %.17g], "
         "\"position_min\": %.17g, \"position_max\": %.17g, "
         "\"id_sum\": %llu, \"id_xor\": %llu, \"id_checksum\": \"%s\"}}\n",
         p->steps, s->size, s->natoms, r->particles_end, md_scenario_name(p->scenario),
         md_strategy_name(p->strategy), p->placement ? "true" : "false",
         p->walls ? "true" : "false", s->nblocks, s->nb[0], s->nb[1], s->nb[2], s->L[0],
         p->dt, p->seed, p->window, w.tps, w.tps_first, w.tps_last, r->imb_first, r->imb_last,
         r->imb_run, s->remaps, s->tasks_moved, s->bytes_moved, s->lb_seconds, r->wall_total, r->cpu_total,
         s->lbst.calls, s->lbst.remaps, s->lbst.seconds_mapping, s->lbst.seconds_migrating, s->lb_deciding_min,
         s->lbst.imbalance_first, s->lbst.imbalance_last,
         r->e0, r->e1, r->ke1, r->pe1, r->t0, r->t1, r->drift, r->drift_max, r->mom0[0], r->mom0[1],
         r->mom0[2], r->mom1[0], r->mom1[1], r->mom1[2], r->pos_min, r->pos_max,
         (unsigned long long)r->id_sum, (unsigned long long)r->id_xor, hash);
  fflush(stdout);
}

void md_write_trace(const md_sim_t *s, const md_series_t *ser, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "ballast-md: cannot write the trace to %s\n", path);
    return;
  }
  fprintf(f, "# ballast-md trace: scenario %s, strategy %s, %d ranks, %ld particles\n"
             "# step wall_max_s compute_max_s compute_avg_s compute_max/avg remap\n"
             "# (compute_max/avg: the step's own ratio, raw data; the imbalance of the summary\n"
             "# and the progress lines is md_imbalance over a window of steps)\n"
             "# (remap: 1 ballast remapped after this step and moved blocks, 2 remapped and "
             "moved none)\n",
          md_scenario_name(s->p.scenario), md_strategy_name(s->p.strategy), s->size,
          s->natoms);
  for (int k = 0; k < s->p.steps; k++)
    fprintf(f, "%d %.6e %.6e %.6e %.4f %d\n", k + 1, ser->wall[k], ser->cmax[k], ser->cavg[k],
            ser->cavg[k] > 0 ? ser->cmax[k] / ser->cavg[k] : 1.0, ser->lbev ? ser->lbev[k] : 0);
  if (fclose(f)) fprintf(stderr, "ballast-md: error writing the trace to %s\n", path);
}
