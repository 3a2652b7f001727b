/* md_apply_owner_map on 4 ranks: whole blocks move between ranks with
 * every particle's state bit for bit intact; an invalid map, or maps that
 * differ between ranks, are refused everywhere and nothing moves. */
#include "md.h"
#include "test_util.h"

#include <ballast/common.h>
#include <string.h>

/* Order-independent hash of every particle's full state (id, x, v, f bits). */
static uint64_t state_hash(const md_sim_t *s, long *count) {
  uint64_t h = 0, all;
  long n = 0;
  for (int k = 0; k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      const double v[9] = {b->x[i], b->y[i], b->z[i], b->vx[i], b->vy[i], b->vz[i],
                           b->fx[i], b->fy[i], b->fz[i]};
      uint64_t st = (uint64_t)b->id[i] * 0x9E3779B97F4A7C15ull;
      for (int a = 0; a < 9; a++) {
        uint64_t bits;
        memcpy(&bits, &v[a], sizeof bits);
        st ^= bits + 0x632BE59BD9B4E019ull * (uint64_t)(a + 1);
        md_rng_next(&st);
      }
      h += md_rng_next(&st);
      /* each particle sits in the block its position says */
      CHECK_EQ(md_block_of_pos(s, b->x[i], b->y[i], b->z[i]), s->mine[k]);
    }
    n += b->n;
  }
  MPI_Allreduce(&h, &all, 1, MPI_UINT64_T, MPI_SUM, s->comm);
  MPI_Allreduce(&n, count, 1, MPI_LONG, MPI_SUM, s->comm);
  return all;
}

static void check_ownership(const md_sim_t *s) {
  for (int b = 0; b < s->nblocks; b++) {
    if (s->owner[b] != s->rank) {
      CHECK_EQ(s->blocks[b].n, 0);
      CHECK(s->blocks[b].x == NULL);
    }
  }
  for (int k = 0; k < s->nmine; k++) CHECK_EQ(s->owner[s->mine[k]], s->rank);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  md_sim_t sim;
  memset(&sim, 0, sizeof sim);
  md_sim_t *s = &sim;
  s->comm = MPI_COMM_WORLD;
  MPI_Comm_rank(s->comm, &s->rank);
  MPI_Comm_size(s->comm, &s->size);
  char *args[] = {"md", "--scenario", "droplet", "--particles", "4000", "--blocks", "3,3,2",
                  NULL};
  char err[256];
  CHECK_EQ(md_parse_args(7, args, &s->p, err, sizeof err), 0);
  CHECK_EQ(md_geometry_init(s, err, sizeof err), 0);
  CHECK_EQ(s->nblocks, 18);
  s->owner = malloc(sizeof(int) * 18);
  s->mine = malloc(sizeof(int) * 18);
  s->blocks = calloc(18, sizeof(md_block_t));
  md_strategy_map(s, MD_BLOCK, 1, 0, s->owner);
  md_refresh_mine(s);
  CHECK_EQ(md_neighbours_update(s), 0);
  CHECK_EQ(md_scenario_create(s, err, sizeof err), 0);
  CHECK_EQ(md_sort_blocks(s), 0);
  CHECK_EQ(md_halo_exchange(s), 0);
  CHECK_EQ(md_forces(s), 0);

  long n0, n;
  uint64_t h0 = state_hash(s, &n0);
  CHECK_EQ(n0, s->natoms);
  int newmap[18], oldmap[18];

  /* Random maps, back to back: only ownership changes. */
  long moved_expect = 0;
  for (int round = 1; round <= 12; round++) {
    md_strategy_map(s, round % 3 ? MD_RANDOM : MD_ROUNDROBIN, 5, round, newmap);
    for (int b = 0; b < 18; b++) moved_expect += newmap[b] != s->owner[b];
    CHECK_EQ(md_apply_owner_map(s, newmap), 0);
    CHECK_EQ(memcmp(s->owner, newmap, sizeof newmap), 0);
    check_ownership(s);
    CHECK_EQ(state_hash(s, &n), h0);
    CHECK_EQ(n, n0);
  }
  CHECK_EQ(s->tasks_moved, moved_expect);
  CHECK_GT(s->bytes_moved, 0);

  /* Invalid map: refused on every rank, nothing changes. */
  memcpy(oldmap, s->owner, sizeof oldmap);
  int remaps = s->remaps;
  memcpy(newmap, s->owner, sizeof newmap);
  newmap[3] = s->size;  /* no such rank */
  CHECK_EQ(md_apply_owner_map(s, newmap), BALLAST_EINVAL);
  CHECK_EQ(memcmp(s->owner, oldmap, sizeof oldmap), 0);
  CHECK_EQ(state_hash(s, &n), h0);

  /* Maps that differ between ranks: refused everywhere. */
  memcpy(newmap, s->owner, sizeof newmap);
  if (s->rank == 1) newmap[0] = (newmap[0] + 1) % s->size;
  CHECK_EQ(md_apply_owner_map(s, newmap), BALLAST_EINVAL);
  CHECK_EQ(memcmp(s->owner, oldmap, sizeof oldmap), 0);
  CHECK_EQ(s->remaps, remaps);
  check_ownership(s);
  CHECK_EQ(state_hash(s, &n), h0);

  /* The same map again moves nothing and is not a remap. */
  long tm = s->tasks_moved;
  CHECK_EQ(md_apply_owner_map(s, oldmap), 0);
  CHECK_EQ(s->tasks_moved, tm);
  CHECK_EQ(s->remaps, remaps);

  /* Everything on rank 0, then spread again, with dynamics in between. */
  for (int b = 0; b < 18; b++) newmap[b] = 0;
  CHECK_EQ(md_apply_owner_map(s, newmap), 0);
  CHECK_EQ(s->nmine, s->rank == 0 ? 18 : 0);
  CHECK_EQ(s->nnbr, 0);
  CHECK_EQ(state_hash(s, &n), h0);
  for (int step = 0; step < 5; step++) {
    md_kick(s, 0.0025);
    md_drift(s, 0.005);
    /* a Verlet-list rebuild at every step (a remap forces one) */
    md_wrap(s);
    CHECK_EQ(md_migrate(s), 0);
    CHECK_EQ(md_sort_blocks(s), 0);
    CHECK_EQ(md_halo_exchange(s), 0);
    CHECK_EQ(md_forces(s), 0);
    md_kick(s, 0.0025);
    md_strategy_map(s, MD_RANDOM, 9, step, newmap);
    CHECK_EQ(md_apply_owner_map(s, newmap), 0);
    check_ownership(s);
    uint64_t ck[3];
    CHECK_EQ(md_id_checksum(s, ck), 0);
    CHECK_EQ(state_hash(s, &n) != 0, 1);
    CHECK_EQ(n, n0);
  }

  md_sim_free(s);
  if (s->rank == 0) printf("md owner map: all checks passed\n");
  MPI_Finalize();
  return 0;
}
