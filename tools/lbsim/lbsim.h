/* ballast-lbsim: replays a load-balancing record (src/policy/policy.h) on one
 * process and predicts what other settings would have done. lbsim.c holds
 * the command line and the output, replay.c the bit-for-bit check,
 * simulate.c the prediction model. */
#ifndef BALLAST_LBSIM_H
#define BALLAST_LBSIM_H

#include <stdint.h>
#include <stdio.h>

#include <ballast/rta_map.h>
#include <ballast/rta_policy.h>

#include "policy/policy.h"

/* What a simulation may change; a negative or NULL field keeps the record's. */
typedef struct {
  rta_policy_config_t policy;   /* the record's, with the overrides applied */
  rta_strategy_t strategy;
  const rta_hw_t *hw;           /* the machine simulated (the record's or another) */
  int placement_free;           /* 1: tasks may start anywhere (--placement) */
  double intra_lat, intra_bw;   /* communication model inside a node */
  double inter_lat, inter_bw;   /* between nodes when links were not measured */
  int background;               /* LBSIM_BG_*: the step model (simulate.c) */
} lbsim_settings_t;

enum { LBSIM_BG_FIT = 0, LBSIM_BG_ADD = 1, LBSIM_BG_SCALE = 2 };

/* What a simulation predicts. */
typedef struct {
  const char *name;
  long long steps;
  double time_per_step;   /* seconds: scale x max over ranks of tasks +
                             communication + background, plus remaps spread
                             over the steps */
  double compute_per_step;/* mean over steps of the slowest rank's task time */
  double comm_per_step;   /* mean of the slowest rank's modelled communication */
  double scale;           /* the step model fitted on the record (simulate.c) */
  double background;      /* its constant, seconds per step */
  double imbalance;       /* mean over steps of max/avg of the ranks' task times */
  double imbalance_last;  /* the same over the last window of steps */
  int remaps;
  int dropped;            /* candidates the policy did not carry out */
  double tasks_moved, bytes_moved, remap_seconds;
} lbsim_result_t;

/* Mapping graph \a k of the record again (replay.c): the engine's slots and
 * the target slots (placement permutation applied) for \a prev on \a hw. */
int lbsim_map(const policy__t *r, int k, const rta_hw_t *hw, rta_strategy_t s,
              unsigned seed, const int64_t *prev, int64_t *slots, int *target,
              rta_map_quality_t *q);
/* lb.c's target slots: the engine's slots, in placement mode made a
 * permutation by map__repair_by_node (the rule lb.c applies). */
void lbsim_targets(int placement, const rta_hw_t *hw, int64_t n,
                   const int64_t *slots, int *target);
/* The figures lb.c hands rta_policy_confirm() for a candidate: the
 * imbalance of the single-processor tasks' work (\a work[i], NULL: the V
 * lines') on \a ranks ranks placed at \a prev and at \a target, the tasks
 * and state bytes that change ranks (mapping_seconds left 0). */
void lbsim_candidate(int ranks, int64_t n, const policy__vertex_t *v, const double *work,
                     const int64_t *prev, const int *target, rta_remap_candidate_t *c);
/* The bit-for-bit check: number of differences (printed to \a out), or a
 * negative BALLAST_E* code. */
long long lbsim_replay(const policy__t *r, FILE *out, int verbose);
/* One simulation: 0 and \a res, or a negative code. */
int lbsim_simulate(const policy__t *r, const lbsim_settings_t *s, lbsim_result_t *res);
/* The measured figures of the record itself, in the same form. */
void lbsim_measured(const policy__t *r, lbsim_result_t *res);

#endif /* BALLAST_LBSIM_H */
