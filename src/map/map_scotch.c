/* SCOTCH plumbing with the 7.0.3 traps worked around:
 *  - the integer width of the library is checked against the header's;
 *  - weights are normalised so SCOTCH's 32-bit sums cannot overflow;
 *  - tree-leaf targets are built from levels (and restricted with
 *    SCOTCH_archSub, never by inducing subgraphs);
 *  - every mapping runs in a deterministic, fixed-seed context. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

double map__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int map__scotch_check_width(int lib_size, int hdr_size) {
  if (lib_size != hdr_size) {
    BALLAST_ERROR("libscotch uses %d-byte integers but scotch.h declares "
                  "SCOTCH_Num with %d bytes: rebuild ballast against the "
                  "matching scotch.h (e.g. /usr/include/scotch-int%d)",
                  lib_size, hdr_size, 8 * lib_size);
    return BALLAST_ESCOTCH;
  }
  return 0;
}

int map__scotch_check(void) {
  static int checked = 0; /* 0 unknown, 1 good, -1 bad */
  int c = __atomic_load_n(&checked, __ATOMIC_RELAXED);
  if (c == 0) {
    c = map__scotch_check_width(SCOTCH_numSizeof(), (int)sizeof(SCOTCH_Num))
            ? -1 : 1;
    __atomic_store_n(&checked, c, __ATOMIC_RELAXED);
  }
  return c > 0 ? 0 : BALLAST_ESCOTCH;
}

void map__normalize(const double *w, int64_t n, double cap, double *scale,
                    int *exact) {
  double sum = 0, npos = 0;
  int ints = 1;
  for (int64_t i = 0; i < n; i++) {
    sum += w[i];
    if (w[i] > 0)
      npos++;
    if (w[i] != floor(w[i]) || w[i] < 1)
      ints = 0;
  }
  if (ints && sum <= cap) {
    *scale = 1.0;
    *exact = 1;
    return;
  }
  *exact = 0;
  if (sum <= 0) {
    *scale = 1.0;
    return;
  }
  double s = 100.0 * npos / sum; /* mean of about 100 */
  if (s * sum > cap)
    s = cap / sum;
  *scale = s;
}

SCOTCH_Num map__scaled(double w, double scale) {
  double r = floor(w * scale + 0.5);
  if (r < 1)
    return 1;
  if (r > (double)(INT32_MAX / 2))
    return INT32_MAX / 2;
  return (SCOTCH_Num)r;
}

int map__tgt_tleaf(map__tgt_t *t, int nlevels, const int *arity,
                   const double *cost, int mult, int64_t nsel,
                   const SCOTCH_Num *sel) {
  memset(t, 0, sizeof *t);
  SCOTCH_Num sz[MAP__MAXLEV + 2], lk[MAP__MAXLEV + 2];
  int nl = 0;
  SCOTCH_Num total = 0;
  /* tleaf distances add the link values from the separating level down, so
   * a level's link value is its cost minus the cost of the level below. */
  for (int l = 0; l < nlevels; l++) {
    double below = l + 1 < nlevels ? cost[l + 1] : 0.0;
    double d = floor(cost[l] - below + 0.5);
    sz[nl] = arity[l];
    lk[nl] = d < 1 ? 1 : (SCOTCH_Num)d;
    total += lk[nl++];
  }
  if (mult > 1) {
    sz[nl] = mult;
    lk[nl] = 1;
    total += lk[nl++];
  }
  SCOTCH_archInit(&t->full);
  t->has_full = 1;
  if (SCOTCH_archTleaf(&t->full, nl, sz, lk) != 0) {
    BALLAST_WARN("SCOTCH_archTleaf rejected a %d-level tree", nl);
    return BALLAST_ESCOTCH;
  }
  t->maxdist = total;
  if (sel) {
    SCOTCH_archInit(&t->sub);
    t->has_sub = 1;
    if (SCOTCH_archSub(&t->sub, &t->full, (SCOTCH_Num)nsel,
                       (SCOTCH_Num *)sel) != 0) {
      BALLAST_WARN("SCOTCH_archSub failed on %lld leaves", (long long)nsel);
      return BALLAST_ESCOTCH;
    }
  }
  return 0;
}

SCOTCH_Arch *map__tgt_arch(map__tgt_t *t) {
  return t->has_sub ? &t->sub : &t->full;
}

void map__tgt_exit(map__tgt_t *t) {
  if (t->has_sub)
    SCOTCH_archExit(&t->sub);
  if (t->has_full)
    SCOTCH_archExit(&t->full);
  t->has_sub = t->has_full = 0;
}

int map__ctx_init(SCOTCH_Context *ctx, unsigned seed) {
  if (SCOTCH_contextInit(ctx) != 0)
    return BALLAST_ESCOTCH;
  /* Same inputs, same mapping: deterministic algorithms, a private random
   * generator with a fixed seed, and one thread (the MPI ranks already
   * occupy the cores; SCOTCH's spinning threads slow everything down when
   * cores are shared). */
  if (SCOTCH_contextOptionSetNum(ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) ||
      SCOTCH_contextOptionSetNum(ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1) ||
      SCOTCH_contextRandomClone(ctx) ||
      SCOTCH_contextThreadSpawn(ctx, 1, NULL)) {
    SCOTCH_contextExit(ctx);
    return BALLAST_ESCOTCH;
  }
  SCOTCH_contextRandomSeed(ctx, (SCOTCH_Num)(seed & 0x7fffffff));
  return 0;
}

int map__sgraph_build(map__sgraph_t *s, SCOTCH_Context *ctx, unsigned seed,
                      SCOTCH_Num n, const SCOTCH_Num *vert,
                      const SCOTCH_Num *velo, SCOTCH_Num narc,
                      const SCOTCH_Num *edge, const SCOTCH_Num *edlo) {
  memset(s, 0, sizeof *s);
  if (SCOTCH_graphInit(&s->graph) != 0)
    return BALLAST_ESCOTCH;
  s->has_graph = 1;
  if (SCOTCH_graphBuild(&s->graph, 0, n, vert, vert + 1, velo, NULL, narc,
                        edge, edlo) != 0) {
    BALLAST_WARN("SCOTCH_graphBuild failed (%d vertices, %d arcs)", (int)n,
                 (int)narc);
    return BALLAST_ESCOTCH;
  }
  if (ctx) {
    /* A shared context: reseeding makes the result independent of what
     * was mapped with it before. */
    SCOTCH_contextRandomSeed(ctx, (SCOTCH_Num)(seed & 0x7fffffff));
  } else {
    int rc = map__ctx_init(&s->ctx, seed);
    if (rc)
      return rc;
    s->has_ctx = 1;
    ctx = &s->ctx;
  }
  if (SCOTCH_graphInit(&s->bound) != 0)
    return BALLAST_ESCOTCH;
  s->has_bound = 1;
  if (SCOTCH_contextBindGraph(ctx, &s->graph, &s->bound) != 0)
    return BALLAST_ESCOTCH;
  return 0;
}

void map__sgraph_exit(map__sgraph_t *s) {
  if (s->has_bound)
    SCOTCH_graphExit(&s->bound);
  if (s->has_graph)
    SCOTCH_graphExit(&s->graph);
  if (s->has_ctx)
    SCOTCH_contextExit(&s->ctx);
  s->has_bound = s->has_graph = s->has_ctx = 0;
}

/* ballast's default first-mapping strategy: SCOTCH's recursive
 * bipartitioning with a single multilevel pass per bipartition (SCOTCH's own
 * runs two and keeps the better) and FM refinement without diffusion: about
 * 3x faster, and on stencils within a percent of SCOTCH's hop-bytes. Small
 * graphs (a node's share in phase 2) grow 4 initial bipartitions instead of
 * 10 at the coarsest level: 1.5x faster for +0.4% hop-bytes (skipping the
 * multilevel scheme altogether was 2x faster but up to 9% worse). */
void map__strategy_string(char *buf, size_t len, double bal, int direct) {
  char f[96];
  snprintf(f, sizeof f, "f{move=120,pass=-1,bal=%g,type=b}", bal);
  snprintf(buf, len, "r{job=t,bal=%g,map=t,poli=S,sep=m{asc=b{bnd=%s,org=%s,"
           "width=3},low=h{pass=%d}%s,vert=120,rat=0.8}}", bal, f, f,
           direct ? 4 : 10, f);
}

/* ballast's remap strategy: SCOTCH 7.0.3's own (SCOTCH_STRATREMAP: k-way
 * multilevel, initial remap by recursive bipartitioning at 10,000
 * vertices) with a wider band (5) and k-way FM refinement of up to 2,000
 * moves instead of 80 on the way up: on a 27-point 64^3 stencil after a
 * local 4x load change (32 nodes x 16 cores) it moves 36% fewer tasks for
 * 22% fewer hop-bytes than SCOTCH's built strategy (bench/zoltan). */
static void remap_strategy_string(char *buf, size_t len, double bal) {
  char sep[512], f[96];
  snprintf(f, sizeof f, "f{move=120,pass=-1,bal=%g,type=b}", bal);
  snprintf(sep, sizeof sep, "m{asc=b{bnd=(d{pass=40,type=b}|)%s,org=%s,"
           "width=3},low=h{pass=10}%s,vert=120,rat=0.8}", f, f, f);
  snprintf(buf, len, "m{asc=b{width=5,bnd=d{pass=40,dif=1,rem=0}"
           "f{move=2000,pass=-1,bal=%g},org=f{move=2000,pass=-1,bal=%g}},"
           "low=r{job=t,bal=%g,map=t,poli=S,sep=(%s|%s)},vert=10000,rat=0.8,"
           "type=h}", bal, bal, bal, sep, sep);
}

int map__sgraph_map(map__sgraph_t *s, const SCOTCH_Arch *arch,
                    SCOTCH_Num nparts, int flags, const char *stratstr,
                    double balrat, SCOTCH_Num *parotab,
                    const SCOTCH_Num *vmlotab, SCOTCH_Num *parttab) {
  SCOTCH_Strat strat;
  if (SCOTCH_stratInit(&strat) != 0)
    return BALLAST_ESCOTCH;
  int rc = 0;
  char buf[2048];
  if (parotab && !flags) {
    remap_strategy_string(buf, sizeof buf, balrat);
    if (SCOTCH_stratGraphMap(&strat, buf) != 0) {
      BALLAST_WARN("SCOTCH rejects the remap strategy '%s'", buf);
      rc = BALLAST_ESCOTCH;
    }
  } else if (!parotab && !flags) {
    if (!stratstr) {
      map__strategy_string(buf, sizeof buf, balrat, 0);
      stratstr = buf;
    }
    if (SCOTCH_stratGraphMap(&strat, stratstr) != 0) {
      BALLAST_WARN("SCOTCH rejects the mapping strategy '%s'", stratstr);
      rc = BALLAST_ESCOTCH;
    }
  } else if (SCOTCH_stratGraphMapBuild(
                 &strat, (SCOTCH_Num)(flags | (parotab ? SCOTCH_STRATREMAP : 0)),
                 nparts, balrat) != 0) {
    rc = BALLAST_ESCOTCH;
  }
  if (!rc && parotab &&
      SCOTCH_graphRemap(&s->bound, arch, parotab, 1.0, vmlotab, &strat,
                        parttab) != 0)
    rc = BALLAST_ESCOTCH;
  if (!rc && !parotab &&
      SCOTCH_graphMap(&s->bound, arch, &strat, parttab) != 0)
    rc = BALLAST_ESCOTCH;
  SCOTCH_stratExit(&strat);
  if (rc)
    BALLAST_WARN("SCOTCH failed to %smap a graph onto %d parts",
                 parotab ? "re" : "", (int)nparts);
  return rc;
}
