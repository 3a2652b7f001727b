/*
 * Blocks: growable structure-of-arrays storage of each block's particles,
 * a block's record (md_block_pack/unpack: the one form in which a block
 * moves, whoever moves it), the owner maps of the mapping strategies, and
 * md_apply_owner_map, which moves whole blocks between ranks when the
 * baselines' owner map changes (--strategy ballast moves them through
 * ballast's serialisation callbacks instead, lb.c).
 */
#include "md.h"

#include <stdlib.h>
#include <string.h>

/* First capacity of a block's particle and ghost arrays (doubled after). */
#define BLOCK_FIRST_CAP 64
/* FNV-1a 64-bit hash (md_apply_owner_map compares the ranks' maps by it). */
#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull
/* Seed mixing of the random map of a round: an odd multiplier spreads the
 * seed over 64 bits, a prime step separates the rounds. */
#define RANDOM_MAP_SEED_MUL 0x2545F4914F6CDD1Dull
#define RANDOM_MAP_ROUND_MUL 7919u
#define RANDOM_MAP_OFFSET 17u

static int grow(void **p, size_t elem, int cap) {
  void *q = realloc(*p, elem * (size_t)cap);
  if (!q) return BALLAST_ENOMEM;
  *p = q;
  return 0;
}

int md_block_reserve(md_block_t *b, int cap) {
  if (cap <= b->cap) return 0;
  int nc = b->cap ? b->cap : BLOCK_FIRST_CAP;
  while (nc < cap) nc *= 2;
  double **arr[] = {&b->x, &b->y, &b->z, &b->vx, &b->vy, &b->vz, &b->fx, &b->fy, &b->fz,
                    &b->x0, &b->y0, &b->z0};
  for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++)
    if (grow((void **)arr[k], sizeof(double), nc)) return BALLAST_ENOMEM;
  if (grow((void **)&b->id, sizeof(int64_t), nc)) return BALLAST_ENOMEM;
  b->cap = nc;
  return 0;
}

int md_ghost_reserve(md_block_t *b, int cap) {
  if (cap <= b->gcap) return 0;
  int nc = b->gcap ? b->gcap : BLOCK_FIRST_CAP;
  while (nc < cap) nc *= 2;
  if (grow((void **)&b->gx, sizeof(double), nc) || grow((void **)&b->gy, sizeof(double), nc) ||
      grow((void **)&b->gz, sizeof(double), nc))
    return BALLAST_ENOMEM;
  b->gcap = nc;
  return 0;
}

int md_block_push(md_block_t *b, const double *r, int64_t id) {
  if (b->n == b->cap && md_block_reserve(b, b->n + 1)) return BALLAST_ENOMEM;
  int i = b->n++;
  b->x[i] = r[0]; b->y[i] = r[1]; b->z[i] = r[2];
  b->vx[i] = r[3]; b->vy[i] = r[4]; b->vz[i] = r[5];
  b->fx[i] = r[6]; b->fy[i] = r[7]; b->fz[i] = r[8];
  b->id[i] = id;
  return 0;
}

/* Removes particle i by moving the last one into its place. */
void md_block_remove(md_block_t *b, int i) {
  int l = --b->n;
  if (i == l) return;
  b->x[i] = b->x[l]; b->y[i] = b->y[l]; b->z[i] = b->z[l];
  b->vx[i] = b->vx[l]; b->vy[i] = b->vy[l]; b->vz[i] = b->vz[l];
  b->fx[i] = b->fx[l]; b->fy[i] = b->fy[l]; b->fz[i] = b->fz[l];
  b->id[i] = b->id[l];
}

/* The per-particle coordinate arrays of a record, in its order. */
enum { REC_ARRAYS = MD_BREC_PER_PARTICLE - 1 };

void md_block_pack(const md_block_t *blk, int b, double *w) {
  size_t n = (size_t)blk->n;
  w[0] = b;
  w[1] = (double)n;
  const double *arr[REC_ARRAYS] = {blk->x, blk->y, blk->z, blk->vx, blk->vy, blk->vz,
                                   blk->fx, blk->fy, blk->fz};
  double *at = w + MD_BREC_HEAD;
  for (int a = 0; a < REC_ARRAYS; a++, at += n)
    if (n) memcpy(at, arr[a], sizeof(double) * n);
  if (n) memcpy(at, blk->id, sizeof(int64_t) * n);
}

int md_block_unpack(md_block_t *blk, const double *w) {
  size_t n = (size_t)w[1];
  md_block_free(blk);
  if (md_block_reserve(blk, (int)n)) return BALLAST_ENOMEM;
  double *arr[REC_ARRAYS] = {blk->x, blk->y, blk->z, blk->vx, blk->vy, blk->vz,
                             blk->fx, blk->fy, blk->fz};
  const double *at = w + MD_BREC_HEAD;
  for (int a = 0; a < REC_ARRAYS; a++, at += n)
    if (n) memcpy(arr[a], at, sizeof(double) * n);
  if (n) memcpy(blk->id, at, sizeof(int64_t) * n);
  blk->n = (int)n;
  return 0;
}

void md_block_free(md_block_t *b) {
  free(b->x); free(b->y); free(b->z);
  free(b->vx); free(b->vy); free(b->vz);
  free(b->fx); free(b->fy); free(b->fz);
  free(b->id);
  free(b->gx); free(b->gy); free(b->gz);
  free(b->x0); free(b->y0); free(b->z0);
  md_nlist_free(&b->nl);
  memset(b, 0, sizeof *b);
}

void md_sim_free(md_sim_t *s) {
  for (int b = 0; s->blocks && b < s->nblocks; b++) md_block_free(&s->blocks[b]);
  free(s->blocks);
  free(s->owner);
  free(s->mine);
  s->blocks = NULL;
  s->owner = s->mine = NULL;
  md_neighbours_free(s);
  md_scratch_free(&s->scr);
  md_geometry_free(s);
}

void md_strategy_map(const md_sim_t *s, md_strategy_t st, unsigned long seed,
                     int round, int *owner) {
  int nb = s->nblocks, P = s->size;
  switch (st) {
  case MD_BLOCK:
  case MD_BALLAST: /* ballast starts from the block map and remaps from there */
    /* Blocks are numbered x-major, so contiguous ranges are slabs along x
     * (for nblocks a multiple of ranks, whole planes of blocks). */
    for (int b = 0; b < nb; b++)
      owner[b] = (int)((long)b * P / nb);
    break;
  case MD_ROUNDROBIN:
    for (int b = 0; b < nb; b++)
      owner[b] = (b + round) % P;
    break;
  case MD_RANDOM: {
    /* A seeded shuffle dealt in equal shares: random placement, equal
     * block counts per rank (as the seed's random mappings). */
    int *perm = malloc(sizeof(int) * (size_t)nb);
    uint64_t st64 = (uint64_t)seed * RANDOM_MAP_SEED_MUL +
                    (uint64_t)round * RANDOM_MAP_ROUND_MUL + RANDOM_MAP_OFFSET;
    if (!perm) {
      for (int b = 0; b < nb; b++) owner[b] = b % P;
      break;
    }
    for (int b = 0; b < nb; b++) perm[b] = b;
    for (int k = nb - 1; k > 0; k--) {
      int j = (int)(md_rng_next(&st64) % (uint64_t)(k + 1));
      int t = perm[k]; perm[k] = perm[j]; perm[j] = t;
    }
    for (int k = 0; k < nb; k++)
      owner[perm[k]] = (int)((long)k * P / nb);
    free(perm);
    break;
  }
  }
}

void md_refresh_mine(md_sim_t *s) {
  s->nmine = 0;
  for (int b = 0; b < s->nblocks; b++)
    if (s->owner[b] == s->rank) s->mine[s->nmine++] = b;
}

static uint64_t map_hash(const int *owner, int n) {
  uint64_t h = FNV_OFFSET;
  for (int b = 0; b < n; b++) {
    h ^= (uint64_t)(uint32_t)owner[b];
    h *= FNV_PRIME;
  }
  return h;
}

int md_apply_owner_map(md_sim_t *s, const int *new_owner) {
  double t0 = MPI_Wtime();
  int P = s->size, me = s->rank;
  /* Every rank must pass a valid map and the same one: checked together so
   * that all ranks return the same code and nothing moves on error. */
  int ok = new_owner != NULL;
  for (int b = 0; ok && b < s->nblocks; b++)
    if (new_owner[b] < 0 || new_owner[b] >= P) ok = 0;
  uint64_t h = ok ? map_hash(new_owner, s->nblocks) : 0;
  unsigned long long hv[2] = {h, ~h}, hr[2];
  int okall;
  if (MPI_Allreduce(&ok, &okall, 1, MPI_INT, MPI_MIN, s->comm) != MPI_SUCCESS ||
      MPI_Allreduce(hv, hr, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, s->comm) != MPI_SUCCESS)
    return BALLAST_EMPI;
  if (!okall || hr[0] != ~hr[1]) return BALLAST_EINVAL;

  int *scount = calloc((size_t)P, sizeof(int)), *rcount = calloc((size_t)P, sizeof(int));
  int *sdisp = calloc((size_t)P, sizeof(int)), *rdisp = calloc((size_t)P, sizeof(int));
  double *sbuf = NULL, *rbuf = NULL;
  int rc = 0;
  long total = 0;
  if (!scount || !rcount || !sdisp || !rdisp) { rc = BALLAST_ENOMEM; goto agree; }
  /* Each block that leaves travels as its record (md_block_pack). */
  for (int k = 0; k < s->nmine; k++) {
    int b = s->mine[k];
    if (new_owner[b] != me) {
      long sz = (long)md_block_record_len((size_t)s->blocks[b].n);
      scount[new_owner[b]] += (int)sz;
      total += sz;
    }
  }
  for (int r = 1; r < P; r++) sdisp[r] = sdisp[r - 1] + scount[r - 1];
  sbuf = malloc(sizeof(double) * (size_t)(total ? total : 1));
  if (!sbuf) { rc = BALLAST_ENOMEM; goto agree; }
  {
    int *pos = calloc((size_t)P, sizeof(int));
    if (!pos) { rc = BALLAST_ENOMEM; goto agree; }
    for (int k = 0; k < s->nmine; k++) {
      int b = s->mine[k], d = new_owner[b];
      if (d == me) continue;
      md_block_pack(&s->blocks[b], b, sbuf + sdisp[d] + pos[d]);
      pos[d] += (int)md_block_record_len((size_t)s->blocks[b].n);
    }
    free(pos);
  }
agree:;
  /* Allocation failures anywhere abort the remap everywhere, before any
   * state has changed. */
  int myrc = rc, allrc;
  if (MPI_Allreduce(&myrc, &allrc, 1, MPI_INT, MPI_MIN, s->comm) != MPI_SUCCESS) {
    rc = BALLAST_EMPI;
    goto out;
  }
  if (allrc) { rc = allrc; goto out; }
  if (MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, s->comm) != MPI_SUCCESS) {
    rc = BALLAST_EMPI;
    goto out;
  }
  long rtotal = 0;
  for (int r = 0; r < P; r++) {
    rdisp[r] = (int)rtotal;
    rtotal += rcount[r];
  }
  rbuf = malloc(sizeof(double) * (size_t)(rtotal ? rtotal : 1));
  myrc = rbuf ? 0 : BALLAST_ENOMEM;
  MPI_Allreduce(&myrc, &allrc, 1, MPI_INT, MPI_MIN, s->comm);
  if (allrc) { rc = allrc; goto out; }
  if (MPI_Alltoallv(sbuf, scount, sdisp, MPI_DOUBLE, rbuf, rcount, rdisp, MPI_DOUBLE,
                    s->comm) != MPI_SUCCESS) {
    rc = BALLAST_EMPI;
    goto out;
  }
  /* Commit: drop the blocks that left, adopt the ones that arrived. */
  for (int k = 0; k < s->nmine; k++) {
    int b = s->mine[k];
    if (new_owner[b] != me) md_block_free(&s->blocks[b]);
  }
  for (long off = 0; off < rtotal;) {
    int b = (int)rbuf[off];
    if (md_block_unpack(&s->blocks[b], rbuf + off)) {
      /* Nothing sensible remains to be done: the source copies are gone. */
      fprintf(stderr, "ballast-md: out of memory adopting block %d\n", b);
      MPI_Abort(s->comm, MD_EXIT_USAGE);
    }
    off += (long)md_block_record_len((size_t)s->blocks[b].n);
  }
  long moved = 0;
  for (int b = 0; b < s->nblocks; b++)
    if (new_owner[b] != s->owner[b]) moved++;
  double bytes = 0, mybytes = sizeof(double) * (double)total;
  MPI_Allreduce(&mybytes, &bytes, 1, MPI_DOUBLE, MPI_SUM, s->comm);
  memcpy(s->owner, new_owner, sizeof(int) * (size_t)s->nblocks);
  md_refresh_mine(s);
  rc = md_neighbours_update(s);
  if (moved) s->remaps++;
  s->tasks_moved += moved;
  s->bytes_moved += bytes;
out:
  free(scount); free(rcount); free(sdisp); free(rdisp);
  free(sbuf); free(rbuf);
  s->lb_seconds += MPI_Wtime() - t0;
  return rc;
}
