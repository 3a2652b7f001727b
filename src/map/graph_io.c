/* SCOTCH .grf reading and writing. Every malformed input is reported with
 * the line and what was expected; nothing is trusted (counts, ranges,
 * symmetry). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

typedef struct {
  FILE *f;
  const char *what;
  long line;
} rd_t;

/* Reads one integer token. 0 on success, 1 at end of file, -1 on garbage
 * (a NUL byte inside a token is garbage, not its end), -2 on a read error. */
static int rd_int(rd_t *r, int64_t *out) {
  int c;
  do {
    c = getc(r->f);
    if (c == '\n')
      r->line++;
  } while (c != EOF && isspace(c));
  if (c == EOF)
    return ferror(r->f) ? -2 : 1;
  char buf[32];
  int n = 0;
  while (c != EOF && !isspace(c)) {
    if (n < 31 && c != 0)
      buf[n++] = (char)c;
    else
      return -1;
    c = getc(r->f);
  }
  if (c == EOF && ferror(r->f))
    return -2;
  if (c == '\n')
    ungetc(c, r->f);
  buf[n] = 0;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno || !end || *end)
    return -1;
  *out = v;
  return 0;
}

#define PERR(r, ...)                                                         \
  do {                                                                       \
    char m_[256];                                                            \
    snprintf(m_, sizeof m_, __VA_ARGS__);                                    \
    BALLAST_WARN("%s:%ld: malformed .grf: %s", (r)->what, (r)->line, m_);     \
  } while (0)

static int need(rd_t *r, int64_t *v, const char *field) {
  int rc = rd_int(r, v);
  if (rc == 1) {
    PERR(r, "unexpected end of file while reading %s", field);
    return BALLAST_EPARSE;
  }
  if (rc == -2) {
    BALLAST_WARN("%s: cannot read the .grf: %s", r->what, strerror(errno));
    return BALLAST_EIO;
  }
  if (rc < 0) {
    PERR(r, "%s is not an integer", field);
    return BALLAST_EPARSE;
  }
  return 0;
}

typedef struct {
  int64_t key; /* u * 2^32 + v */
  double w;
} arc_t;

static int cmp_arc(const void *x, const void *y) {
  const arc_t *a = x, *b = y;
  if (a->key != b->key)
    return (a->key > b->key) - (a->key < b->key);
  return (a->w > b->w) - (a->w < b->w);
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* Index of label \a lab in the sorted (label, index) pairs, or -1. */
static int64_t find_label(const int64_t *pairs, int64_t n, int64_t lab) {
  int64_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (pairs[2 * mid] == lab)
      return pairs[2 * mid + 1];
    if (pairs[2 * mid] < lab)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* What reading one .grf works with, from the header to the graph. */
typedef struct {
  rd_t r;
  int64_t nv, na, base;
  int has_lab, has_ew, has_vw;
  int64_t *lab;       /* 2 nv: (label, vertex) pairs, sorted once read */
  int64_t *deg, *nbr; /* nv degrees; na neighbours as written */
  double *ew, *vw;    /* na edge weights; nv vertex weights */
  arc_t *fw, *bw;     /* arcs going up (u > v) and coming back */
  int64_t nf, nb;
  int64_t cap;        /* arcs nbr and ew hold: grown as arcs are read */
} grf_t;

static void grf_free(grf_t *p) {
  free(p->lab);
  free(p->deg);
  free(p->nbr);
  free(p->ew);
  free(p->vw);
  free(p->fw);
  free(p->bw);
}

/* The counts of the header against what is left of a regular file, before
 * anything is allocated for them: every vertex needs at least its degree
 * and every arc its neighbour, two bytes each (a digit and a separator). */
static int grf_fits(grf_t *p) {
  struct stat st;
  long pos = ftell(p->r.f);
  if (fstat(fileno(p->r.f), &st) != 0 || !S_ISREG(st.st_mode) || pos < 0)
    return 0;
  int64_t per_v = 2 * (1 + p->has_lab + p->has_vw), per_a = 2 * (1 + p->has_ew);
  int64_t need = p->nv * per_v + p->na * per_a - 1;
  if (need > (int64_t)st.st_size - pos) {
    PERR(&p->r, "the header announces %" PRId64 " vertices and %" PRId64
         " arcs, which need at least %" PRId64 " bytes; the file has %"
         PRId64 " left", p->nv, p->na, need, (int64_t)st.st_size - pos);
    return BALLAST_EPARSE;
  }
  return 0;
}

/* The header: version, counts, base and format flags, all checked. */
static int grf_header(grf_t *p) {
  rd_t *r = &p->r;
  int64_t ver, flags;
  int rc;
  if ((rc = need(r, &ver, "the version")))
    return rc;
  if (ver != 0) {
    PERR(r, "version %" PRId64 " (only 0 is known)", ver);
    return BALLAST_EPARSE;
  }
  if ((rc = need(r, &p->nv, "the vertex count")) ||
      (rc = need(r, &p->na, "the arc count")) ||
      (rc = need(r, &p->base, "the base value")) ||
      (rc = need(r, &flags, "the format flags")))
    return rc;
  if (p->nv < 1 || p->nv > INT32_MAX - 1) {
    PERR(r, "vertex count %" PRId64 " out of range 1..2^31-2", p->nv);
    return BALLAST_EPARSE;
  }
  if (p->na < 0 || p->na > INT32_MAX - 1 || p->na % 2) {
    PERR(r, "arc count %" PRId64 " must be even and below 2^31", p->na);
    return BALLAST_EPARSE;
  }
  if ((p->base != 0 && p->base != 1) || flags < 0 || flags > 111 ||
      (flags % 10) > 1 || ((flags / 10) % 10) > 1) {
    PERR(r, "base %" PRId64 " / flags %03" PRId64 " invalid (base 0 or 1, "
         "flags three 0/1 digits: labels, edge weights, vertex weights)",
         p->base, flags);
    return BALLAST_EPARSE;
  }
  p->has_lab = flags >= 100;
  p->has_ew = (flags / 10) % 10;
  p->has_vw = flags % 10;
  return grf_fits(p);
}

/* Room for the arcs up to \a need: the header's count is only believed
 * as far as the arcs read so far (a pipe cannot be measured first). */
static int grf_grow(grf_t *p, int64_t need) {
  if (need <= p->cap)
    return 0;
  int64_t cap = p->cap * 2 > need ? p->cap * 2 : need;
  if (cap > p->na)
    cap = p->na;
  int64_t *nbr = ballast__realloc(p->nbr, (size_t)cap * sizeof *nbr);
  if (!nbr)
    return BALLAST_ENOMEM;
  p->nbr = nbr;
  double *ew = ballast__realloc(p->ew, (size_t)cap * sizeof *ew);
  if (!ew)
    return BALLAST_ENOMEM;
  p->ew = ew;
  p->cap = cap;
  return 0;
}

static int grf_alloc(grf_t *p) {
  size_t nv = (size_t)p->nv, na = 1;
  p->cap = 1;
  p->lab = p->has_lab ? ballast__malloc(nv * 2 * sizeof *p->lab) : NULL;
  p->deg = ballast__malloc(nv * sizeof *p->deg);
  p->nbr = ballast__malloc(na * sizeof *p->nbr);
  p->ew = ballast__malloc(na * sizeof *p->ew);
  p->vw = ballast__malloc(nv * sizeof *p->vw);
  if ((p->has_lab && !p->lab) || !p->deg || !p->nbr || !p->ew || !p->vw)
    return BALLAST_ENOMEM;
  return 0;
}

/* A weight: not negative, and held exactly by the graph's doubles (so a
 * graph read and written back is the same file). */
static int need_weight(rd_t *r, int64_t *x, const char *field,
                       const char *what) {
  int rc = need(r, x, field);
  if (!rc && *x < 0) {
    PERR(r, "negative %s %" PRId64, what, *x);
    return BALLAST_EPARSE;
  }
  if (!rc && *x > MAP__GRF_MAX_WEIGHT) {
    PERR(r, "%s %" PRId64 " above 2^53 (not held exactly)", what, *x);
    return BALLAST_EPARSE;
  }
  return rc;
}

/* Vertex \a v: label, weight, degree and its arcs from arc \a *a on. */
static int grf_vertex(grf_t *p, int64_t v, int64_t *a) {
  rd_t *r = &p->r;
  int64_t x;
  int rc;
  if (p->has_lab) {
    if ((rc = need(r, &x, "a vertex label")))
      return rc;
    p->lab[2 * v] = x;
    p->lab[2 * v + 1] = v;
  }
  p->vw[v] = 1;
  if (p->has_vw) {
    if ((rc = need_weight(r, &x, "a vertex weight", "vertex weight")))
      return rc;
    p->vw[v] = (double)x;
  }
  if ((rc = need(r, &p->deg[v], "a vertex degree")))
    return rc;
  if (p->deg[v] < 0 || p->deg[v] > p->na - *a) {
    PERR(r, "vertex %" PRId64 " has degree %" PRId64 ": more arcs than the "
         "header's %" PRId64, v + p->base, p->deg[v], p->na);
    return BALLAST_EPARSE;
  }
  if ((rc = grf_grow(p, *a + p->deg[v])))
    return rc;
  for (int64_t i = 0; i < p->deg[v]; i++, (*a)++) {
    p->ew[*a] = 1;
    if (p->has_ew) {
      if ((rc = need_weight(r, &x, "an edge weight", "edge weight")))
        return rc;
      p->ew[*a] = (double)x;
    }
    if ((rc = need(r, &p->nbr[*a], "a neighbour")))
      return rc;
  }
  return 0;
}

/* Every vertex, then nothing more; labels unique. */
static int grf_body(grf_t *p) {
  int64_t a = 0, extra;
  int rc;
  for (int64_t v = 0; v < p->nv; v++)
    if ((rc = grf_vertex(p, v, &a)))
      return rc;
  if (a != p->na) {
    PERR(&p->r, "the degrees add up to %" PRId64 " arcs, the header says %"
         PRId64, a, p->na);
    return BALLAST_EPARSE;
  }
  if (rd_int(&p->r, &extra) != 1) {
    PERR(&p->r, "trailing data after the last vertex");
    return BALLAST_EPARSE;
  }
  if (!p->has_lab)
    return 0;
  qsort(p->lab, (size_t)p->nv, 2 * sizeof *p->lab, cmp_i64);
  for (int64_t v = 1; v < p->nv; v++)
    if (p->lab[2 * v] == p->lab[2 * v - 2]) {
      PERR(&p->r, "vertex label %" PRId64 " used twice", p->lab[2 * v]);
      return BALLAST_EPARSE;
    }
  return 0;
}

/* Resolves the neighbours into arcs going up and coming back, checking
 * range and self-loops. */
static int grf_arcs(grf_t *p) {
  const char *what = p->r.what;
  int64_t half = p->na / 2, a = 0;
  p->fw = ballast__malloc((size_t)(half + 1) * sizeof *p->fw);
  p->bw = ballast__malloc((size_t)(half + 1) * sizeof *p->bw);
  if (!p->fw || !p->bw)
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < p->nv; v++)
    for (int64_t i = 0; i < p->deg[v]; i++, a++) {
      int64_t u = p->has_lab ? find_label(p->lab, p->nv, p->nbr[a])
                             : p->nbr[a] - p->base;
      if (u < 0 || u >= p->nv) {
        BALLAST_WARN("%s: malformed .grf: vertex %" PRId64 " has neighbour %"
                     PRId64 ", not a vertex", what, v + p->base, p->nbr[a]);
        return BALLAST_EPARSE;
      }
      if (u == v) {
        BALLAST_WARN("%s: malformed .grf: vertex %" PRId64 " has a loop",
                     what, v + p->base);
        return BALLAST_EPARSE;
      }
      arc_t *dst = u > v ? p->fw : p->bw;
      int64_t *k = u > v ? &p->nf : &p->nb;
      if (*k >= half) {
        BALLAST_WARN("%s: malformed .grf: the adjacency is not symmetric",
                     what);
        return BALLAST_EPARSE;
      }
      int64_t lo = u < v ? u : v, hi = u < v ? v : u;
      dst[*k].key = lo * ((int64_t)1 << 32) + hi;
      dst[(*k)++].w = p->ew[a];
    }
  return 0;
}

/* Every arc going up comes back with the same weight, and once only. */
static int grf_symmetric(grf_t *p) {
  const char *what = p->r.what;
  int64_t nf = p->nf, base = p->base;
  const arc_t *fw = p->fw, *bw = p->bw;
  qsort(p->fw, (size_t)nf, sizeof *p->fw, cmp_arc);
  qsort(p->bw, (size_t)p->nb, sizeof *p->bw, cmp_arc);
  if (nf != p->nb) {
    BALLAST_WARN("%s: malformed .grf: the adjacency is not symmetric (%" PRId64
                 " arcs go up, %" PRId64 " come back)", what, nf, p->nb);
    return BALLAST_EPARSE;
  }
  for (int64_t i = 0; i < nf; i++) {
    if (fw[i].key != bw[i].key || fw[i].w != bw[i].w) {
      int64_t k = fw[i].key;
      BALLAST_WARN("%s: malformed .grf: the adjacency is not symmetric "
                   "(edge %" PRId64 "-%" PRId64 " missing or weighted "
                   "differently in one direction)", what,
                   (k >> 32) + base, (k & 0xffffffff) + base);
      return BALLAST_EPARSE;
    }
    if (i > 0 && fw[i].key == fw[i - 1].key) {
      BALLAST_WARN("%s: malformed .grf: edge %" PRId64 "-%" PRId64
                   " listed twice", what, (fw[i].key >> 32) + base,
                   (fw[i].key & 0xffffffff) + base);
      return BALLAST_EPARSE;
    }
  }
  return 0;
}

/* The graph of the checked arcs. */
static int grf_build(const grf_t *p, rta_graph_t **out) {
  rta_graph_t *g = NULL;
  int rc = rta_graph_create(p->nv, &g);
  if (rc)
    return rc;
  for (int64_t v = 0; v < p->nv; v++)
    g->work[v] = p->vw[v];
  for (int64_t i = 0; i < p->nf && !rc; i++)
    rc = rta_graph_add_edge(g, p->fw[i].key >> 32, p->fw[i].key & 0xffffffff,
                            p->fw[i].w);
  if (!rc)
    rc = map__graph_finalize(g);
  if (rc) {
    rta_graph_destroy(g);
    return rc;
  }
  *out = g;
  return 0;
}

int rta_graph_load_grf(FILE *f, const char *what, rta_graph_t **out) {
  if (!f || !out)
    return BALLAST_EINVAL;
  *out = NULL;
  grf_t p;
  memset(&p, 0, sizeof p);
  p.r = (rd_t){f, what ? what : "graph", 1};
  int rc = grf_header(&p);
  if (rc)
    return rc;
  if (!(rc = grf_alloc(&p)) && !(rc = grf_body(&p)) && !(rc = grf_arcs(&p)) &&
      !(rc = grf_symmetric(&p)))
    rc = grf_build(&p, out);
  grf_free(&p);
  return rc;
}

/* A weight as the .grf integer that reads back as the same double, or -1
 * when there is none (fractional, negative, above 2^53, not finite). */
static int64_t grf_weight(double w) {
  if (!(w >= 0 && w <= (double)MAP__GRF_MAX_WEIGHT) || w != floor(w))
    return -1;
  return (int64_t)w;
}

/* Every weight is written exactly or the graph is refused before a byte is
 * written: a .grf holds integers, and a file that reads back differently
 * than the graph it came from is worse than none. */
static int grf_check_weights(const rta_graph_t *g) {
  for (int64_t v = 0; v < g->nvert; v++) {
    if (grf_weight(g->work[v]) < 0) {
      BALLAST_WARN("cannot write vertex %" PRId64 " as .grf: its work %.17g "
                   "is not an integer in 0..2^53", v, g->work[v]);
      return BALLAST_ERANGE;
    }
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
      if (grf_weight(g->adjw[i]) < 0) {
        BALLAST_WARN("cannot write edge %" PRId64 "-%d as .grf: its bytes "
                     "%.17g are not an integer in 0..2^53", v, (int)g->adj[i],
                     g->adjw[i]);
        return BALLAST_ERANGE;
      }
  }
  return 0;
}

int rta_graph_save_grf(rta_graph_t *g, FILE *f) {
  if (!g || !f)
    return BALLAST_EINVAL;
  int rc = map__graph_finalize(g);
  if (rc || (rc = grf_check_weights(g)))
    return rc;
  if (fprintf(f, "0\n%" PRId64 " %" PRId64 "\n0 011\n", g->nvert,
              g->xadj[g->nvert]) < 0)
    return BALLAST_EIO;
  for (int64_t v = 0; v < g->nvert; v++) {
    int bad = fprintf(f, "%" PRId64 " %" PRId64, grf_weight(g->work[v]),
                      g->xadj[v + 1] - g->xadj[v]) < 0;
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1] && !bad; i++)
      bad = fprintf(f, " %" PRId64 " %d", grf_weight(g->adjw[i]),
                    (int)g->adj[i]) < 0;
    if (bad || fputc('\n', f) == EOF)
      return BALLAST_EIO;
  }
  return ferror(f) ? BALLAST_EIO : 0;
}
