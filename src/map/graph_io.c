/* SCOTCH .grf reading and writing. Every malformed input is reported with
 * the line and what was expected; nothing is trusted (counts, ranges,
 * symmetry). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

typedef struct {
  FILE *f;
  const char *what;
  long line;
} rd_t;

/* Reads one integer token. 0 on success, 1 at end of file, -1 on garbage. */
static int rd_int(rd_t *r, int64_t *out) {
  int c;
  do {
    c = getc(r->f);
    if (c == '\n')
      r->line++;
  } while (c != EOF && isspace(c));
  if (c == EOF)
    return 1;
  char buf[32];
  int n = 0;
  while (c != EOF && !isspace(c)) {
    if (n < 31)
      buf[n++] = (char)c;
    else
      return -1;
    c = getc(r->f);
  }
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

int rta_graph_load_grf(FILE *f, const char *what, rta_graph_t **out) {
  if (!f || !out)
    return BALLAST_EINVAL;
  *out = NULL;
  rd_t r = {f, what ? what : "graph", 1};
  int64_t ver, nv, na, base, flags;
  int rc;
  if ((rc = need(&r, &ver, "the version")))
    return rc;
  if (ver != 0) {
    PERR(&r, "version %" PRId64 " (only 0 is known)", ver);
    return BALLAST_EPARSE;
  }
  if ((rc = need(&r, &nv, "the vertex count")) ||
      (rc = need(&r, &na, "the arc count")) ||
      (rc = need(&r, &base, "the base value")) ||
      (rc = need(&r, &flags, "the format flags")))
    return rc;
  if (nv < 1 || nv > INT32_MAX - 1) {
    PERR(&r, "vertex count %" PRId64 " out of range 1..2^31-2", nv);
    return BALLAST_EPARSE;
  }
  if (na < 0 || na > INT32_MAX - 1 || na % 2) {
    PERR(&r, "arc count %" PRId64 " must be even and below 2^31", na);
    return BALLAST_EPARSE;
  }
  if ((base != 0 && base != 1) || flags < 0 || flags > 111 ||
      (flags % 10) > 1 || ((flags / 10) % 10) > 1) {
    PERR(&r, "base %" PRId64 " / flags %03" PRId64 " invalid (base 0 or 1, "
         "flags three 0/1 digits: labels, edge weights, vertex weights)",
         base, flags);
    return BALLAST_EPARSE;
  }
  int has_lab = flags >= 100, has_ew = (flags / 10) % 10, has_vw = flags % 10;
  int64_t *lab = has_lab ? ballast__malloc((size_t)nv * 2 * sizeof *lab) : NULL;
  int64_t *deg = ballast__malloc((size_t)nv * sizeof *deg);
  int64_t *nbr = ballast__malloc((size_t)(na ? na : 1) * sizeof *nbr);
  double *ew = ballast__malloc((size_t)(na ? na : 1) * sizeof *ew);
  double *vw = ballast__malloc((size_t)nv * sizeof *vw);
  arc_t *fw = NULL, *bw = NULL;
  rta_graph_t *g = NULL;
  rc = BALLAST_ENOMEM;
  if ((has_lab && !lab) || !deg || !nbr || !ew || !vw)
    goto done;
  int64_t a = 0;
  for (int64_t v = 0; v < nv; v++) {
    int64_t x;
    if (has_lab) {
      if ((rc = need(&r, &x, "a vertex label")))
        goto done;
      lab[2 * v] = x;
      lab[2 * v + 1] = v;
    }
    vw[v] = 1;
    if (has_vw) {
      if ((rc = need(&r, &x, "a vertex weight")))
        goto done;
      if (x < 0) {
        PERR(&r, "negative vertex weight %" PRId64, x);
        rc = BALLAST_EPARSE;
        goto done;
      }
      vw[v] = (double)x;
    }
    if ((rc = need(&r, &deg[v], "a vertex degree")))
      goto done;
    if (deg[v] < 0 || deg[v] > na - a) {
      PERR(&r, "vertex %" PRId64 " has degree %" PRId64 ": more arcs than the "
           "header's %" PRId64, v + base, deg[v], na);
      rc = BALLAST_EPARSE;
      goto done;
    }
    for (int64_t i = 0; i < deg[v]; i++, a++) {
      ew[a] = 1;
      if (has_ew) {
        if ((rc = need(&r, &x, "an edge weight")))
          goto done;
        if (x < 0) {
          PERR(&r, "negative edge weight %" PRId64, x);
          rc = BALLAST_EPARSE;
          goto done;
        }
        ew[a] = (double)x;
      }
      if ((rc = need(&r, &nbr[a], "a neighbour")))
        goto done;
    }
  }
  if (a != na) {
    PERR(&r, "the degrees add up to %" PRId64 " arcs, the header says %" PRId64,
         a, na);
    rc = BALLAST_EPARSE;
    goto done;
  }
  int64_t extra;
  if (rd_int(&r, &extra) != 1) {
    PERR(&r, "trailing data after the last vertex");
    rc = BALLAST_EPARSE;
    goto done;
  }
  if (has_lab) {
    qsort(lab, (size_t)nv, 2 * sizeof *lab, cmp_i64);
    for (int64_t v = 1; v < nv; v++)
      if (lab[2 * v] == lab[2 * v - 2]) {
        PERR(&r, "vertex label %" PRId64 " used twice", lab[2 * v]);
        rc = BALLAST_EPARSE;
        goto done;
      }
  }
  /* Resolve neighbours and check range, self-loops and symmetry. */
  fw = ballast__malloc((size_t)(na / 2 + 1) * sizeof *fw);
  bw = ballast__malloc((size_t)(na / 2 + 1) * sizeof *bw);
  if (!fw || !bw) {
    rc = BALLAST_ENOMEM;
    goto done;
  }
  int64_t nf = 0, nb = 0;
  a = 0;
  for (int64_t v = 0; v < nv; v++)
    for (int64_t i = 0; i < deg[v]; i++, a++) {
      int64_t u = has_lab ? find_label(lab, nv, nbr[a]) : nbr[a] - base;
      if (u < 0 || u >= nv) {
        BALLAST_WARN("%s: malformed .grf: vertex %" PRId64 " has neighbour %"
                     PRId64 ", not a vertex", r.what, v + base, nbr[a]);
        rc = BALLAST_EPARSE;
        goto done;
      }
      if (u == v) {
        BALLAST_WARN("%s: malformed .grf: vertex %" PRId64 " has a loop",
                     r.what, v + base);
        rc = BALLAST_EPARSE;
        goto done;
      }
      arc_t *dst = u > v ? fw : bw;
      int64_t *k = u > v ? &nf : &nb;
      if (*k >= na / 2) {
        BALLAST_WARN("%s: malformed .grf: the adjacency is not symmetric",
                     r.what);
        rc = BALLAST_EPARSE;
        goto done;
      }
      int64_t lo = u < v ? u : v, hi = u < v ? v : u;
      dst[*k].key = lo * ((int64_t)1 << 32) + hi;
      dst[(*k)++].w = ew[a];
    }
  qsort(fw, (size_t)nf, sizeof *fw, cmp_arc);
  qsort(bw, (size_t)nb, sizeof *bw, cmp_arc);
  if (nf != nb) {
    BALLAST_WARN("%s: malformed .grf: the adjacency is not symmetric (%" PRId64
                 " arcs go up, %" PRId64 " come back)", r.what, nf, nb);
    rc = BALLAST_EPARSE;
    goto done;
  }
  for (int64_t i = 0; i < nf; i++) {
    if (fw[i].key != bw[i].key || fw[i].w != bw[i].w) {
      int64_t k = i < nf ? fw[i].key : bw[i].key;
      BALLAST_WARN("%s: malformed .grf: the adjacency is not symmetric "
                   "(edge %" PRId64 "-%" PRId64 " missing or weighted "
                   "differently in one direction)", r.what,
                   (k >> 32) + base, (k & 0xffffffff) + base);
      rc = BALLAST_EPARSE;
      goto done;
    }
    if (i > 0 && fw[i].key == fw[i - 1].key) {
      BALLAST_WARN("%s: malformed .grf: edge %" PRId64 "-%" PRId64
                   " listed twice", r.what, (fw[i].key >> 32) + base,
                   (fw[i].key & 0xffffffff) + base);
      rc = BALLAST_EPARSE;
      goto done;
    }
  }
  if ((rc = rta_graph_create(nv, &g)))
    goto done;
  for (int64_t v = 0; v < nv; v++)
    g->work[v] = vw[v];
  for (int64_t i = 0; i < nf; i++)
    if ((rc = rta_graph_add_edge(g, fw[i].key >> 32, fw[i].key & 0xffffffff,
                                 fw[i].w)))
      goto done;
  if ((rc = rta__graph_finalize(g)))
    goto done;
  *out = g;
  g = NULL;
  rc = 0;
done:
  rta_graph_destroy(g);
  free(lab);
  free(deg);
  free(nbr);
  free(ew);
  free(vw);
  free(fw);
  free(bw);
  return rc;
}

static long long iround1(double w) {
  double r = floor(w + 0.5);
  return r < 1 ? 1 : (long long)r;
}

int rta_graph_save_grf(rta_graph_t *g, FILE *f) {
  if (!g || !f)
    return BALLAST_EINVAL;
  int rc = rta__graph_finalize(g);
  if (rc)
    return rc;
  if (fprintf(f, "0\n%" PRId64 " %" PRId64 "\n0 011\n", g->nvert,
              g->xadj[g->nvert]) < 0)
    return BALLAST_EIO;
  for (int64_t v = 0; v < g->nvert; v++) {
    fprintf(f, "%lld %" PRId64, iround1(g->work[v]), g->xadj[v + 1] - g->xadj[v]);
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
      fprintf(f, " %lld %d", iround1(g->adjw[i]), (int)g->adj[i]);
    if (fputc('\n', f) == EOF)
      return BALLAST_EIO;
  }
  return ferror(f) ? BALLAST_EIO : 0;
}
