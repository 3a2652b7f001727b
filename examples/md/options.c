/*
 * ballast-md command line: strict parsing (every number checked, every
 * unknown or malformed option an error naming what was wrong).
 */
#include "md.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *md_scenario_name(md_scenario_t s) {
  switch (s) {
  case MD_UNIFORM: return "uniform";
  case MD_DROPLET: return "droplet";
  case MD_CLUSTER: return "cluster";
  }
  return "?";
}

const char *md_strategy_name(md_strategy_t s) {
  switch (s) {
  case MD_BLOCK: return "block";
  case MD_RANDOM: return "random";
  case MD_ROUNDROBIN: return "roundrobin";
  case MD_BALLAST: return "ballast";
  }
  return "?";
}

void md_usage(FILE *out) {
  fprintf(out,
    "usage: ballast-md [options]\n"
    "  --scenario S      uniform | droplet | cluster          (default uniform)\n"
    "  --particles N     particle count, rounded to the FCC lattice 4*M^3 of the\n"
    "                    liquid (droplet/cluster keep the dense sphere and a\n"
    "                    dilute gas of that lattice)                (default 4000)\n"
    "  --steps N         time steps                                  (default 200)\n"
    "  --dt X            time step, reduced units                  (default 0.005)\n"
    "  --blocks X,Y,Z    blocks per dimension (default: about 8 per rank)\n"
    "  --strategy S      owner map: block | random | roundrobin | ballast\n"
    "                    (ballast: starts as block, then ballast's load\n"
    "                    balancing moves blocks; policy from BALLAST_LB*,\n"
    "                    automatic by default)                   (default block)\n"
    "  --lb-random       ballast: remap with the random mapping strategy\n"
    "                    instead of the two-phase one (exercises moves)\n"
    "  --pia             print the phases' PIA region data at the end\n"
    "  --trace FILE      rank 0 writes the time of every step to FILE\n"
    "  --seed N          seed of particles and of the random map       (default 1)\n"
    "  --walls           reflecting walls instead of periodic boundaries\n"
    "  --placement       one block per rank (blocks default to MPI_Dims_create)\n"
    "  --window W        steps per measurement window (default steps/10, >= 1)\n"
    "  --remap-every K   re-apply the strategy's map every K steps: random draws\n"
    "                    a new map, roundrobin rotates it (exercises\n"
    "                    md_apply_owner_map); not valid with block     (default 0)\n"
    "  --rho X           liquid density                             (default 0.8442)\n"
    "  --temperature X   initial temperature                        (default 0.72)\n"
    "  --drift X         cluster drift speed along x                  (default 2.0)\n"
    "  --skin X          Verlet-list skin: lists hold the pairs within 2.5 + X,\n"
    "                    rebuilt when a particle moved more than X/2 (default 0.3,\n"
    "                    less in a box under 3 cells of 2.8 per side)\n"
    "  --equilibrate N   warm-up steps before the run, velocities rescaled to\n"
    "                    the temperature each step (not measured)    (default 0)\n"
    "  --progress N      progress lines over the run, 0 = none        (default 10)\n"
    "  --read-data FILE  start from a LAMMPS data file (atom_style atomic, mass 1,\n"
    "                    orthogonal box) instead of the scenario: box, positions,\n"
    "                    velocities and ids from FILE (--particles, --rho and\n"
    "                    --temperature unused; --scenario only labels the run)\n"
    "  --write-data FILE write the final configuration as a LAMMPS data file\n"
    "                    (restart with --read-data, or read_data in LAMMPS)\n"
    "  --write-data-start FILE  the same for the state the measured run starts\n"
    "                    from (after --equilibrate)\n"
    "  --read-xyz FILE   start from an extended XYZ frame as --write-xyz writes it\n"
    "  --write-xyz FILE  write the final configuration as an extended XYZ frame\n"
    "                    (species, id, pos, velo; for OVITO, VMD, ASE)\n"
    "  --json-only       print only the {\"md_summary\": ...} line\n"
    "  --help            this text\n");
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
    if (errno || end == q || v < 1 || v > 1024)
      return md_errf(err, len, "--blocks: '%s' is not X,Y,Z with 1 <= X,Y,Z <= 1024", s);
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

int md_parse_args(int argc, char **argv, md_params_t *p, char *err, size_t len) {
  memset(p, 0, sizeof *p);
  p->scenario = MD_UNIFORM;
  p->strategy = MD_BLOCK;
  p->particles = 4000;
  p->steps = 200;
  p->dt = 0.005;
  p->seed = 1;
  p->rho = 0.8442;
  p->temperature = 0.72;
  p->drift = 2.0;
  p->progress = 10;
  p->skin = -1.0;  /* not given: MD_SKIN, or less in a box too small (cells.c) */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    long lv;
    /* options that take no value */
    if (!strcmp(a, "--walls")) { p->walls = 1; continue; }
    if (!strcmp(a, "--placement")) { p->placement = 1; continue; }
    if (!strcmp(a, "--json-only")) { p->json_only = 1; continue; }
    if (!strcmp(a, "--pia")) { p->pia = 1; continue; }
    if (!strcmp(a, "--lb-random")) { p->lb_random = 1; continue; }
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return md_errf(err, len, "help");
    if (strncmp(a, "--", 2) != 0)
      return md_errf(err, len, "unexpected argument '%s'", a);
    const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
    int known = !strcmp(a, "--scenario") || !strcmp(a, "--particles") ||
                !strcmp(a, "--steps") || !strcmp(a, "--dt") || !strcmp(a, "--blocks") ||
                !strcmp(a, "--strategy") || !strcmp(a, "--seed") ||
                !strcmp(a, "--window") || !strcmp(a, "--remap-every") ||
                !strcmp(a, "--rho") || !strcmp(a, "--temperature") ||
                !strcmp(a, "--drift") || !strcmp(a, "--progress") ||
                !strcmp(a, "--equilibrate") || !strcmp(a, "--trace") ||
                !strcmp(a, "--skin") ||
                !strcmp(a, "--read-data") || !strcmp(a, "--write-data") ||
                !strcmp(a, "--write-data-start") || !strcmp(a, "--write-xyz") ||
                !strcmp(a, "--read-xyz");
    if (!known)
      return md_errf(err, len, "unknown option '%s' (see --help)", a);
    if (!v)
      return md_errf(err, len, "%s needs a value", a);
    i++;
    if (!strcmp(a, "--scenario")) {
      if (!strcmp(v, "uniform")) p->scenario = MD_UNIFORM;
      else if (!strcmp(v, "droplet")) p->scenario = MD_DROPLET;
      else if (!strcmp(v, "cluster")) p->scenario = MD_CLUSTER;
      else return md_errf(err, len, "--scenario: unknown scenario '%s' (uniform, droplet, cluster)", v);
    } else if (!strcmp(a, "--strategy")) {
      if (!strcmp(v, "block")) p->strategy = MD_BLOCK;
      else if (!strcmp(v, "random")) p->strategy = MD_RANDOM;
      else if (!strcmp(v, "roundrobin")) p->strategy = MD_ROUNDROBIN;
      else if (!strcmp(v, "ballast")) p->strategy = MD_BALLAST;
      else return md_errf(err, len, "--strategy: unknown strategy '%s' "
                                 "(block, random, roundrobin, ballast)", v);
    } else if (!strcmp(a, "--particles")) {
      if (parse_long(a, v, 32, 50000000L, &lv, err, len)) return -1;
      p->particles = lv;
    } else if (!strcmp(a, "--steps")) {
      if (parse_long(a, v, 1, INT_MAX / 2, &lv, err, len)) return -1;
      p->steps = (int)lv;
    } else if (!strcmp(a, "--dt")) {
      if (parse_double(a, v, 1e-6, 0.05, &p->dt, err, len)) return -1;
    } else if (!strcmp(a, "--blocks")) {
      if (parse_blocks(v, p->nb, err, len)) return -1;
    } else if (!strcmp(a, "--seed")) {
      if (parse_long(a, v, 0, LONG_MAX, &lv, err, len)) return -1;
      p->seed = (unsigned long)lv;
    } else if (!strcmp(a, "--window")) {
      if (parse_long(a, v, 1, INT_MAX / 2, &lv, err, len)) return -1;
      p->window = (int)lv;
    } else if (!strcmp(a, "--remap-every")) {
      if (parse_long(a, v, 0, INT_MAX / 2, &lv, err, len)) return -1;
      p->remap_every = (int)lv;
    } else if (!strcmp(a, "--rho")) {
      if (parse_double(a, v, 0.05, 1.2, &p->rho, err, len)) return -1;
    } else if (!strcmp(a, "--temperature")) {
      if (parse_double(a, v, 0.0, 10.0, &p->temperature, err, len)) return -1;
    } else if (!strcmp(a, "--drift")) {
      if (parse_double(a, v, 0.0, 10.0, &p->drift, err, len)) return -1;
    } else if (!strcmp(a, "--equilibrate")) {
      if (parse_long(a, v, 0, 1000000, &lv, err, len)) return -1;
      p->equilibrate = (int)lv;
    } else if (!strcmp(a, "--skin")) {
      if (parse_double(a, v, 0.0, 1.5, &p->skin, err, len)) return -1;
    } else if (!strcmp(a, "--trace")) {
      p->trace = v;
    } else if (!strcmp(a, "--read-data")) {
      p->read_data = v;
    } else if (!strcmp(a, "--write-data")) {
      p->write_data = v;
    } else if (!strcmp(a, "--write-data-start")) {
      p->write_start = v;
    } else if (!strcmp(a, "--read-xyz")) {
      p->read_xyz = v;
    } else if (!strcmp(a, "--write-xyz")) {
      p->write_xyz = v;
    } else if (!strcmp(a, "--progress")) {
      if (parse_long(a, v, 0, 1000, &lv, err, len)) return -1;
      p->progress = (int)lv;
    }
  }
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
    p->window = p->steps >= 10 ? p->steps / 10 : 1;
  return 0;
}
