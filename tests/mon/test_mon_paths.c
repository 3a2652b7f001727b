/* Region paths as the program nested them. The MD example's pattern: rta
 * tasks named by their keys ("step", "step/forces", ...) entered every step,
 * the task "step/forces" nested in the task "step", a block task
 * "md/block_<rank>" entered inside "step/forces", and a plain mon region
 * entered inside a task. A task's key already holds its parent's key, so a
 * path that joined every name would repeat the parent ("step/step/forces").
 * Checks the region tree (no region repeated under itself, one region per
 * name and parent however often it is re-entered), the exact paths of the
 * end-of-run report and the names and parents of the profile's regions.
 * Runs on 2 ranks. */
#include <ballast/mon.h>
#include <ballast/rta.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mon/mon_internal.h"
#include "mon/report_capture.h"
#include "test_util.h"

enum { STEPS = 5 };

/* The task of a key, found once. */
static rta_task_t *task_of(const char *key) {
  rta_task_t *t = NULL;
  CHECK_EQ(rta_task_find(key, &t), 0);
  return t;
}

static void run_steps(const char *block) {
  rta_task_t *step = task_of("step"), *halo = task_of("step/halo");
  rta_task_t *forces = task_of("step/forces"), *b = task_of(block);
  for (int s = 0; s < STEPS; s++) {
    CHECK_EQ(rta_task_begin(step), 0);
    CHECK_EQ(rta_task_begin(halo), 0);
    CHECK_EQ(mon_region_begin("pack"), 0);
    CHECK_EQ(mon_region_end("pack"), 0);
    CHECK_EQ(rta_task_end(halo), 0);
    CHECK_EQ(rta_task_begin(forces), 0);
    CHECK_EQ(rta_task_begin(b), 0);
    CHECK_EQ(rta_task_end(b), 0);
    CHECK_EQ(rta_task_end(forces), 0);
    CHECK_EQ(rta_task_end(step), 0);
  }
}

static void check_tree(const char *block, int *ids) {
  int step = mon__region_find_child(0, "step");
  int halo = mon__region_find_child(step, "step/halo");
  int pack = mon__region_find_child(halo, "pack");
  int forces = mon__region_find_child(step, "step/forces");
  int blk = mon__region_find_child(forces, block);
  CHECK_GT(step, 0);
  CHECK_GT(halo, 0);
  CHECK_GT(pack, 0);
  CHECK_GT(forces, 0);
  CHECK_GT(blk, 0);
  /* re-entering every step made no second region anywhere */
  CHECK_EQ(mon__region_count(), 6);
  CHECK_LT(mon__region_find_child(step, "step"), 0);
  CHECK_LT(mon__region_find_child(forces, "step/forces"), 0);
  mon__regstats_t st;
  CHECK_EQ(mon__region_read(blk, &st), 0);
  CHECK_EQ(st.count, STEPS);
  ids[0] = step, ids[1] = halo, ids[2] = pack, ids[3] = forces, ids[4] = blk;
}

/* The region rows of the report (the first word of each line after the
 * "# region" header), rank 0 only. */
static int report_paths(char rows[][128], int max) {
  FILE *f = report_capture(MON_REPORT_FULL);
  if (!f)
    return 0;
  char line[512];
  int n = 0, on = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "# region ", 9)) {
      on = 1;
      continue;
    }
    if (!on)
      continue;
    if (strncmp(line, "# ", 2) != 0 || line[2] == '\n' || line[2] == ' ')
      break;
    CHECK_LT(n, max);
    CHECK_EQ(sscanf(line + 2, "%127s", rows[n]), 1);
    n++;
  }
  fclose(f);
  return n;
}

static int has_row(char rows[][128], int n, const char *path) {
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i], path))
      return 1;
  return 0;
}

static void check_report(int rank) {
  char rows[32][128];
  int n = report_paths(rows, 32);
  if (rank != 0)
    return;
  /* the report lists the regions of every rank (chosen across ranks): each
   * rank's block, md/block_<rank>, is one region whose name holds a '/',
   * printed escaped so it does not read as block_0 inside a region md */
  CHECK_EQ(n, 6);
  const char *want[] = {"step", "step/halo", "step/halo/pack", "step/forces",
                        "step/forces/md\\/block_0", "step/forces/md\\/block_1"};
  for (int i = 0; i < 6; i++) {
    if (!has_row(rows, n, want[i]))
      fprintf(stderr, "report has no region row %s\n", want[i]);
    CHECK(has_row(rows, n, want[i]));
  }
  for (int i = 0; i < n; i++)
    CHECK(strstr(rows[i], "step/step") == NULL);
}

/* The profile gives each region its name and its parent's id. */
static void check_profile(int rank, const int *ids) {
  char path[] = "/tmp/ballast_paths_prof_XXXXXX";
  if (rank == 0) {
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    close(fd);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  CHECK_EQ(mon_profile_write(path), 0);
  if (rank != 0)
    return;
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = 0;
  fclose(f);
  unlink(path);
  /* rank 0's part comes first */
  const char *names[] = {"step", "step/halo", "pack", "step/forces", "md/block_0"};
  const int parents[] = {0, ids[0], ids[1], ids[0], ids[3]};
  for (int i = 0; i < 5; i++) {
    char want[160];
    snprintf(want, sizeof want, "{\"id\":%d,\"name\":\"%s\",\"parent\":%d,", ids[i],
             names[i], parents[i]);
    if (!strstr(text, want))
      fprintf(stderr, "profile has no %s\n", want);
    CHECK(strstr(text, want) != NULL);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *step = "step", *md = "md";
  const char *phases[] = {"forces", "halo"};
  rta_task_t *tstep, *tmd;
  CHECK_EQ(rta_task_define(NULL, 1, &step, NULL, &tstep), 0);
  CHECK_EQ(rta_task_define(tstep, 2, phases, NULL, NULL), 0);
  CHECK_EQ(rta_task_define(NULL, 1, &md, NULL, &tmd), 0);
  char bname[32], block[40];
  snprintf(bname, sizeof bname, "block_%d", rank);
  snprintf(block, sizeof block, "md/%s", bname);
  const char *bn = bname;
  CHECK_EQ(rta_task_define(tmd, 1, &bn, NULL, NULL), 0);

  run_steps(block);
  int ids[5];
  check_tree(block, ids);
  check_report(rank);
  check_profile(rank, ids);
  TEST_PASS("mon_paths");
  MPI_Finalize();
  return 0;
}
