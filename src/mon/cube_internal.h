/*
 * The Cube4 writer's call paths (cube_tree.c), shared with cube.c. Private
 * to mon.
 *
 * A call path is a byte string of components, each a kind byte ('A' an MPI
 * activity, 'R' a region), the name and a NUL; compared bytewise, shorter
 * first (mon__cube_path_cmp), such strings sort in depth-first preorder.
 */
#ifndef BALLAST_MON_CUBE_INTERNAL_H
#define BALLAST_MON_CUBE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/** A list length that says "failed here or below". */
#define MON__CUBE_FAILED UINT64_MAX

/* One of this rank's call paths. */
typedef struct {
  uint64_t off;
  uint32_t len;
  int region, act; /* act -1: the region itself */
} mon__cube_ent_t;

/* This rank's call paths: the path bytes and the entries, sorted. */
typedef struct {
  char *buf;
  size_t len, cap;
  mon__cube_ent_t *e;
  size_t n, ecap;
  int oom;
} mon__cube_local_t;

/* A sorted list of [uint32 length][bytes] records (len MON__CUBE_FAILED: failed). */
typedef struct {
  char *s;
  uint64_t len; /* FAILED when this rank or one below it failed */
} mon__cube_list_t;

/* The agreed call tree: cnode ids in preorder. */
typedef struct {
  uint64_t n;         /* cnodes */
  const char *s;      /* the union list */
  uint64_t *off;      /* path bytes of cnode c: s + off[c], len[c] */
  uint32_t *len;
  int64_t *parent;    /* -1 for the root */
  int64_t *first, *next; /* children in id order */
  uint64_t *wide;     /* row of cnode c in an inclusive metric */
} mon__cube_tree_t;

/** Bytewise order of two paths, shorter first: <0, 0, >0. */
int mon__cube_path_cmp(const char *a, size_t la, const char *b, size_t lb);
/** This rank's regions and, under each, the activities called in it; sorted.
 *  l->oom set when out of memory. */
void mon__cube_local_build(mon__cube_local_t *l);
/** The sorted entries as a list (len MON__CUBE_FAILED on OOM or l->oom). */
mon__cube_list_t mon__cube_local_list(const mon__cube_local_t *l);
/** The union of every rank's lists on every rank (collective over \a c,
 *  which returns errors); takes \a mine. len MON__CUBE_FAILED everywhere
 *  when a rank failed. */
mon__cube_list_t mon__cube_agree(MPI_Comm c, int rank, int size, mon__cube_list_t mine);
/** The tree of a union: parents, children, the wide row order. 0,
 *  BALLAST_ENOMEM, or BALLAST_EINVAL when the paths have several roots. */
int mon__cube_tree_build(mon__cube_tree_t *t, const mon__cube_list_t *u);
void mon__cube_tree_free(mon__cube_tree_t *t);

#endif /* BALLAST_MON_CUBE_INTERNAL_H */
