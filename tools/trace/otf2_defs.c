/*
 * The OTF2 writer's definitions that span ranks (otf2_defs.h): the
 * communicators it meets, the unification of per-rank keys into global
 * ids, and the communicator definitions rank 0 writes.
 */
#include "otf2_defs.h"

#include <ballast/common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A key of the unification's hash (rank 0). */
typedef struct ukey {
  char *key;
  uint32_t id;
  UT_hash_handle hh;
} ukey_t;

/* ---- communicators ------------------------------------------------------- */

otf2_comm_t *otf2_comm_get(otf2_comms_t *cs, const ballast_tool_api_v1_t *api, int comm_id) {
  otf2_comm_t *c;
  if (comm_id < 0) return NULL;
  HASH_FIND_INT(cs->hash, &comm_id, c);
  if (c) return c;
  int n = api->comm_ranks(comm_id, NULL, 0);
  if (n < 0) return NULL;
  if (cs->n == cs->cap) {
    uint32_t cap = cs->cap ? 2 * cs->cap : 16;
    otf2_comm_t **nc = realloc(cs->v, cap * sizeof *nc);
    if (!nc) return NULL;
    cs->v = nc;
    cs->cap = cap;
  }
  c = calloc(1, sizeof *c);
  int *m = malloc(((size_t)n + 1) * sizeof *m);
  char *key = malloc((size_t)n * 12 + 32);
  if (!c || !m || !key || api->comm_ranks(comm_id, m, n) != n) {
    free(c);
    free(m);
    free(key);
    return NULL;
  }
  size_t o = 0;
  if (comm_id == 0) {
    o = (size_t)sprintf(key, "world");
  } else {
    for (int i = 0; i < n; i++) o += (size_t)sprintf(key + o, i ? ",%d" : "%d", m[i]);
    /* The how-many-th communicator of these members this process met. */
    int occ = 0;
    for (uint32_t i = 0; i < cs->n; i++)
      if (cs->v[i]->id != 0 && strncmp(cs->v[i]->key, key, o) == 0 &&
          cs->v[i]->key[o] == '#')
        occ++;
    sprintf(key + o, "#%d", occ);
  }
  c->id = comm_id;
  c->n = n;
  c->members = m;
  c->key = key;
  c->ref = cs->n;
  cs->v[cs->n++] = c;
  HASH_ADD_INT(cs->hash, id, c);
  return c;
}

int otf2_comm_rank(const otf2_comm_t *c, int w) {
  if (c->id == 0) return w < c->n ? w : -1;
  for (int i = 0; i < c->n; i++)
    if (c->members[i] == w) return i;
  return -1;
}

void otf2_comms_free(otf2_comms_t *cs) {
  otf2_comm_t *c, *tmp;
  HASH_ITER(hh, cs->hash, c, tmp) {
    HASH_DEL(cs->hash, c);
    free(c->members);
    free(c->key);
    free(c);
  }
  free(cs->v);
  memset(cs, 0, sizeof *cs);
}

/* ---- unification --------------------------------------------------------- */

/* Rank 0: give each key of every rank's list a global id, first come first
 * numbered, into maps (one id per key, ranks in order). */
static int unify_root(int size, const char *all, const int *lens, const int *counts,
                      uint64_t *maps, otf2_unified_t *u) {
  ukey_t *h = NULL, *r, *tmp;
  size_t total = 0, k = 0;
  int rc = 0;
  for (int p = 0; p < size; p++) total += (size_t)counts[p];
  u->keys = calloc(total ? total : 1, sizeof *u->keys);
  if (!u->keys) return BALLAST_ENOMEM;
  const char *s = all;
  for (int p = 0; p < size && !rc; p++) {
    const char *end = s + lens[p];
    for (int i = 0; i < counts[p] && s < end; i++, s += strlen(s) + 1) {
      HASH_FIND_STR(h, s, r);
      if (!r) {
        if (!(r = calloc(1, sizeof *r))) {
          rc = BALLAST_ENOMEM;
          break;
        }
        r->key = (char *)s; /* points into all, which outlives the hash */
        r->id = u->nkeys;
        u->keys[u->nkeys++] = (char *)s;
        HASH_ADD_KEYPTR(hh, h, r->key, strlen(r->key), r);
      }
      maps[k++] = r->id;
    }
    s = end;
  }
  HASH_ITER(hh, h, r, tmp) {
    HASH_DEL(h, r);
    free(r);
  }
  return rc;
}

int otf2_unify(MPI_Comm comm, const char *const *keys, uint32_t nkeys, otf2_unified_t *u,
               char **all_out) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  int mylen = 0, n = (int)nkeys, rc = 0;
  for (uint32_t i = 0; i < nkeys; i++) mylen += (int)strlen(keys[i]) + 1;
  char *mine = malloc((size_t)mylen + 1);
  int *lens = calloc((size_t)size, sizeof *lens), *counts = calloc((size_t)size, sizeof *counts);
  int *displs = calloc((size_t)size, sizeof *displs), *cdispls = calloc((size_t)size, sizeof *cdispls);
  u->map = malloc(((size_t)n + 1) * sizeof *u->map);
  int ok = mine && lens && counts && displs && cdispls && u->map, allok = 0;
  PMPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm);
  char *all = NULL;
  uint64_t *maps = NULL;
  if (!allok) rc = BALLAST_ENOMEM;
  if (!rc) {
    for (uint32_t i = 0, o = 0; i < nkeys; i++) {
      size_t l = strlen(keys[i]) + 1;
      memcpy(mine + o, keys[i], l);
      o += (uint32_t)l;
    }
    PMPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    PMPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    int tot = 0, ctot = 0;
    if (rank == 0)
      for (int p = 0; p < size; p++) {
        displs[p] = tot;
        cdispls[p] = ctot;
        tot += lens[p];
        ctot += counts[p];
      }
    ok = rank != 0 || ((all = malloc((size_t)tot + 1)) && (maps = malloc(((size_t)ctot + 1) * 8)));
    PMPI_Gatherv(mine, mylen, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, comm);
    if (rank == 0 && ok) ok = unify_root(size, all, lens, counts, maps, u) == 0;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok)
      PMPI_Scatterv(maps, counts, cdispls, MPI_UINT64_T, u->map, n, MPI_UINT64_T, 0, comm);
    else
      rc = BALLAST_ENOMEM;
  }
  free(mine);
  free(lens);
  free(counts);
  free(displs);
  free(cdispls);
  free(maps);
  *all_out = all;
  return rc;
}

OTF2_StringRef otf2_gstr(OTF2_GlobalDefWriter *gw, uint32_t *next, const char *s) {
  OTF2_GlobalDefWriter_WriteString(gw, *next, s);
  return (*next)++;
}

/* ---- communicator definitions ------------------------------------------- */

void otf2_write_comms(OTF2_GlobalDefWriter *gw, uint32_t *ns, int size, const otf2_unified_t *uc) {
  uint64_t *members = malloc(((size_t)size + 1) * sizeof *members);
  if (!members) return;
  for (int p = 0; p < size; p++) members[p] = (uint64_t)p; /* location p: rank p's main thread */
  OTF2_StringRef none = otf2_gstr(gw, ns, "");
  OTF2_GlobalDefWriter_WriteGroup(gw, 0, none, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                  OTF2_GROUP_FLAG_NONE, (uint32_t)size, members);
  char name[64];
  for (uint32_t c = 0; c < uc->nkeys; c++) {
    const char *k = uc->keys[c];
    uint32_t n = 0;
    if (strcmp(k, "world") == 0) {
      for (int p = 0; p < size; p++) members[n++] = (uint64_t)p;
      snprintf(name, sizeof name, "MPI_COMM_WORLD");
    } else {
      for (const char *q = k; *q && *q != '#' && n < (uint32_t)size; q++) {
        members[n++] = strtoull(q, (char **)&q, 10);
        if (*q != ',') break;
      }
      snprintf(name, sizeof name, "communicator %u (%u ranks)", c, n);
    }
    OTF2_GlobalDefWriter_WriteGroup(gw, c + 1, none, OTF2_GROUP_TYPE_COMM_GROUP,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members);
    OTF2_GlobalDefWriter_WriteComm(gw, c, otf2_gstr(gw, ns, name), c + 1, OTF2_UNDEFINED_COMM,
                                   OTF2_COMM_FLAG_NONE);
  }
  free(members);
}
