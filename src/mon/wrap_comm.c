/*
 * World-rank translation for the PMPI wrappers.
 *
 * A partner rank is recorded as a MPI_COMM_WORLD rank. Translating through
 * groups on every call would cost a group construction per message, so each
 * communicator (and each window) gets its translation computed once, on its
 * first use by a wrapper, and cached:
 *
 *  - the cache is an open-addressing table keyed by the handle, read without
 *    a lock (acquire loads of key then value) and written under one mutex.
 *    Only the first call on a new communicator takes the mutex;
 *  - MPI_COMM_WORLD needs no table at all;
 *  - an entry is dropped (its slot keeps the key, its value becomes NULL)
 *    when the handle is freed: by the MPI_Comm_free / MPI_Win_free wrappers,
 *    and by an attribute delete callback, so frees that bypass the wrappers
 *    (MPI_Comm_disconnect, PMPI calls of other tools) are seen as well.
 *    Handle values are reused by MPI, hence the care;
 *  - the table grows by rebuilding into a table twice as big, published with
 *    a release store. Readers may still be walking the old one, so old tables
 *    are retired, not freed, until mon__wrap_finalize.
 *
 * Each entry also holds the caller's rank, the group size and, for topology
 * communicators, which neighbours exist (neighbourhood collectives' volumes).
 *
 * MPI lets a program free a communicator while operations on it are pending
 * (MPI_Comm_free only marks it; MPICH's comm/cmfree tests this), and the
 * handle may then name a new communicator before the wait. So a receive
 * whose sender is known only at completion holds the entry itself
 * (mon__w_src_hold, one atomic increment at post time) and translates the
 * status's MPI_SOURCE through it (mon__w_src_rank), never through the handle.
 * Entries are reference counted: the cache holds one reference while the
 * handle lives, each pending receive one; the last release frees it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/wrap_internal.h"

typedef struct mon__wsrc {
  int refs;                /* the cache's reference + pending receives' */
  int id;                  /* the tools interface's comm_id (never reused) */
  int n;                   /* group size (remote group of an intercomm) */
  int lsize;               /* local group size */
  int inter;               /* an intercommunicator */
  int myrank;              /* caller's rank in the communicator / window */
  int has_topo;            /* neighbour data valid */
  int indeg, outdeg;
  unsigned char *in_ok;    /* per neighbour: 0 when MPI_PROC_NULL */
  unsigned char *out_ok;
  int ranks[];             /* world rank of each rank, -1 if none */
} wgroup_t;

/* Drops one reference; the last one frees the entry. Only the cache's own
 * reference is dropped under the cache's mutex, so a free here is rare: a
 * receive completing after its communicator was freed. */
static void group_release(wgroup_t *w) {
  if (__atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) == 0)
    free(w);
}

typedef struct {
  uintptr_t key;           /* 0 = empty slot */
  wgroup_t *val;           /* NULL = forgotten */
} slot_t;

typedef struct ctab {
  size_t cap;              /* power of two */
  size_t used;             /* slots with a key (forgotten included) */
  struct ctab *retired;    /* older tables, freed at finalize */
  slot_t slots[];
} ctab_t;

typedef struct {
  ctab_t *tab;
  pthread_mutex_t mu;
  int keyval;
  int have_keyval;
} cache_t;

static cache_t comms = {NULL, PTHREAD_MUTEX_INITIALIZER, 0, 0};
static cache_t wins = {NULL, PTHREAD_MUTEX_INITIALIZER, 0, 0};
static int world_size = -1, world_rank = -1;
static int next_comm_id;   /* last comm_id given; 0 is MPI_COMM_WORLD (atomic) */

static size_t slot_of(uintptr_t key, size_t cap) {
  uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (cap - 1);
}

static wgroup_t *cache_find(cache_t *c, uintptr_t key) {
  ctab_t *tb = MON__LDACQ(&c->tab);
  if (tb == NULL)
    return NULL;
  size_t mask = tb->cap - 1;
  for (size_t i = slot_of(key, tb->cap);; i = (i + 1) & mask) {
    uintptr_t k = MON__LDACQ(&tb->slots[i].key);
    if (k == key)
      return MON__LDACQ(&tb->slots[i].val);
    if (k == 0)
      return NULL;
  }
}

/* Under c->mu: the slot of key in tb, or the empty slot where it goes. */
static slot_t *probe_locked(ctab_t *tb, uintptr_t key) {
  size_t mask = tb->cap - 1;
  for (size_t i = slot_of(key, tb->cap);; i = (i + 1) & mask)
    if (tb->slots[i].key == key || tb->slots[i].key == 0)
      return &tb->slots[i];
}

/* Under c->mu: a table with room for one more key, or NULL on OOM. */
static ctab_t *room_locked(cache_t *c) {
  ctab_t *old = c->tab;
  if (old != NULL && (old->used + 1) * 2 <= old->cap)
    return old;
  size_t live = 0;
  if (old != NULL)
    for (size_t i = 0; i < old->cap; i++)
      live += old->slots[i].val != NULL;
  size_t cap = 64;
  while ((live + 1) * 4 > cap)
    cap *= 2;
  ctab_t *tb = calloc(1, sizeof *tb + cap * sizeof(slot_t));
  if (tb == NULL)
    return NULL;
  tb->cap = cap;
  tb->retired = old;
  if (old != NULL)
    for (size_t i = 0; i < old->cap; i++)
      if (old->slots[i].val != NULL) {
        slot_t *s = probe_locked(tb, old->slots[i].key);
        *s = old->slots[i];
        tb->used++;
      }
  MON__STREL(&c->tab, tb);
  return tb;
}

/* Publishes g under key; returns the entry now cached (g, or one another
 * thread published first, in which case g is freed; NULL out of memory). */
static wgroup_t *cache_insert(cache_t *c, uintptr_t key, wgroup_t *g) {
  pthread_mutex_lock(&c->mu);
  wgroup_t *have = cache_find(c, key);
  if (have != NULL) {
    pthread_mutex_unlock(&c->mu);
    free(g);
    return have;
  }
  ctab_t *tb = room_locked(c);
  if (tb == NULL) {
    pthread_mutex_unlock(&c->mu);
    free(g); /* out of memory: no partner this time, retried next call */
    return NULL;
  }
  slot_t *s = probe_locked(tb, key);
  if (s->key == key) {
    MON__STREL(&s->val, g);
  } else {
    s->val = g;
    MON__STREL(&s->key, key);
    tb->used++;
  }
  pthread_mutex_unlock(&c->mu);
  return g;
}

static void cache_forget(cache_t *c, uintptr_t key) {
  pthread_mutex_lock(&c->mu);
  ctab_t *tb = c->tab;
  if (tb != NULL) {
    slot_t *s = probe_locked(tb, key);
    if (s->key == key && s->val != NULL) {
      wgroup_t *g = s->val;
      MON__STREL(&s->val, NULL);
      group_release(g); /* pending receives may still hold it */
    }
  }
  pthread_mutex_unlock(&c->mu);
}

static void cache_free(cache_t *c) {
  pthread_mutex_lock(&c->mu);
  ctab_t *tb = c->tab;
  if (tb != NULL)
    for (size_t i = 0; i < tb->cap; i++)
      if (tb->slots[i].val != NULL)
        group_release(tb->slots[i].val);
  while (tb != NULL) {
    ctab_t *next = tb->retired;
    free(tb);
    tb = next;
  }
  c->tab = NULL;
  c->have_keyval = 0;
  pthread_mutex_unlock(&c->mu);
}

/* ---- building an entry ------------------------------------------------------ */

static wgroup_t *group_new(MPI_Group g, int myrank, int ndeg) {
  int n = 0;
  if (PMPI_Group_size(g, &n) != MPI_SUCCESS || n < 0)
    return NULL;
  wgroup_t *w = malloc(sizeof *w + (size_t)n * sizeof(int) + 2 * (size_t)ndeg);
  if (w == NULL)
    return NULL;
  memset(w, 0, sizeof *w);
  w->refs = 1; /* the cache's */
  w->n = n;
  w->myrank = myrank;
  w->in_ok = (unsigned char *)&w->ranks[n];
  w->out_ok = w->in_ok + ndeg;
  int *seq = malloc((size_t)(n ? n : 1) * sizeof(int));
  MPI_Group world;
  if (seq == NULL || PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS) {
    free(seq);
    free(w);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    seq[i] = i;
  int rc = n ? PMPI_Group_translate_ranks(g, n, seq, world, w->ranks) : MPI_SUCCESS;
  PMPI_Group_free(&world);
  free(seq);
  if (rc != MPI_SUCCESS) {
    free(w);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (w->ranks[i] < 0)
      w->ranks[i] = MON_NO_PARTNER; /* MPI_UNDEFINED: not in MPI_COMM_WORLD */
  return w;
}

/* Neighbour count of a topology communicator (0 without topology). */
static int topo_degree(MPI_Comm comm, int myrank, int *kind, int *indeg, int *outdeg) {
  *kind = MPI_UNDEFINED;
  *indeg = *outdeg = 0;
  if (PMPI_Topo_test(comm, kind) != MPI_SUCCESS)
    return 0;
  int nd = 0, w = 0;
  if (*kind == MPI_CART && PMPI_Cartdim_get(comm, &nd) == MPI_SUCCESS)
    *indeg = *outdeg = 2 * nd;
  else if (*kind == MPI_GRAPH && PMPI_Graph_neighbors_count(comm, myrank, &nd) == MPI_SUCCESS)
    *indeg = *outdeg = nd;
  else if (*kind == MPI_DIST_GRAPH)
    PMPI_Dist_graph_neighbors_count(comm, indeg, outdeg, &w);
  else
    *kind = MPI_UNDEFINED;
  return *indeg > *outdeg ? *indeg : *outdeg;
}

static int comm_delete_cb(MPI_Comm comm, int keyval, void *attr, void *extra) {
  (void)keyval, (void)attr, (void)extra;
  cache_forget(&comms, MON__HANDLE_KEY(comm));
  return MPI_SUCCESS;
}

static int win_delete_cb(MPI_Win win, int keyval, void *attr, void *extra) {
  (void)keyval, (void)attr, (void)extra;
  cache_forget(&wins, MON__HANDLE_KEY(win));
  return MPI_SUCCESS;
}

/* The keyval whose delete callback forgets an entry; -1 when unavailable. */
static int keyval_of(cache_t *c, int is_win) {
  int kv = -1;
  pthread_mutex_lock(&c->mu);
  if (!c->have_keyval) {
    int rc = is_win ? PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete_cb,
                                             &c->keyval, NULL)
                    : PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete_cb,
                                              &c->keyval, NULL);
    c->have_keyval = rc == MPI_SUCCESS ? 1 : -1;
  }
  if (c->have_keyval > 0)
    kv = c->keyval;
  pthread_mutex_unlock(&c->mu);
  return kv;
}

/* Marks a handle with the keyval once. Setting the attribute again would
 * run the delete callback of the first mark, which forgets (frees) the entry
 * another thread published and may be reading: two threads that miss the
 * cache on a new communicator at once both get here. */
static pthread_mutex_t mark_mu = PTHREAD_MUTEX_INITIALIZER;

static void comm_mark(MPI_Comm comm) {
  int kv = keyval_of(&comms, 0), flag = 0;
  void *v = NULL;
  if (kv < 0)
    return;
  pthread_mutex_lock(&mark_mu);
  if (PMPI_Comm_get_attr(comm, kv, &v, &flag) == MPI_SUCCESS && !flag)
    PMPI_Comm_set_attr(comm, kv, NULL);
  pthread_mutex_unlock(&mark_mu);
}

static void win_mark(MPI_Win win) {
  int kv = keyval_of(&wins, 1), flag = 0;
  void *v = NULL;
  if (kv < 0)
    return;
  pthread_mutex_lock(&mark_mu);
  if (PMPI_Win_get_attr(win, kv, &v, &flag) == MPI_SUCCESS && !flag)
    PMPI_Win_set_attr(win, kv, NULL);
  pthread_mutex_unlock(&mark_mu);
}

static wgroup_t *comm_build(MPI_Comm comm) {
  int inter = 0, myrank = -1;
  MPI_Group g;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
      PMPI_Comm_rank(comm, &myrank) != MPI_SUCCESS)
    return NULL;
  int kind = MPI_UNDEFINED, indeg = 0, outdeg = 0, ndeg = 0;
  if (!inter)
    ndeg = topo_degree(comm, myrank, &kind, &indeg, &outdeg);
  if ((inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
    return NULL;
  wgroup_t *w = group_new(g, myrank, ndeg);
  PMPI_Group_free(&g);
  if (w == NULL)
    return NULL;
  w->inter = inter;
  w->id = __atomic_add_fetch(&next_comm_id, 1, __ATOMIC_RELAXED);
  w->lsize = w->n;
  if (inter && PMPI_Comm_size(comm, &w->lsize) != MPI_SUCCESS)
    w->lsize = 0;
  if (kind != MPI_UNDEFINED) {
    w->has_topo = 1;
    w->indeg = indeg;
    w->outdeg = outdeg;
    memset(w->in_ok, 1, (size_t)ndeg * 2);
    /* Cartesian neighbours per dimension: displacement -1, then +1; at a
     * non-periodic border they are MPI_PROC_NULL and move nothing. */
    for (int d = 0; kind == MPI_CART && d < indeg / 2; d++) {
      int src = MPI_PROC_NULL, dst = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &src, &dst);
      w->in_ok[2 * d] = w->out_ok[2 * d] = src != MPI_PROC_NULL;
      w->in_ok[2 * d + 1] = w->out_ok[2 * d + 1] = dst != MPI_PROC_NULL;
    }
  }
  /* Mark before publishing, so that a free seen by the attribute's delete
   * callback always finds the entry to forget. */
  comm_mark(comm);
  return cache_insert(&comms, MON__HANDLE_KEY(comm), w);
}

static wgroup_t *comm_get(MPI_Comm comm) {
  uintptr_t key = MON__HANDLE_KEY(comm);
  if (key == 0 || comm == MPI_COMM_NULL)
    return NULL;
  wgroup_t *w = cache_find(&comms, key);
  return w != NULL ? w : comm_build(comm);
}

static void world_init(void) {
  if (MON__LD(&world_size) < 0) {
    int n = 0, r = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    MON__ST(&world_rank, r);
    MON__ST(&world_size, n);
  }
}

/* ---- the interface ---------------------------------------------------------- */

int mon__w_rank(MPI_Comm comm, int rank) {
  if (rank < 0)
    return MON_NO_PARTNER;
  if (comm == MPI_COMM_WORLD)
    return rank;
  wgroup_t *w = comm_get(comm);
  return w != NULL && rank < w->n ? w->ranks[rank] : MON_NO_PARTNER;
}

int mon__world_rank(MPI_Comm comm, int rank) { return mon__w_rank(comm, rank); }

int mon__w_comm_id(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD)
    return 0;
  wgroup_t *w = comm_get(comm);
  return w != NULL ? w->id : -1;
}

int mon__w_size_id(MPI_Comm comm, int *id) {
  if (comm == MPI_COMM_WORLD) {
    *id = 0;
    return mon__w_size(comm);
  }
  wgroup_t *w = comm_get(comm);
  *id = w != NULL ? w->id : -1;
  return w != NULL ? w->n : 0;
}

int mon__w_comm_ranks(int comm_id, int *world_ranks, int max) {
  if (comm_id == 0) {
    world_init();
    int n = MON__LD(&world_size);
    for (int i = 0; i < n && i < max; i++)
      world_ranks[i] = i;
    return n;
  }
  int n = BALLAST_ENOTFOUND;
  /* A scan under the lock: tools ask once per communicator they meet. */
  pthread_mutex_lock(&comms.mu);
  ctab_t *tb = comms.tab;
  for (size_t i = 0; tb != NULL && i < tb->cap && n < 0; i++) {
    const wgroup_t *w = tb->slots[i].val;
    if (w != NULL && w->id == comm_id) {
      n = w->n;
      for (int k = 0; k < n && k < max; k++)
        world_ranks[k] = w->ranks[k] == MON_NO_PARTNER ? -1 : w->ranks[k];
    }
  }
  pthread_mutex_unlock(&comms.mu);
  return n;
}

/* MPI_COMM_WORLD's translation is the identity: no table, never freed. */
static wgroup_t world_src;

mon__wsrc_t *mon__w_src_hold(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD)
    return &world_src;
  wgroup_t *w = comm_get(comm);
  /* The caller is inside a call on comm, so comm (and its entry) lives:
   * no other thread may free it meanwhile in a correct program. */
  if (w != NULL)
    __atomic_add_fetch(&w->refs, 1, __ATOMIC_RELAXED);
  return w;
}

int mon__w_src_rank(const mon__wsrc_t *src, int rank) {
  if (src == NULL || rank < 0)
    return MON_NO_PARTNER;
  if (src == &world_src)
    return rank;
  return rank < src->n ? src->ranks[rank] : MON_NO_PARTNER;
}

void mon__w_src_release(mon__wsrc_t *src) {
  if (src != NULL && src != &world_src)
    group_release(src);
}

void mon__comm_forget(MPI_Comm comm) {
  if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
    cache_forget(&comms, MON__HANDLE_KEY(comm));
}

int mon__w_size(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) {
    world_init();
    return world_size;
  }
  wgroup_t *w = comm_get(comm);
  return w != NULL ? w->n : 0;
}

int mon__w_lsize(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD)
    return mon__w_size(comm);
  wgroup_t *w = comm_get(comm);
  return w != NULL ? w->lsize : 0;
}

int mon__w_role(MPI_Comm comm, int root) {
  wgroup_t *w = comm == MPI_COMM_WORLD ? NULL : comm_get(comm);
  if (w != NULL && w->inter)
    return root == MPI_ROOT ? 1 : root == MPI_PROC_NULL ? -1 : 0;
  return mon__w_myrank(comm) == root;
}

int mon__w_myrank(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) {
    world_init();
    return world_rank;
  }
  wgroup_t *w = comm_get(comm);
  return w != NULL ? w->myrank : -1;
}

int mon__w_neighbours(MPI_Comm comm, int *indeg, int *outdeg,
                      const unsigned char **in_ok, const unsigned char **out_ok) {
  wgroup_t *w = comm == MPI_COMM_WORLD ? NULL : comm_get(comm);
  if (w == NULL || !w->has_topo)
    return -1;
  *indeg = w->indeg;
  *outdeg = w->outdeg;
  if (in_ok)
    *in_ok = w->in_ok;
  if (out_ok)
    *out_ok = w->out_ok;
  return 0;
}

int mon__w_wrank(MPI_Win win, int rank) {
  uintptr_t key = MON__HANDLE_KEY(win);
  if (rank < 0 || key == 0 || win == MPI_WIN_NULL)
    return MON_NO_PARTNER;
  wgroup_t *w = cache_find(&wins, key);
  if (w == NULL) {
    MPI_Group g;
    if (PMPI_Win_get_group(win, &g) != MPI_SUCCESS)
      return MON_NO_PARTNER;
    int me = -1;
    PMPI_Group_rank(g, &me);
    w = group_new(g, me, 0);
    PMPI_Group_free(&g);
    if (w == NULL)
      return MON_NO_PARTNER;
    w->lsize = w->n;
    win_mark(win);
    w = cache_insert(&wins, key, w);
    if (w == NULL) /* out of memory: no partner this time, retried next call */
      return MON_NO_PARTNER;
  }
  return rank < w->n ? w->ranks[rank] : MON_NO_PARTNER;
}

void mon__win_forget(MPI_Win win) {
  if (win != MPI_WIN_NULL)
    cache_forget(&wins, MON__HANDLE_KEY(win));
}

/* Called from the MPI_Finalize wrapper, after mon__finalize, while MPI is
 * still up: nothing will read the caches any more. */
void mon__wrap_comm_finalize(void) {
  cache_free(&comms);
  cache_free(&wins);
  MON__ST(&world_size, -1);
}
