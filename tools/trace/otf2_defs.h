/*
 * What the OTF2 writer (otf2_tool.c) defines across ranks, apart from the
 * events: the communicators an event names, the unification of each rank's
 * keys (region names, communicator keys) into global ids at finalize, and
 * the group and communicator definitions rank 0 writes. Not thread safe:
 * the writer holds its lock.
 */
#ifndef BALLAST_OTF2_DEFS_H
#define BALLAST_OTF2_DEFS_H

#include <ballast/tool.h>
#include <mpi.h>
#include <otf2/otf2.h>
#include <stdint.h>
#include <uthash.h>

/* A communicator met in an event: ballast's comm_id, the writer's local
 * ref (its index in otf2_comms_t.v), its members' world ranks and its key:
 * "world" for MPI_COMM_WORLD, else "r0,r1,...#k", the members and how
 * many communicators of the same members this process met before (the
 * same on every member, as they meet them in the same order). */
typedef struct otf2_comm {
  int id;
  uint32_t ref;
  int n;
  int *members;
  char *key;
  UT_hash_handle hh;
} otf2_comm_t;

typedef struct otf2_comms {
  otf2_comm_t *hash; /* by comm_id */
  otf2_comm_t **v;   /* by local ref */
  uint32_t n, cap;
} otf2_comms_t;

/* The communicator of ballast's comm_id, looked up once through
 * api->comm_ranks; NULL when it cannot be (an id unknown or no longer
 * known, out of memory). */
otf2_comm_t *otf2_comm_get(otf2_comms_t *cs, const ballast_tool_api_v1_t *api, int comm_id);
/* The rank of world rank w in c, or -1. */
int otf2_comm_rank(const otf2_comm_t *c, int w);
/* Frees every communicator (a zeroed table is empty and valid). */
void otf2_comms_free(otf2_comms_t *cs);

/* Global ids of keys: map[i] is the global id of this rank's key i; on
 * rank 0, keys[g] is the key of global id g (pointing into *all_out). */
typedef struct otf2_unified {
  uint64_t *map;
  char **keys;
  uint32_t nkeys;
} otf2_unified_t;

/* Collective over comm: every rank's nkeys keys to rank 0, which numbers
 * them first come first numbered, ranks in order; global ids back. The
 * caller frees u->map, u->keys and *all_out. 0 or BALLAST_ENOMEM (on
 * every rank). */
int otf2_unify(MPI_Comm comm, const char *const *keys, uint32_t nkeys, otf2_unified_t *u,
               char **all_out);

/* A global string definition with the next string ref. */
OTF2_StringRef otf2_gstr(OTF2_GlobalDefWriter *gw, uint32_t *next, const char *s);

/* Rank 0: the group of every rank's main location (group 0, locations 0..size-1),
 * then per global communicator c of uc its group of ranks (group c + 1:
 * indices into group 0, which are world ranks) and Comm c. */
void otf2_write_comms(OTF2_GlobalDefWriter *gw, uint32_t *ns, int size, const otf2_unified_t *uc);

#endif /* BALLAST_OTF2_DEFS_H */
