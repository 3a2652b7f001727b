/*
 * The text report's distribution section (BALLAST_REPORT=full): per listed
 * region and per activity with calls, the job's distribution merged over
 * every rank (count, p50, p90, p99, max; each quantile within 1/128,
 * common/dist.h). Two collectives through PMPI: one PMPI_Allreduce of the
 * activities with calls (and of every rank's readiness), one PMPI_Reduce of
 * the histograms with a user operation that adds counts and combines
 * moments. At most MON__RDIST_MAX regions (the first listed) and
 * MON__RDIST_MAX activities (the first with calls, in the spec's order)
 * keep the memory bounded (30 KB per distribution and rank).
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

#define MON__RDIST_MAX 64

static void merge_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  ballast__dist_flat_t *a = in, *b = inout;
  for (int i = 0; i < *len; i++)
    ballast__dist_flat_merge(&b[i], &a[i]);
}

static void print_row(FILE *f, const char *name, const ballast__dist_flat_t *d) {
  static const double q[3] = {0.5, 0.9, 0.99};
  double p[3];
  if (ballast__dist_flat_quantiles(d, q, 3, p) != 0)
    return;
  fprintf(f, "# %-30s %10llu %12.6g %12.6g %12.6g %12.6g %12.6g\n", name,
          (unsigned long long)d->m.count, d->m.mean * 1e-9, p[0] * 1e-9, p[1] * 1e-9,
          p[2] * 1e-9, (double)d->m.max * 1e-9);
}

int mon__report_dists(FILE *f, int rank, const int *ids, const char *const *names, int k) {
  if (k > MON__RDIST_MAX)
    k = MON__RDIST_MAX;
  /* which activities have calls on some rank, and whether every rank can
   * hold the histograms */
  int mask[MON__NACT + 1], any[MON__NACT + 1];
  for (int a = 0; a < MON__NACT; a++) {
    mon__actstats_t s = {0, 0, 0.0, 0.0, 0.0};
    mon__act_read(a, -1, &s);
    mask[a] = s.ncalls > 0;
  }
  size_t cap = (size_t)k + MON__RDIST_MAX;
  ballast__dist_flat_t *v = malloc(cap * sizeof *v);
  ballast__dist_flat_t *res = rank == 0 ? malloc(cap * sizeof *res) : NULL;
  mask[MON__NACT] = !v || (rank == 0 && !res);
  PMPI_Allreduce(mask, any, MON__NACT + 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int rc = 0;
  if (any[MON__NACT]) {
    rc = BALLAST_ENOMEM;
    goto out;
  }
  int acts[MON__RDIST_MAX], na = 0;
  for (int a = 0; a < MON__NACT && na < MON__RDIST_MAX; a++)
    if (any[a])
      acts[na++] = a;
  int n = k + na;
  for (int i = 0; i < n; i++) {
    ballast__dist_flat_init(&v[i]);
    if (i < k && ids[i] > 0)
      mon__region_dist_flat(ids[i], &v[i]);
    else if (i >= k)
      mon__act_dist_flat(acts[i - k], &v[i]);
  }
  MPI_Datatype type;
  MPI_Op op;
  PMPI_Type_contiguous((int)sizeof *v, MPI_BYTE, &type);
  PMPI_Type_commit(&type);
  PMPI_Op_create(merge_op, 1, &op);
  if (n > 0)
    PMPI_Reduce(v, res, n, type, op, 0, MPI_COMM_WORLD);
  PMPI_Op_free(&op);
  PMPI_Type_free(&type);
  if (rank == 0 && n > 0) {
    fprintf(f, "#\n# %-30s %10s %12s %12s %12s %12s %12s\n", "distribution (s)", "[count]",
            "<mean>", "p50", "p90", "p99", "max");
    for (int i = 0; i < k; i++)
      print_row(f, names && names[i] ? names[i] : "(region)", &res[i]);
    for (int i = 0; i < na; i++)
      print_row(f, mon__act_names[acts[i]], &res[k + i]);
    fprintf(f, "# (every rank's instances and calls; quantiles within 0.8%%)\n");
  }
out:
  free(v);
  free(res);
  return rc;
}
