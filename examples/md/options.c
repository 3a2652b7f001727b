/*
 * ballast-md command line: one table of options, each written once with its
 * kind, where its value goes, its accepted range and its help text. The
 * parser and the usage text both read the table; parsing is strict (every
 * number checked, every unknown or malformed option an error naming what
 * was wrong).
 */
#include "md.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Names of the enum values, indexed by the value: the parser's choices and
 * the names printed in the output. */
static const char *const scenario_names[] = {"uniform", "droplet", "cluster", NULL};
static const char *const strategy_names[] = {"block", "random", "roundrobin", "ballast", NULL};

const char *md_scenario_name(md_scenario_t s) {
  return s >= MD_UNIFORM && s <= MD_CLUSTER ? scenario_names[s] : "?";
}

const char *md_strategy_name(md_strategy_t s) {
  return s >= MD_BLOCK && s <= MD_BALLAST ? strategy_names[s] : "?";
}

/* What an option's value is and the type of the md_params_t member it sets. */
typedef enum {
  OPT_FLAG,     /* no value; int member set to 1 */
  OPT_HELP,     /* no value; asks for the usage text */
  OPT_INT,      /* int member, range [lo, hi] */
  OPT_LONG,     /* long member, range [lo, hi] */
  OPT_ULONG,    /* unsigned long member, range [lo, LONG_MAX] */
  OPT_DOUBLE,   /* double member, range [lo, hi] */
  OPT_PATH,     /* const char * member: the argument itself */
  OPT_SCENARIO, /* md_scenario_t member, one of scenario_names */
  OPT_STRATEGY, /* md_strategy_t member, one of strategy_names */
  OPT_BLOCKS    /* int[MD_DIM] member: X,Y,Z, each in [1, MAX_BLOCKS_PER_DIM] */
} opt_kind_t;

typedef struct {
  const char *name;   /* long name without "--" */
  char short_name;    /* -c alias, or 0 */
  const char *meta;   /* the value's placeholder in the usage text, or NULL */
  opt_kind_t kind;
  size_t member;      /* offsetof(md_params_t, ...) of the value */
  double lo, hi;      /* accepted range (numbers) */
  const char *help;   /* usage text; continuation lines after '\n' */
} opt_t;

/* Largest --particles: 50 million particles need about 10 GB over the ranks. */
#define MAX_PARTICLES 50000000L
/* Largest count of blocks along one dimension (--blocks). */
#define MAX_BLOCKS_PER_DIM 1024
/* Largest --steps, --window, --remap-every: a step count that still fits an
 * int after adding the warm-up. */
#define MAX_STEPS (INT_MAX / 2)
/* Largest --equilibrate. */
#define MAX_WARMUP_STEPS 1000000
/* Largest --progress (lines over the run). */
#define MAX_PROGRESS_LINES 1000

#define AT(m) offsetof(md_params_t, m)

static const opt_t options[] = {
  {"scenario", 0, "S", OPT_SCENARIO, AT(scenario), 0, 0,
   "uniform | droplet | cluster          (default uniform)"},
  {"particles", 0, "N", OPT_LONG, AT(particles), 32, MAX_PARTICLES,
   "particle count, rounded to the FCC lattice 4*M^3 of the\n"
   "liquid (droplet/cluster keep the dense sphere and a\n"
   "dilute gas of that lattice)                (default 4000)"},
  {"steps", 0, "N", OPT_INT, AT(steps), 1, MAX_STEPS,
   "time steps                                  (default 200)"},
  {"dt", 0, "X", OPT_DOUBLE, AT(dt), 1e-6, 0.05,
   "time step, reduced units                  (default 0.005)"},
  {"blocks", 0, "X,Y,Z", OPT_BLOCKS, AT(nb), 0, 0,
   "blocks per dimension (default: about 8 per rank)"},
  {"strategy", 0, "S", OPT_STRATEGY, AT(strategy), 0, 0,
   "owner map: block | random | roundrobin | ballast\n"
   "(ballast: starts as block, then ballast's load\n"
   "balancing moves blocks; policy from BALLAST_LB*,\n"
   "automatic by default)                   (default block)"},
  {"lb-random", 0, NULL, OPT_FLAG, AT(lb_random), 0, 0,
   "ballast: remap with the random mapping strategy\n"
   "instead of the two-phase one (exercises moves)"},
  {"pia", 0, NULL, OPT_FLAG, AT(pia), 0, 0,
   "print the phases' PIA region data at the end"},
  {"trace", 0, "FILE", OPT_PATH, AT(trace), 0, 0,
   "rank 0 writes the time of every step to FILE"},
  {"seed", 0, "N", OPT_ULONG, AT(seed), 0, 0,
   "seed of particles and of the random map       (default 1)"},
  {"walls", 0, NULL, OPT_FLAG, AT(walls), 0, 0,
   "reflecting walls instead of periodic boundaries"},
  {"placement", 0, NULL, OPT_FLAG, AT(placement), 0, 0,
   "one block per rank (blocks default to MPI_Dims_create)"},
  {"window", 0, "W", OPT_INT, AT(window), 1, MAX_STEPS,
   "steps per measurement window (default steps/10, >= 1)"},
  {"remap-every", 0, "K", OPT_INT, AT(remap_every), 0, MAX_STEPS,
   "re-apply the strategy's map every K steps: random draws\n"
   "a new map, roundrobin rotates it (exercises\n"
   "md_apply_owner_map); not valid with block     (default 0)"},
  {"rho", 0, "X", OPT_DOUBLE, AT(rho), 0.05, 1.2,
   "liquid density                             (default 0.8442)"},
  {"temperature", 0, "X", OPT_DOUBLE, AT(temperature), 0.0, 10.0,
   "initial temperature                        (default 0.72)"},
  {"drift", 0, "X", OPT_DOUBLE, AT(drift), 0.0, 10.0,
   "cluster drift speed along x                  (default 2.0)"},
  {"skin", 0, "X", OPT_DOUBLE, AT(skin), 0.0, 1.5,
   "Verlet-list skin: lists hold the pairs within 2.5 + X,\n"
   "rebuilt when a particle moved more than X/2 (default 0.3,\n"
   "less in a box under 3 cells of 2.8 per side)"},
  {"equilibrate", 0, "N", OPT_INT, AT(equilibrate), 0, MAX_WARMUP_STEPS,
   "warm-up steps before the run, velocities rescaled to\n"
   "the temperature each step (not measured)    (default 0)"},
  {"progress", 0, "N", OPT_INT, AT(progress), 0, MAX_PROGRESS_LINES,
   "progress lines over the run, 0 = none        (default 10)"},
  {"read-data", 0, "FILE", OPT_PATH, AT(read_data), 0, 0,
   "start from a LAMMPS data file (atom_style atomic, mass 1,\n"
   "orthogonal box) instead of the scenario: box, positions,\n"
   "velocities and ids from FILE (--particles, --rho and\n"
   "--temperature unused; --scenario only labels the run)"},
  {"write-data", 0, "FILE", OPT_PATH, AT(write_data), 0, 0,
   "write the final configuration as a LAMMPS data file\n"
   "(restart with --read-data, or read_data in LAMMPS)"},
  {"write-data-start", 0, "FILE", OPT_PATH, AT(write_start), 0, 0,
   "the same for the state the measured run starts\n"
   "from (after --equilibrate)"},
  {"read-xyz", 0, "FILE", OPT_PATH, AT(read_xyz), 0, 0,
   "start from an extended XYZ frame as --write-xyz writes it"},
  {"write-xyz", 0, "FILE", OPT_PATH, AT(write_xyz), 0, 0,
   "write the final configuration as an extended XYZ frame\n"
   "(species, id, pos, velo; for OVITO, VMD, ASE)"},
  {"json-only", 0, NULL, OPT_FLAG, AT(json_only), 0, 0,
   "print only the {\"md_summary\": ...} line"},
  {"help", 'h', NULL, OPT_HELP, 0, 0, 0, "this text"},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

/* The defaults of the options not given (md_parse_args starts from these). */
static const md_params_t defaults = {
  .scenario = MD_UNIFORM,
  .strategy = MD_BLOCK,
  .particles = 4000,
  .steps = 200,
  .dt = 0.005,
  .seed = 1,
  .rho = 0.8442,
  .temperature = 0.72,
  .drift = 2.0,
  .progress = 10,
  .skin = -1.0,  /* not given: MD_SKIN, or less in a box too small (cells.c) */
};

/* Usage text layout: the help text starts in this column; a longer option
 * label ("--name META") is followed by two spaces instead. */
#define HELP_COLUMN 20
#define LABEL_INDENT 2

void md_usage(FILE *out) {
  fprintf(out, "usage: ballast-md [options]\n");
  for (int k = 0; k < NOPTIONS; k++) {
    const opt_t *o = &options[k];
    char label[64];
    snprintf(label, sizeof label, "--%s%s%s", o->name, o->meta ? " " : "",
             o->meta ? o->meta : "");
    int width = HELP_COLUMN - LABEL_INDENT;
    if ((int)strlen(label) < width)
      fprintf(out, "%*s%-*s", LABEL_INDENT, "", width, label);
    else
      fprintf(out, "%*s%s  ", LABEL_INDENT, "", label);
    for (const char *h = o->help; *h;) {
      const char *nl = strchr(h, '\n');
      int n = nl ? (int)(nl - h) : (int)strlen(h);
      fprintf(out, "%.*s\n", n, h);
      if (!nl) break;
      h = nl + 1;
      fprintf(out, "%*s", HELP_COLUMN, "");
    }
  }
}

int md_errf(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -1;
}

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out,
                      char *err, size_t len) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0')
    return md_errf(err, len, "%s: '%s' is not an integer", opt, s);
  if (v < lo || v > hi)
    return md_errf(err, len, "%s: %ld is out of range [%ld, %ld]", opt, v, lo, hi);
  *out = v;
  return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi,
                        double *out, char *err, size_t len) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end != '\0' || !isfinite(v))
    return md_errf(err, len, "%s: '%s' is not a number", opt, s);
  if (v < lo || v > hi)
    return md_errf(err, len, "%s: %g is out of range [%g, %g]", opt, v, lo, hi);
  *out = v;
  return 0;
}

static int parse_blocks(const char *s, int nb[MD_DIM], char *err, size_t len) {
  const char *q = s;
  for (int d = 0; d < MD_DIM; d++) {
    char *end;
    errno = 0;
    long v = strtol(q, &end, 10);
    if (errno || end == q || v < 1 || v > MAX_BLOCKS_PER_DIM)
      return md_errf(err, len, "--blocks: '%s' is not X,Y,Z with 1 <= X,Y,Z <= %d", s,
                     MAX_BLOCKS_PER_DIM);
    nb[d] = (int)v;
    if (d < MD_DIM - 1) {
      if (*end != ',')
        return md_errf(err, len, "--blocks: '%s' is not X,Y,Z (three comma-separated counts)", s);
      q = end + 1;
    } else if (*end != '\0') {
      return md_errf(err, len, "--blocks: trailing characters in '%s'", s);
    }
  }
  return 0;
}

/* Index of v in the NULL-terminated names, or -1 with err listing them. */
static int parse_choice(const char *opt, const char *what, const char *const *names,
                        const char *v, char *err, size_t len) {
  char list[128] = "";
  for (int k = 0; names[k]; k++) {
    if (!strcmp(v, names[k])) return k;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", names[k]);
  }
  return md_errf(err, len, "%s: unknown %s '%s' (%s)", opt, what, v, list);
}

/* Stores the value v of option o (written a on the command line) into p. */
static int set_value(const opt_t *o, const char *a, const char *v, md_params_t *p,
                     char *err, size_t len) {
  char *at = (char *)p + o->member;
  long lv;
  int k;
  switch (o->kind) {
  case OPT_INT:
    if (parse_long(a, v, (long)o->lo, (long)o->hi, &lv, err, len)) return -1;
    *(int *)at = (int)lv;
    return 0;
  case OPT_LONG:
    if (parse_long(a, v, (long)o->lo, (long)o->hi, &lv, err, len)) return -1;
    *(long *)at = lv;
    return 0;
  case OPT_ULONG:
    if (parse_long(a, v, (long)o->lo, LONG_MAX, &lv, err, len)) return -1;
    *(unsigned long *)at = (unsigned long)lv;
    return 0;
  case OPT_DOUBLE:
    return parse_double(a, v, o->lo, o->hi, (double *)at, err, len);
  case OPT_PATH:
    *(const char **)at = v;
    return 0;
  case OPT_SCENARIO:
    if ((k = parse_choice(a, o->name, scenario_names, v, err, len)) < 0) return -1;
    *(md_scenario_t *)at = (md_scenario_t)k;
    return 0;
  case OPT_STRATEGY:
    if ((k = parse_choice(a, o->name, strategy_names, v, err, len)) < 0) return -1;
    *(md_strategy_t *)at = (md_strategy_t)k;
    return 0;
  case OPT_BLOCKS:
    return parse_blocks(v, (int *)at, err, len);
  case OPT_FLAG:
  case OPT_HELP:
    break;
  }
  return md_errf(err, len, "%s: internal: option without a value", a);
}

/* The option a names ("--name", or "-c" for a short alias), or NULL. */
static const opt_t *find_option(const char *a) {
  for (int k = 0; k < NOPTIONS; k++) {
    const opt_t *o = &options[k];
    if (a[0] == '-' && a[1] == '-' && !strcmp(a + 2, o->name)) return o;
    if (o->short_name && a[0] == '-' && a[1] == o->short_name && a[2] == '\0') return o;
  }
  return NULL;
}

/* The rules between options, checked after all are read. */
static int check_combination(md_params_t *p, char *err, size_t len) {
  if (p->remap_every > 0 && p->strategy == MD_BALLAST)
    return md_errf(err, len, "--remap-every: with --strategy ballast, ballast decides when to "
                          "remap (BALLAST_LB=explicit remaps at every step)");
  if (p->lb_random && p->strategy != MD_BALLAST)
    return md_errf(err, len, "--lb-random needs --strategy ballast");
  if (p->remap_every > 0 && p->strategy == MD_BLOCK)
    return md_errf(err, len, "--remap-every: the block strategy never changes its map; "
                          "use --strategy random or roundrobin");
  if (p->read_data && p->read_xyz)
    return md_errf(err, len, "--read-data and --read-xyz: give one starting configuration");
  if (p->window > p->steps)
    return md_errf(err, len, "--window %d is longer than the run (--steps %d)", p->window, p->steps);
  if (p->window == 0)
    p->window = p->steps >= MD_WINDOWS_PER_RUN ? p->steps / MD_WINDOWS_PER_RUN : 1;
  return 0;
}

int md_parse_args(int argc, char **argv, md_params_t *p, char *err, size_t len) {
  *p = defaults;
  if (len) err[0] = '\0';
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const opt_t *o = find_option(a);
    if (o && o->kind == OPT_HELP) return MD_ARGS_HELP;
    if (o && o->kind == OPT_FLAG) {
      *(int *)((char *)p + o->member) = 1;
      continue;
    }
    if (strncmp(a, "--", 2) != 0)
      return md_errf(err, len, "unexpected argument '%s'", a);
    if (!o)
      return md_errf(err, len, "unknown option '%s' (see --help)", a);
    if (i + 1 >= argc)
      return md_errf(err, len, "%s needs a value", a);
    if (set_value(o, a, argv[++i], p, err, len)) return -1;
  }
  return check_combination(p, err, len);
}
