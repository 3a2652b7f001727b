/* ballast-lbsim RECORD [options]: replays a load-balancing record written
 * with BALLAST_LB_RECORD (or rta_lb_record()) on one process.
 *
 * 1. The replay: the record's policy settings fed its step times must give
 *    its decisions, and its task graphs mapped with its strategy, seeds and
 *    hardware model its slots, bit for bit. Any difference is listed and the
 *    exit code is 1.
 * 2. The prediction (simulate.c): time per step, imbalance, remaps and
 *    migration volume the run would have had with other settings (policy,
 *    strategy, machine), next to what the record measured.
 * Exit codes: 0 identical, 1 a replay difference, 2 bad usage or record. */
#include "lbsim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ballast/common.h>

typedef struct {
  const char *record;
  int compare, json, no_replay, verbose;
  int nodes;              /* > 0: a simulated machine */
  const char *node_topo;  /* its node (hwloc synthetic or XML) */
  char cores_topo[64];
  lbsim_settings_t s;
  int strategy_set;
} opts_t;

static void usage(FILE *f) {
  fprintf(f,
          "usage: ballast-lbsim RECORD [options]\n"
          "  replays a load-balancing record (BALLAST_LB_RECORD) bit for bit, then\n"
          "  predicts time per step, imbalance, remaps and migration volume.\n"
          "policy:   --policy off|explicit|auto  --threshold X  --window N\n"
          "          --warmup N  --horizon N  --outlier X\n"
          "mapping:  --strategy twophase|tleaf|block|roundrobin|random\n"
          "          --compare (every strategy side by side)\n"
          "machine:  --nodes N with --cores C or --node TOPOLOGY (hwloc synthetic,\n"
          "          e.g. \"pack:2 core:8\", or an XML file): one rank per core\n"
          "          --placement free (tasks start in blocks, not where recorded)\n"
          "network:  --intra-lat S --intra-bw B/s --inter-lat S --inter-bw B/s\n"
          "          (defaults 1e-6 s, 4e9 B/s; 2e-6 s, 1e9 B/s; measured links win)\n"
          "step:     --background fit|add|scale (the time besides the tasks: fitted\n"
          "          as scale x slowest rank + const, additive, or proportional)\n"
          "output:   --json  --no-replay  --verbose\n"
          "exit: 0 replay identical, 1 a replay difference, 2 bad usage or record\n");
}

static int num(const char *opt, const char *v, double lo, double *out) {
  char *e;
  double x = v ? strtod(v, &e) : 0;
  if (!v || e == v || *e || !(x >= lo) || x > 1e18) {
    fprintf(stderr, "ballast-lbsim: %s needs a number >= %g (got '%s')\n", opt, lo,
            v ? v : "");
    return -1;
  }
  *out = x;
  return 0;
}

/* One option with its value; 1 when consumed with its value, 0 without,
 * -1 on error. */
static int parse_opt(opts_t *o, const char *a, const char *v) {
  rta_policy_config_t *p = &o->s.policy;
  double x;
  if (!strcmp(a, "--compare")) return o->compare = 1, 0;
  if (!strcmp(a, "--json")) return o->json = 1, 0;
  if (!strcmp(a, "--no-replay")) return o->no_replay = 1, 0;
  if (!strcmp(a, "--verbose")) return o->verbose = 1, 0;
  if (!strcmp(a, "--placement")) {
    if (!v || strcmp(v, "free")) {
      fprintf(stderr, "ballast-lbsim: --placement takes 'free'\n");
      return -1;
    }
    o->s.placement_free = 1;
    return 1;
  }
  if (!strcmp(a, "--policy")) {
    if (v && !strcmp(v, "off")) p->mode = RTA_POLICY_OFF;
    else if (v && !strcmp(v, "explicit")) p->mode = RTA_POLICY_EXPLICIT;
    else if (v && !strcmp(v, "auto")) p->mode = RTA_POLICY_AUTO;
    else {
      fprintf(stderr, "ballast-lbsim: --policy takes off, explicit or auto\n");
      return -1;
    }
    return 1;
  }
  if (!strcmp(a, "--strategy")) {
    if (!v || rta_strategy_parse(v, &o->s.strategy)) {
      fprintf(stderr, "ballast-lbsim: unknown strategy '%s'\n", v ? v : "");
      return -1;
    }
    o->strategy_set = 1;
    return 1;
  }
  if (!strcmp(a, "--background")) {
    static const char *const forms[] = {"fit", "add", "scale"};
    for (int i = 0; v && i < 3; i++)
      if (!strcmp(v, forms[i]))
        return o->s.background = i, 1;
    fprintf(stderr, "ballast-lbsim: --background takes fit, add or scale\n");
    return -1;
  }
  if (!strcmp(a, "--node")) {
    if (!v) return -1;
    o->node_topo = v;
    return 1;
  }
  static const char *const dbl[] = {"--threshold", "--outlier", "--intra-lat", "--intra-bw",
                                    "--inter-lat", "--inter-bw"};
  double *dst[] = {&p->threshold, &p->outlier, &o->s.intra_lat, &o->s.intra_bw,
                   &o->s.inter_lat, &o->s.inter_bw};
  for (int i = 0; i < 6; i++)
    if (!strcmp(a, dbl[i]))
      return num(a, v, i < 2 ? 1.0 : 1e-300, dst[i]) ? -1 : 1;
  static const char *const ints[] = {"--window", "--warmup", "--horizon", "--nodes", "--cores"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(a, ints[i])) {
      if (num(a, v, i == 1 ? 0 : 1, &x) || x > 1 << 24) return -1;
      if (i == 0) p->window = (int)x;
      if (i == 1) p->warmup = (int)x;
      if (i == 2) p->horizon = (int)x;
      if (i == 3) o->nodes = (int)x;
      if (i == 4) snprintf(o->cores_topo, sizeof o->cores_topo, "core:%d", (int)x);
      return 1;
    }
  fprintf(stderr, "ballast-lbsim: unknown option '%s'\n", a);
  return -1;
}

/* The machine simulated: the record's, or --nodes with --cores/--node. */
static int machine(opts_t *o, const policy__t *r, rta_hw_t **own) {
  *own = NULL;
  o->s.hw = r->hw;
  if (o->nodes <= 0 && !o->node_topo && !o->cores_topo[0])
    return r->hw ? 0 : BALLAST_EINVAL;
  const char *topo = o->node_topo ? o->node_topo : o->cores_topo[0] ? o->cores_topo : NULL;
  if (!topo) {
    fprintf(stderr, "ballast-lbsim: --nodes needs --cores or --node\n");
    return BALLAST_EINVAL;
  }
  int rc = rta_hw_create_sim(o->nodes > 0 ? o->nodes : 1, topo, NULL, NULL, own);
  if (rc)
    fprintf(stderr, "ballast-lbsim: cannot build the machine (%s)\n", ballast_strerror(rc));
  o->s.hw = *own;
  return rc;
}

static void row(const lbsim_result_t *x, const char *tag) {
  printf("%-22s %10.4f %10.4f %10.4f %6.3f %10.4f %9.3f %9.3f %6d %7d %8.0f %12.0f %9.4f\n",
         tag, 1e3 * x->time_per_step, 1e3 * x->compute_per_step, 1e3 * x->comm_per_step,
         x->scale, 1e3 * x->background, x->imbalance, x->imbalance_last, x->remaps, x->dropped,
         x->tasks_moved, x->bytes_moved, x->remap_seconds);
}

/* \a s as a JSON string's contents. */
static void json_str(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
}

static void json_result(const lbsim_result_t *x, int last) {
  printf("    {\"name\": \"%s\", \"steps\": %lld, \"time_per_step_s\": %.17g, "
         "\"compute_per_step_s\": %.17g, \"comm_per_step_s\": %.17g, \"scale\": %.17g, \"background_s\": %.17g, "
         "\"imbalance\": %.17g, \"imbalance_last_window\": %.17g, \"remaps\": %d, \"dropped\": %d, "
         "\"tasks_moved\": %.0f, \"bytes_moved\": %.0f, \"remap_seconds\": %.17g}%s\n",
         x->name, x->steps, x->time_per_step, x->compute_per_step, x->comm_per_step,
         x->scale, x->background, x->imbalance, x->imbalance_last, x->remaps, x->dropped, x->tasks_moved,
         x->bytes_moved, x->remap_seconds, last ? "" : ",");
}

static void output(const opts_t *o, const policy__t *r, long long size,
                   const lbsim_result_t *meas, const lbsim_result_t *pred, int npred,
                   long long diff) {
  int64_t nt = r->ngraphs ? r->graphs[policy__last_graph(r)].n : 0;
  double per = r->nsteps ? (double)size / (double)r->nsteps : 0;
  if (o->json) {
    printf("{\n  \"record\": {\"path\": \"");
    json_str(o->record);
    printf("\", \"root\": \"");
    json_str(r->root);
    printf("\", \"ranks\": %d, "
           "\"steps\": %lld, \"tasks\": %lld, \"bytes\": %lld, \"bytes_per_step\": %.1f, "
           "\"complete\": %s},\n", r->ranks, (long long)r->nsteps,
           (long long)nt, size, per, r->closed && !r->dropped ? "true" : "false");
    printf("  \"replay\": {\"checked\": %s, \"differences\": %lld},\n",
           o->no_replay ? "false" : "true", diff);
    printf("  \"measured\": [\n");
    json_result(meas, 1);
    printf("  ],\n  \"predicted\": [\n");
    for (int i = 0; i < npred; i++)
      json_result(&pred[i], i == npred - 1);
    printf("  ],\n  \"ratio_predicted_measured\": %.6g\n}\n",
           meas->time_per_step > 0 ? pred[0].time_per_step / meas->time_per_step : 0);
    return;
  }
  printf("record %s: context \"%s\", %d ranks, %lld steps, %lld tasks, %lld bytes "
         "(%.0f bytes per step)%s\n", o->record, r->root, r->ranks, (long long)r->nsteps,
         (long long)nt, size, per, r->closed ? "" : ", not closed (cut short?)");
  printf("%-22s %10s %10s %10s %6s %10s %9s %9s %6s %7s %8s %12s %9s\n", "", "ms/step",
         "compute", "comm", "scale", "const-ms", "imbalance", "last-win", "remaps", "dropped",
         "tasks", "bytes-moved", "remap-s");
  row(meas, "measured");
  for (int i = 0; i < npred; i++) {
    char tag[40];
    snprintf(tag, sizeof tag, "predicted %s", pred[i].name);
    row(&pred[i], tag);
  }
  if (meas->time_per_step > 0 && meas->compute_per_step > 0)
    printf("predicted/measured (%s): time per step %.3f, slowest rank's task time "
           "per step %.3f\n", pred[0].name, pred[0].time_per_step / meas->time_per_step,
           pred[0].compute_per_step / meas->compute_per_step);
}

int main(int argc, char **argv) {
  opts_t o;
  memset(&o, 0, sizeof o);
  o.s.intra_lat = 1e-6;
  o.s.intra_bw = 4e9;
  o.s.inter_lat = 2e-6;
  o.s.inter_bw = 1e9;
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  o.record = argv[1];
  policy__t *r = NULL;
  int rc = policy__open(o.record, &r);
  if (rc) {
    fprintf(stderr, "ballast-lbsim: '%s' is not a readable record (%s)\n", o.record,
            ballast_strerror(rc));
    return 2;
  }
  o.s.policy = r->policy;
  o.s.strategy = r->strategy;
  for (int i = 2; i < argc; i++) {
    int used = parse_opt(&o, argv[i], i + 1 < argc ? argv[i + 1] : NULL);
    if (used < 0) {
      usage(stderr);
      policy__close(r);
      return 2;
    }
    i += used;
  }
  rta_hw_t *own = NULL;
  if (machine(&o, r, &own)) {
    policy__close(r);
    return 2;
  }
  long long diff = 0;
  if (!o.no_replay)
    diff = lbsim_replay(r, o.json ? stderr : stdout, o.verbose);
  lbsim_result_t meas, pred[RTA_MAP_NSTRATEGIES];
  lbsim_measured(r, &meas);
  int npred = 0;
  for (int s = 0; diff >= 0 && s < RTA_MAP_NSTRATEGIES; s++) {
    if (!o.compare && s > 0)
      break;
    lbsim_settings_t st = o.s;
    if (o.compare) /* the chosen (or recorded) strategy first */
      st.strategy = s == 0 ? o.s.strategy : (rta_strategy_t)(s <= (int)o.s.strategy ? s - 1 : s);
    rc = lbsim_simulate(r, &st, &pred[npred]);
    if (rc) {
      fprintf(stderr, "ballast-lbsim: the simulation with %s failed: %s\n",
              rta_strategy_name(st.strategy), ballast_strerror(rc));
      diff = rc;
      break;
    }
    npred++;
  }
  struct stat sb;
  long long size = stat(o.record, &sb) == 0 ? (long long)sb.st_size : 0;
  if (npred > 0)
    output(&o, r, size, &meas, pred, npred, diff > 0 ? diff : 0);
  rta_hw_destroy(own);
  policy__close(r);
  return diff < 0 ? 2 : diff > 0 ? 1 : 0;
}
