/* The tools interface's rep_outlier event and api->mpit_count/mpit_region:
 * a linked tool counts the outlier events of a repeated region, which must
 * be exactly its repetitions labelled outliers (PIA), each with its index,
 * its wall time and a median it is at least BALLAST_REPEAT_OUTLIER (2)
 * times of; and reads an MPI_T variable's figures of a region as PIA does.
 * 1 rank; BALLAST_MPIT=pml_ob1_posted_recvq_length. */
#include <time.h>

#include <ballast/pia.h>
#include <ballast/tool.h>

#include "test_util.h"

static const ballast_tool_api_v1_t *api;
static int seen;
static long long idx[256];
static double wt[256], med[256];

static void on_outlier(const ballast_tool_rep_t *ev, void *u) {
  (void)u;
  CHECK(ev->t_begin_ns <= ev->t_ns);
  if (seen < 256) {
    idx[seen] = ev->index;
    wt[seen] = ev->wtime;
    med[seen] = ev->median;
  }
  seen++;
}

static int init(const ballast_tool_api_v1_t *a, ballast_tool_t *tool) {
  api = a;
  CHECK_GE(a->size, BALLAST_TOOL_API_V1_3_SIZE);
  return a->on_rep_outlier(tool, on_outlier, NULL);
}

static void spin(double s) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do
    clock_gettime(CLOCK_MONOTONIC, &t);
  while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < s);
}

int main(int argc, char **argv) {
  CHECK_EQ(ballast_tool_attach("rep_outlier", init), 0);
  CHECK_EQ(mon_region_repeat("step"), 0);
  MPI_Init(&argc, &argv);
  for (int i = 0; i < 80; i++) {
    CHECK_EQ(mon_region_begin("step"), 0);
    spin(i == 40 || i == 60 ? 10e-3 : 1e-3);
    CHECK_EQ(mon_region_end("step"), 0);
  }
  pia_regid_t id = pia_region_find("step");
  int outliers = 0, k = 0;
  for (long long i = 0; i < 80; i++) {
    pia_rep_t r;
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    if (r.label != PIA_REP_OUTLIER)
      continue;
    outliers++;
    CHECK(k < seen && idx[k] == i && wt[k] == r.wtime);
    if (i > 25) /* past the settling (20) and the warm-up's end, where the
                 * median a repetition is judged by can move in its own call */
      CHECK_DGE(r.wtime, 2 * med[k] * (1 - 1e-12));
    k++;
  }
  CHECK_EQ(seen, outliers);
  CHECK_GE(outliers, 1); /* the 10 ms ones, at least */
  /* MPI_T through the tools interface, as PIA reads it. */
  CHECK_EQ(api->mpit_count(), pia_mpit_count());
  CHECK_EQ(api->mpit_count(), 1);
  MPI_Request rq;
  int buf;
  CHECK_EQ(mon_region_begin("post"), 0);
  MPI_Irecv(&buf, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &rq);
  CHECK_EQ(mon_region_end("post"), 0);
  const char *name = NULL;
  double d, m;
  pia_regid_t post = pia_region_find("post");
  CHECK_EQ(api->mpit_region(post, 0, &name, &d, &m), 0);
  CHECK_STREQ(name, "pml_ob1_posted_recvq_length");
  CHECK(d == 1 && m == 1);
  CHECK_EQ(api->mpit_region(post, 1, &name, &d, &m), BALLAST_ENOTFOUND);
  CHECK_EQ(api->mpit_region(1 << 30, 0, &name, &d, &m), BALLAST_ENOTFOUND);
  CHECK_EQ(api->mpit_region(post, 0, NULL, &d, &m), BALLAST_EINVAL);
  MPI_Send(&buf, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Finalize();
  TEST_PASS("tool_rep_outlier");
}
