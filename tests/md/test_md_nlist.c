/* ballast-md's Verlet lists against an exact O(N^2) reference on 4 ranks:
 * the forces and potential energy from the lists (half lists inside blocks,
 * ghost pairs from both sides) equal a direct sum over every pair with the
 * minimum image, at a rebuild and at the steps between rebuilds (ghosts
 * refreshed in place, particles not migrated); the rebuild decision fires
 * once a particle has moved more than skin / 2; a remap voids the ghost
 * plan and forces a rebuild; a list build refuses a block not sorted by bin.
 * Periodic and walls. */
#include "md.h"
#include "test_util.h"

#include <ballast/common.h>
#include <math.h>
#include <string.h>

/* Every particle (x, y, z, fx, fy, fz by id) on every rank. */
static double *gather(const md_sim_t *s, long natoms) {
  double *loc = calloc((size_t)natoms * 6, sizeof(double));
  double *all = calloc((size_t)natoms * 6, sizeof(double));
  CHECK(loc && all);
  for (int k = 0; k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      double *r = loc + 6 * b->id[i];
      r[0] = b->x[i]; r[1] = b->y[i]; r[2] = b->z[i];
      r[3] = b->fx[i]; r[4] = b->fy[i]; r[5] = b->fz[i];
    }
  }
  MPI_Allreduce(loc, all, (int)natoms * 6, MPI_DOUBLE, MPI_SUM, s->comm);
  free(loc);
  return all;
}

/* Direct sum over all pairs (minimum image when periodic) of the shifted
 * LJ force and energy; compares every particle's force and the total
 * energy with the lists'. Returns the largest force error. */
static double check_forces(md_sim_t *s, long natoms, const long *ids) {
  double *p = gather(s, natoms);
  const double rc2 = MD_RC * MD_RC, irc6 = 1.0 / (rc2 * rc2 * rc2);
  const double ucut = 4.0 * irc6 * (irc6 - 1.0);
  double e = 0, worst = 0;
  for (long a = 0; a < natoms; a++) {
    if (ids[a] < 0) continue;
    double f[3] = {0, 0, 0};
    const double *pa = p + 6 * ids[a];
    for (long b = 0; b < natoms; b++) {
      if (b == a || ids[b] < 0) continue;
      const double *pb = p + 6 * ids[b];
      double r[3], r2 = 0;
      for (int d = 0; d < 3; d++) {
        r[d] = pa[d] - pb[d];
        if (s->periodic) r[d] -= s->L[d] * nearbyint(r[d] / s->L[d]);
        r2 += r[d] * r[d];
      }
      if (r2 >= rc2) continue;
      double ir2 = 1.0 / r2, ir6 = ir2 * ir2 * ir2, ff = 48.0 * ir6 * (ir6 - 0.5) * ir2;
      for (int d = 0; d < 3; d++) f[d] += ff * r[d];
      e += 0.5 * (4.0 * ir6 * (ir6 - 1.0) - ucut);
    }
    for (int d = 0; d < 3; d++) {
      double err = fabs(pa[3 + d] - f[d]) / fmax(1.0, fabs(f[d]));
      if (err > worst) worst = err;
    }
  }
  double el = s->epot_local, etot;
  MPI_Allreduce(&el, &etot, 1, MPI_DOUBLE, MPI_SUM, s->comm);
  CHECK_NEAR(etot, e, 1e-10 * fabs(e));
  free(p);
  return worst;
}

static void setup(md_sim_t *s, char **args, int nargs) {
  memset(s, 0, sizeof *s);
  s->comm = MPI_COMM_WORLD;
  MPI_Comm_rank(s->comm, &s->rank);
  MPI_Comm_size(s->comm, &s->size);
  char err[256];
  CHECK_EQ(md_parse_args(nargs, args, &s->p, err, sizeof err), 0);
  CHECK_EQ(md_geometry_init(s, err, sizeof err), 0);
  s->owner = malloc(sizeof(int) * (size_t)s->nblocks);
  s->mine = malloc(sizeof(int) * (size_t)s->nblocks);
  s->blocks = calloc((size_t)s->nblocks, sizeof(md_block_t));
  CHECK(s->owner && s->mine && s->blocks);
  md_strategy_map(s, MD_ROUNDROBIN, 1, 0, s->owner);
  md_refresh_mine(s);
  CHECK_EQ(md_neighbours_update(s), 0);
  CHECK_EQ(s->rebuild_due, 1);
  CHECK_EQ(md_scenario_create(s, err, sizeof err), 0);
}

/* The ids that exist (the droplet keeps only some lattice sites). */
static long *present_ids(md_sim_t *s, long natoms) {
  long *ids = malloc(sizeof(long) * (size_t)natoms);
  int *have = calloc((size_t)natoms, sizeof(int)), *all = calloc((size_t)natoms, sizeof(int));
  CHECK(ids && have && all);
  for (int k = 0; k < s->nmine; k++)
    for (int i = 0; i < s->blocks[s->mine[k]].n; i++) have[s->blocks[s->mine[k]].id[i]] = 1;
  MPI_Allreduce(have, all, (int)natoms, MPI_INT, MPI_SUM, s->comm);
  for (long a = 0; a < natoms; a++) {
    CHECK_LE(all[a], 1);
    ids[a] = all[a] ? a : -1;
  }
  free(have);
  free(all);
  return ids;
}

static void rebuild(md_sim_t *s, int forced) {
  md_wrap(s);
  CHECK_EQ(md_migrate(s), 0);
  CHECK_EQ(md_sort_blocks(s), 0);
  CHECK_EQ(md_halo_exchange(s), 0);
  md_mark_build(s, forced);
  CHECK_EQ(s->rebuild_due, 0);
  CHECK_EQ(s->hplan.valid, 1);
}

static void run(char **args, int nargs, long lattice) {
  md_sim_t sim, *s = &sim;
  setup(s, args, nargs);
  long *ids = present_ids(s, lattice);
  rebuild(s, 1);
  CHECK_EQ(md_forces(s), 0);
  CHECK_DLT(check_forces(s, lattice, ids), 1e-10);

  /* Steps between rebuilds: refreshed ghosts, lists kept; then the
   * decision fires (dt 0.01 from the lattice: a few steps). */
  int kept = 0, fired = 0;
  for (int step = 0; step < 60 && !fired; step++) {
    md_kick(s, 0.005);
    md_drift(s, 0.01);
    int due;
    CHECK_EQ(md_rebuild_due(s, &due), 0);
    if (due) {
      fired = 1;
      rebuild(s, 0);
    } else {
      kept++;
      CHECK_EQ(md_halo_refresh(s), 0);
    }
    CHECK_EQ(md_forces(s), 0);
    CHECK_DLT(check_forces(s, lattice, ids), 1e-10);
    md_kick(s, 0.005);
  }
  CHECK_GT(kept, 2);
  CHECK_EQ(fired, 1);
  CHECK_EQ(s->kst.rebuilds, 2);
  CHECK_EQ(s->kst.forced, 1);

  /* A remap voids the ghost plan and forces the next rebuild everywhere. */
  int *newmap = malloc(sizeof(int) * (size_t)s->nblocks);
  CHECK(newmap);
  md_strategy_map(s, MD_RANDOM, 3, 1, newmap);
  CHECK_EQ(md_apply_owner_map(s, newmap), 0);
  CHECK_EQ(s->rebuild_due, 1);
  CHECK_EQ(md_halo_refresh(s), BALLAST_ESTATE);
  int due = 0;
  CHECK_EQ(md_rebuild_due(s, &due), 0);
  CHECK_EQ(due, 1);
  rebuild(s, 1);
  CHECK_EQ(md_forces(s), 0);
  CHECK_DLT(check_forces(s, lattice, ids), 1e-10);

  /* A block out of bin order is refused, not silently mislisted. */
  int bad = 0;
  for (int k = 0; k < s->nmine; k++) {
    md_block_t *b = &s->blocks[s->mine[k]];
    if (b->n < 2 || bad) continue;
    double t = b->x[0];
    b->x[0] = b->x[b->n - 1];
    b->x[b->n - 1] = t;
    b->nl.valid = 0;
    int rc = md_nlist_build(s, s->mine[k]);
    /* the swap may leave both in the same bin: then the build is legal */
    if (rc) {
      CHECK_EQ(rc, BALLAST_ESTATE);
      bad = 1;
    }
  }
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->comm);
  CHECK_EQ(anybad, 1);
  free(newmap);
  free(ids);
  md_sim_free(s);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* the liquid: 3 cells per dimension, blocks of 1 and 2 cells (periodic
   * images of the own block among the ghosts) */
  char *liquid[] = {"md", "--particles", "864", "--blocks", "2,3,1", NULL};
  run(liquid, 5, 864);
  /* the droplet with walls: empty blocks, reflections */
  char *walls[] = {"md", "--scenario", "droplet", "--particles", "4000", "--blocks", "3,2,2",
                   "--walls", NULL};
  run(walls, 8, 4000);
  /* a larger skin (0.6): bigger cells and lists, the same forces */
  char *skin[] = {"md", "--particles", "2048", "--blocks", "2,2,2", "--skin", "0.6", NULL};
  run(skin, 7, 2048);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("md_nlist: all checks passed\n");
  MPI_Finalize();
  return 0;
}
