/* The end-of-run reduction and report. At finalize every rank packs its
 * results (one record per assertion) and rank 0 gathers them; records are
 * matched by source and text, so ranks that created different in-code
 * assertions still report correctly. Rank 0 keeps one row per assertion:
 * passes and checks min/max over the ranks that have it, and the first
 * failure (lowest instance, then lowest rank) with the values it used. The
 * rows feed mon's report section and the profile's "assertions" member. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert/assert_internal.h"
#include "common/bytebuf.h"
#include "common/common_internal.h"
#include "mon/mon_hooks.h"

typedef struct {
  char *src, *text, *vals; /* vals: "name = v, ..." of the first failure */
  char *json_vals;         /* the same as JSON members */
  long long cmin, cmax, pmin, pmax, errors, finst;
  int ranks, frank;
} row_t;

static row_t *rows;
static int nrows, nranks;

static void pack(ballast__wbuf_t *b) {
  int n = assert__count();
  ballast__put_i32(b, n);
  for (int i = 0; i < n; i++) {
    pa_assert_t *a = assert__get(i);
    pia_assert_result_t r;
    pia_assert_result(i, &r);
    char src[512];
    assert__source(a, src, sizeof src);
    /* An assertion checked on good repetitions only is another row than
     * the same text checked on every instance. */
    if (a->flags & PIA_ASSERT_GOOD)
      strncat(src, ", good repetitions", sizeof src - strlen(src) - 1);
    ballast__put_str(b, src);
    ballast__put_str(b, a->text);
    ballast__put_i64(b, r.checks);
    ballast__put_i64(b, r.passes);
    ballast__put_i64(b, r.errors);
    ballast__put_i64(b, r.first_fail);
    int nv = r.first_fail ? a->prog.nin : 0;
    ballast__put_i32(b, nv);
    for (int k = 0; k < nv; k++) {
      ballast__put_str(b, a->prog.in[k].name);
      ballast__put_f64(b, a->first_vals[k]);
    }
  }
}

static row_t *row_find(const char *src, const char *text) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].src, src) && !strcmp(rows[i].text, text))
      return &rows[i];
  row_t *r = ballast__realloc(rows, (size_t)(nrows + 1) * sizeof *rows);
  if (!r)
    return NULL;
  rows = r;
  r = &rows[nrows];
  memset(r, 0, sizeof *r);
  r->src = ballast__strdup(src);
  r->text = ballast__strdup(text);
  if (!r->src || !r->text) {
    free(r->src);
    free(r->text);
    return NULL;
  }
  nrows++;
  return r;
}

static void json_str(char *out, size_t len, const char *s) {
  size_t u = 0;
  for (; *s && u + 8 < len; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      u += (size_t)snprintf(out + u, len - u, "\\%c", c);
    else if (c < 0x20)
      u += (size_t)snprintf(out + u, len - u, "\\u%04x", c);
    else
      out[u++] = (char)c;
  }
  out[u] = 0;
}

/* The first failure's values of one rank's record, as text and as JSON. */
static void failure_values(ballast__rbuf_t *r, int nv, row_t *row, int keep) {
  char txt[2048], js[4096];
  size_t ut = 0, uj = 0;
  txt[0] = js[0] = 0;
  for (int k = 0; k < nv; k++) {
    const char *name = ballast__get_str(r);
    double v = ballast__get_f64(r);
    char esc[256];
    json_str(esc, sizeof esc, name);
    if (ut + 1 < sizeof txt)
      ut += (size_t)snprintf(txt + ut, sizeof txt - ut, "%s%s = %.6g", k ? ", " : "", name, v);
    /* A member is added whole or not at all: the JSON stays valid. */
    char one[320];
    char num[32] = "null"; /* NaN and infinities have no JSON number */
    if (isfinite(v))
      snprintf(num, sizeof num, "%.9g", v);
    int n = snprintf(one, sizeof one, "%s\"%s\":%s", uj ? "," : "", esc, num);
    if (n > 0 && uj + (size_t)n < sizeof js) {
      memcpy(js + uj, one, (size_t)n + 1);
      uj += (size_t)n;
    }
  }
  if (!keep)
    return;
  free(row->vals);
  free(row->json_vals);
  row->vals = ballast__strdup(txt);
  row->json_vals = ballast__strdup(js);
}

static void merge(const unsigned char *p, size_t n, int rank) {
  ballast__rbuf_t r = {p, p + n, 0};
  int na = ballast__get_i32(&r);
  for (int i = 0; i < na && !r.bad; i++) {
    const char *src = ballast__get_str(&r), *text = ballast__get_str(&r);
    long long c = ballast__get_i64(&r), ps = ballast__get_i64(&r);
    long long e = ballast__get_i64(&r), f = ballast__get_i64(&r);
    int nv = ballast__get_i32(&r);
    row_t *row = row_find(src, text);
    int keep = row && f > 0 && (row->finst == 0 || f < row->finst);
    failure_values(&r, nv, row, keep);
    if (!row)
      continue;
    if (!row->ranks || c < row->cmin)
      row->cmin = c;
    if (!row->ranks || ps < row->pmin)
      row->pmin = ps;
    if (c > row->cmax)
      row->cmax = c;
    if (ps > row->pmax)
      row->pmax = ps;
    row->errors += e;
    row->ranks++;
    if (keep) {
      row->finst = f;
      row->frank = rank;
    }
  }
}

static const char *status(const row_t *r) {
  return r->finst ? "FAIL" : r->cmax == 0 ? "NEVER" : "PASS";
}

static void report(FILE *f, void *user) {
  (void)user;
  int failed = 0, never = 0;
  for (int i = 0; i < nrows; i++) {
    failed += rows[i].finst != 0;
    never += !rows[i].finst && rows[i].cmax == 0;
  }
  fprintf(f, "# assertions : %d (%d failed, %d never checked) over %d rank(s)\n", nrows,
          failed, never, nranks);
  for (int i = 0; i < nrows; i++) {
    const row_t *r = &rows[i];
    fprintf(f, "#  [%s] %s: %s\n", status(r), r->src, r->text);
    if (!r->cmax) {
      fprintf(f, "#         never checked%s\n",
              r->errors ? " (every check failed to evaluate)" : "");
      continue;
    }
    fprintf(f, "#         passes %lld..%lld of checks %lld..%lld per rank", r->pmin, r->pmax,
            r->cmin, r->cmax);
    if (r->errors)
      fprintf(f, ", %lld not evaluable", r->errors);
    fputc('\n', f);
    if (r->finst)
      fprintf(f, "#         first failure: rank %d, instance %lld: %s\n", r->frank, r->finst,
              r->vals ? r->vals : "");
  }
}

static char *json(void *user) {
  (void)user;
  ballast__wbuf_t b = {0};
  char head[64];
  snprintf(head, sizeof head, "{\"ranks\":%d,\"list\":[", nranks);
  ballast__wput(&b, head, strlen(head));
  for (int i = 0; i < nrows; i++) {
    const row_t *r = &rows[i];
    char src[1024], text[8192], one[1024];
    json_str(src, sizeof src, r->src);
    json_str(text, sizeof text, r->text);
    int n = snprintf(one, sizeof one, "%s{\"source\":\"", i ? "," : "");
    ballast__wput(&b, one, (size_t)n);
    ballast__wput(&b, src, strlen(src));
    ballast__wput(&b, "\",\"text\":\"", 10);
    ballast__wput(&b, text, strlen(text));
    n = snprintf(one, sizeof one, "\",\"status\":\"%s\",\"checks_min\":%lld,\"checks_max\":%lld,"
                 "\"passes_min\":%lld,\"passes_max\":%lld,\"errors\":%lld,\"ranks_with\":%d",
                 status(r), r->cmin, r->cmax, r->pmin, r->pmax, r->errors, r->ranks);
    ballast__wput(&b, one, (size_t)n);
    if (r->finst) {
      n = snprintf(one, sizeof one, ",\"first_failure\":{\"rank\":%d,\"instance\":%lld,"
                   "\"values\":{", r->frank, r->finst);
      ballast__wput(&b, one, (size_t)n);
      if (r->json_vals)
        ballast__wput(&b, r->json_vals, strlen(r->json_vals));
      ballast__wput(&b, "}}", 2);
    }
    ballast__wput(&b, "}", 1);
  }
  ballast__wput(&b, "]}", 3); /* with the NUL */
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return (char *)b.p;
}

static void teardown(void) {
  for (int i = 0; i < nrows; i++) {
    free(rows[i].src);
    free(rows[i].text);
    free(rows[i].vals);
    free(rows[i].json_vals);
  }
  free(rows);
  rows = NULL;
  nrows = 0;
  assert__registry_teardown();
}

/* Gather every rank's records on rank 0 (library traffic). */
static int gather(int rank, int size, const ballast__wbuf_t *b) {
  int mine = b->oom ? 0 : (int)b->n, rc = 0;
  int *counts = rank == 0 ? ballast__calloc((size_t)size, sizeof *counts) : NULL;
  int *displs = rank == 0 ? ballast__calloc((size_t)size, sizeof *displs) : NULL;
  int ok = rank != 0 || (counts && displs);
  unsigned char *all = NULL;
  ballast__lib_begin();
  if (MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  long total = 0;
  if (rank == 0 && ok)
    for (int r = 0; r < size; r++) {
      displs[r] = (int)total;
      total += counts[r];
    }
  if (rank == 0 && ok && !(all = ballast__malloc((size_t)total + 1)))
    ok = 0;
  /* A root without memory still takes part, receiving nothing. */
  if (rank == 0 && !ok && counts)
    memset(counts, 0, (size_t)size * sizeof *counts);
  if (!rc && MPI_Gatherv(b->p, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0,
                         MPI_COMM_WORLD) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  ballast__lib_end();
  if (rank == 0 && ok && !rc)
    for (int r = 0; r < size; r++)
      merge(all + displs[r], (size_t)counts[r], r);
  if (rank == 0 && !ok)
    rc = BALLAST_ENOMEM;
  free(all);
  free(counts);
  free(displs);
  return rc;
}

long long assert__finalize_reduce(void) {
  int rank, size;
  if (assert__world(&rank, &size) < 0)
    return 0;
  nranks = size;
  ballast__wbuf_t b = {0};
  pack(&b);
  int rc = gather(rank, size, &b);
  free(b.p);
  if (rc < 0)
    BALLAST_WARN("assert: results could not be gathered (%s); the report is incomplete",
                 ballast_strerror(rc));
  long long failed = 0;
  for (int i = 0; i < nrows; i++)
    failed += rows[i].finst != 0;
  ballast__lib_begin();
  MPI_Bcast(&failed, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  ballast__lib_end();
  if (rank == 0) {
    mon__section_t s = {"assertions", report, json, NULL, NULL};
    mon__report_add_section(&s);
  }
  atexit(teardown);
  return failed;
}
