/* The same tool loaded twice (BALLAST_TOOLS=tt_a.so:tt_a.so, tool.h "The
 * same tool loaded twice"): dlopen gives the one loaded object, its init
 * runs twice with two tool handles and both attach, so every event reaches
 * its code twice, in a row, with the same event struct; finalize too. */
#include <string.h>

#include <ballast.h>

#include "test_util.h"
#include "tt.h"

static long counts[TT_NEV], inits;
static int last_ev = -1, pending; /* pending: the second call of an event is due */
static const void *last_ptr;

void tt_note(int tool, int ev, const void *e);
void tt_note(int tool, int ev, const void *e) {
  CHECK_EQ(tool, 0);
  if (ev == TT_API) {
    inits++;
    return;
  }
  CHECK(ev >= 0 && ev < TT_NEV);
  if (pending) { /* the second tool of the pair, with the same struct */
    CHECK_EQ(ev, last_ev);
    CHECK(e == last_ptr);
  }
  pending = !pending;
  last_ev = ev;
  last_ptr = e;
  counts[ev]++;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  CHECK_EQ(inits, 2); /* the init ran once per BALLAST_TOOLS entry */
  long e0 = counts[TT_MPI_EXIT], r0 = counts[TT_REGION_ENTER];
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(counts[TT_MPI_EXIT] - e0, 2);
  CHECK_EQ(mon_region_begin("twice"), 0);
  CHECK_EQ(mon_region_end("twice"), 0);
  CHECK_EQ(counts[TT_REGION_ENTER] - r0, 2);
  CHECK_EQ(counts[TT_MPI_ENTER], counts[TT_MPI_EXIT]);
  CHECK(!pending);
  MPI_Finalize();
  CHECK_EQ(counts[TT_FINALIZE], 2);
  printf("PASS tool_twice\n");
  return 0;
}
