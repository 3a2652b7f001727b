/*
 * The Cube4 writer's call tree (cube.c writes the archive): this rank's
 * call paths, the ranks' agreement on their union, and the tree of it.
 *
 * Sorted bytewise, shorter first, call paths (cube_internal.h) are a
 * depth-first preorder of the tree (a path sorts right before its
 * descendants), so the sorted union of every rank's paths is the call tree
 * with cnode ids in preorder. The union is merged up a binomial tree of
 * ranks (ceil(log2 P) rounds, each a merge of two sorted lists) and
 * broadcast: a rank handles at most ceil(log2 P) lists of at most U paths
 * (U the union's size), never P x R. Every rank then finds its own paths
 * in the union by one merge walk (cube.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"
#include "mon/cube_internal.h"

typedef mon__cube_ent_t ent_t;
typedef mon__cube_local_t local_t;
typedef mon__cube_list_t list_t;
typedef mon__cube_tree_t tree_t;
#define FAILED MON__CUBE_FAILED

#define CHUNK ((size_t)1 << 30) /* bytes per message: MPI counts are int */

/* ---- this rank's call paths ---------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t nc = *cap ? *cap : 256;
  while (nc < need)
    nc *= 2;
  void *np = realloc(*p, nc * elem);
  if (!np)
    return -1;
  *p = np;
  *cap = nc;
  return 0;
}

/* A path: \a base (an earlier path, by offset) plus one component. */
static void add_path(local_t *l, int base, char kind, const char *name, int region,
                     int act) {
  size_t nl = strlen(name), bl = base >= 0 ? l->e[base].len : 0;
  size_t need = l->len + bl + nl + 2;
  if (l->oom || grow((void **)&l->buf, &l->cap, need, 1) ||
      grow((void **)&l->e, &l->ecap, l->n + 1, sizeof *l->e) || need > UINT32_MAX) {
    l->oom = 1;
    return;
  }
  char *d = l->buf + l->len;
  if (base >= 0)
    memcpy(d, l->buf + l->e[base].off, bl);
  d[bl] = kind;
  memcpy(d + bl + 1, name, nl + 1);
  l->e[l->n] = (ent_t){l->len, (uint32_t)(bl + nl + 2), region, act};
  l->n++;
  l->len = need;
}

int mon__cube_path_cmp(const char *a, size_t la, const char *b, size_t lb) {
  int c = memcmp(a, b, la < lb ? la : lb);
  if (c)
    return c;
  return la < lb ? -1 : la > lb;
}

static const char *sort_buf; /* finalize is single-threaded */
static int ent_cmp(const void *x, const void *y) {
  const ent_t *a = x, *b = y;
  return mon__cube_path_cmp(sort_buf + a->off, a->len, sort_buf + b->off, b->len);
}

/* Regions in id order (a parent's id is below its children's), each
 * followed later by the activities called in it; then sorted. */
void mon__cube_local_build(local_t *l) {
  int nr = mon__region_count();
  int *at = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *at);
  if (!at) {
    l->oom = 1;
    return;
  }
  for (int r = 0; r < nr && !l->oom; r++) {
    int p = mon__region_parent(r);
    at[r] = (int)l->n;
    add_path(l, p >= 0 && p < r ? at[p] : -1, 'R', mon__region_name(r), r, -1);
  }
  mon__actstats_t s[MON__NACT];
  for (int r = 0; r < nr && !l->oom; r++) {
    if (mon__act_read_region(r, s) != 1)
      continue;
    for (int a = 0; a < MON__NACT; a++)
      if (s[a].ncalls || s[a].nbytes)
        add_path(l, at[r], 'A', mon__act_names[a], r, a);
  }
  free(at);
  if (!l->oom) {
    sort_buf = l->buf;
    qsort(l->e, l->n, sizeof *l->e, ent_cmp);
  }
}

/* ---- the union: sorted lists of [uint32 length][bytes] records ----------------------- */

list_t mon__cube_local_list(const local_t *l) {
  list_t o = {NULL, FAILED};
  if (l->oom)
    return o;
  size_t len = 0;
  for (size_t i = 0; i < l->n; i++)
    len += 4 + l->e[i].len;
  if (!(o.s = malloc(len ? len : 1)))
    return o;
  char *d = o.s;
  for (size_t i = 0; i < l->n; i++) {
    uint32_t n = l->e[i].len;
    memcpy(d, &n, 4);
    memcpy(d + 4, l->buf + l->e[i].off, n);
    d += 4 + n;
  }
  o.len = len;
  return o;
}

/* The sorted union of two sorted lists (duplicates once). */
static list_t merge(const list_t *a, const list_t *b) {
  list_t o = {malloc(a->len + b->len + 1), 0};
  if (!o.s) {
    o.len = FAILED;
    return o;
  }
  uint64_t i = 0, j = 0;
  while (i < a->len || j < b->len) {
    uint32_t la = 0, lb = 0;
    if (i < a->len)
      memcpy(&la, a->s + i, 4);
    if (j < b->len)
      memcpy(&lb, b->s + j, 4);
    int c = i >= a->len ? 1 : j >= b->len ? -1
                                           : mon__cube_path_cmp(a->s + i + 4, la, b->s + j + 4, lb);
    const char *src = c <= 0 ? a->s + i : b->s + j;
    uint32_t n = c <= 0 ? la : lb;
    memcpy(o.s + o.len, src, 4 + (size_t)n);
    o.len += 4 + n;
    if (c <= 0)
      i += 4 + la;
    if (c >= 0)
      j += 4 + lb;
  }
  return o;
}

static void send_list(MPI_Comm c, int to, const list_t *l) {
  PMPI_Send(&l->len, 1, MPI_UINT64_T, to, 0, c);
  for (uint64_t o = 0; l->len != FAILED && o < l->len; o += CHUNK) {
    uint64_t n = l->len - o < CHUNK ? l->len - o : CHUNK;
    PMPI_Send(l->s + o, (int)n, MPI_BYTE, to, 1, c);
  }
}

static list_t recv_list(MPI_Comm c, int from) {
  list_t l = {NULL, 0};
  PMPI_Recv(&l.len, 1, MPI_UINT64_T, from, 0, c, MPI_STATUS_IGNORE);
  if (l.len == FAILED)
    return l;
  char *s = malloc(l.len ? l.len : 1);
  for (uint64_t o = 0; o < l.len; o += CHUNK) {
    uint64_t n = l.len - o < CHUNK ? l.len - o : CHUNK;
    /* Without room the bytes still leave the wire: into a chunk-sized
     * buffer, or truncated to nothing (the communicator returns errors). */
    char *tmp = s ? s + o : malloc(n);
    PMPI_Recv(tmp, tmp ? (int)n : 0, MPI_BYTE, from, 1, c, MPI_STATUS_IGNORE);
    if (!s)
      free(tmp);
  }
  if (!s)
    l.len = FAILED;
  l.s = s;
  return l;
}

/* Up a binomial tree to rank 0, then broadcast: every rank ends with the
 * union, or with len FAILED everywhere. */
list_t mon__cube_agree(MPI_Comm c, int rank, int size, list_t mine) {
  for (int step = 1; step < size; step <<= 1) {
    if (rank & step) {
      send_list(c, rank - step, &mine);
      break;
    }
    if (rank + step >= size)
      continue;
    list_t other = recv_list(c, rank + step);
    if (mine.len != FAILED && other.len != FAILED) {
      list_t m = merge(&mine, &other);
      free(mine.s);
      mine = m;
    } else {
      mine.len = FAILED;
    }
    free(other.s);
  }
  PMPI_Bcast(&mine.len, 1, MPI_UINT64_T, 0, c);
  if (mine.len == FAILED) {
    free(mine.s);
    return (list_t){NULL, FAILED};
  }
  if (rank != 0) {
    free(mine.s);
    mine.s = malloc(mine.len ? mine.len : 1);
  }
  int ok = mine.s != NULL, all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
  for (uint64_t o = 0; all && o < mine.len; o += CHUNK) {
    uint64_t n = mine.len - o < CHUNK ? mine.len - o : CHUNK;
    PMPI_Bcast(mine.s + o, (int)n, MPI_BYTE, 0, c);
  }
  if (!all) {
    free(mine.s);
    return (list_t){NULL, FAILED};
  }
  return mine;
}

/* ---- the agreed tree -------------------------------------------------------------------- */

void mon__cube_tree_free(tree_t *t) {
  free(t->off);
  free(t->len);
  free(t->parent);
  free(t->first);
  free(t->next);
  free(t->wide);
}

/* The wide order: the root, all children of a node, then each child's
 * subtree (CubeLib's enumeration of an inclusive metric's rows). */
static int tree_wide(tree_t *t) {
  int64_t *stack = malloc(t->n * sizeof *stack);
  if (!stack)
    return BALLAST_ENOMEM;
  uint64_t row = 0, sp = 0;
  t->wide[0] = row++;
  stack[sp++] = 0;
  while (sp) {
    int64_t v = stack[--sp];
    uint64_t before = sp;
    for (int64_t c = t->first[v]; c >= 0; c = t->next[c]) {
      t->wide[c] = row++;
      stack[sp++] = c;
    }
    /* the first child's subtree comes first: reverse what was pushed */
    for (uint64_t a = before, b = sp; b > a + 1; a++, b--) {
      int64_t x = stack[a];
      stack[a] = stack[b - 1];
      stack[b - 1] = x;
    }
  }
  free(stack);
  return 0;
}

/* Parents from the preorder: the innermost open ancestor that is a prefix. */
int mon__cube_tree_build(tree_t *t, const list_t *u) {
  memset(t, 0, sizeof *t);
  t->s = u->s;
  for (uint64_t o = 0; o < u->len; t->n++) {
    uint32_t n;
    memcpy(&n, u->s + o, 4);
    o += 4 + n;
  }
  size_t n = t->n ? t->n : 1;
  t->off = malloc(n * sizeof *t->off);
  t->len = malloc(n * sizeof *t->len);
  t->parent = malloc(n * sizeof *t->parent);
  t->first = malloc(n * sizeof *t->first);
  t->next = malloc(n * sizeof *t->next);
  t->wide = malloc(n * sizeof *t->wide);
  int64_t *stack = malloc(n * sizeof *stack);
  if (!t->off || !t->len || !t->parent || !t->first || !t->next || !t->wide || !stack) {
    free(stack);
    return BALLAST_ENOMEM;
  }
  uint64_t sp = 0, o = 0;
  for (uint64_t c = 0; c < t->n; c++) {
    memcpy(&t->len[c], u->s + o, 4);
    t->off[c] = o + 4;
    o += 4 + t->len[c];
    const char *p = t->s + t->off[c];
    while (sp && !(t->len[stack[sp - 1]] < t->len[c] &&
                   !memcmp(t->s + t->off[stack[sp - 1]], p, t->len[stack[sp - 1]])))
      sp--;
    t->parent[c] = sp ? stack[sp - 1] : -1;
    t->first[c] = -1;
    stack[sp++] = (int64_t)c;
  }
  free(stack);
  /* one root: every rank's paths start with ballast_main */
  for (uint64_t c = 1; c < t->n; c++)
    if (t->parent[c] < 0)
      return BALLAST_EINVAL;
  for (uint64_t c = t->n; c-- > 1;) {
    t->next[c] = t->first[t->parent[c]];
    t->first[t->parent[c]] = (int64_t)c;
  }
  return t->n ? tree_wide(t) : BALLAST_EINVAL;
}
