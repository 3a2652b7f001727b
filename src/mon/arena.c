/*
 * The per-thread block allocator behind the signature table (table.c) and
 * the partner matrix (partners.c): entries are never freed one by one, only
 * all together at teardown, so they come from blocks of many entries and a
 * new entry costs a malloc only once per block.
 */
#include <stddef.h>
#include <stdlib.h>

#include "mon/mon_core.h"

typedef struct mon__arena_block {
  struct mon__arena_block *next;
  max_align_t e[]; /* the entries, aligned for any type */
} block_t;

void *mon__arena_get(mon__arena_t *a, size_t size, unsigned per_block) {
  if (a->left == 0) {
    block_t *b = malloc(sizeof *b + size * per_block);
    if (!b)
      return NULL;
    b->next = a->blocks;
    a->blocks = b;
    a->next = (char *)b->e;
    a->left = per_block;
  }
  a->left--;
  void *e = a->next;
  a->next += size;
  return e;
}

void mon__arena_free(mon__arena_t *a) {
  block_t *b = a->blocks;
  while (b) {
    block_t *n = b->next;
    free(b);
    b = n;
  }
  a->blocks = NULL;
  a->next = NULL;
  a->left = 0;
}
