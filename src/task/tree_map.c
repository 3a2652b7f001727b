/* From task tree to task graph to mapping: rta_task_map().
 *
 * 1. Every process packs the tasks of its subtree under the root (key,
 *    parameters hash, costs, declared partners) and the bytes it was measured
 *    to send to every rank per step; one MPI_Allgatherv gives everybody
 *    everything.
 * 2. Every process merges the records the same way (sorted by key, then
 *    rank), so validation errors and the graph are identical everywhere.
 * 3. Two-phase: every rank maps with rta_map_graph_par (phase 2 shared
 *    among the ranks, node by node). Other strategies: rank 0 maps
 *    (rta_map_graph_ex) and broadcasts the slots and the quality record.
 * rta's own MPI traffic is bracketed by ballast__lib_begin()/ballast__lib_end().
 */
#include "task/task_internal.h"
#include "common/bytebuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"

struct rta_mapping {
  int64_t n;
  char **keys;       /* sorted, into keymem */
  char *keymem;      /* every key, one block: one free, not one per task */
  rta_task_t **task; /* this process's task of each vertex (task__mapping_task) */
  int *slot, *owner, *ndef, *nprocs;
  double *work, *state;
  int placement;
  rta_map_quality_t q;
};

/* ---- packing the local subtree -------------------------------------------------- */

static int pack_task(ballast__wbuf_t *b, const rta_task_t *t) {
  rta_task_cost_t c;
  size_t arr = 0;
  int rc = t->narrays ? rta_task_arrays_packed_size(t, &arr) : 0;
  if (rc)
    return rc;
  rta_task_cost(t, &c);
  ballast__put_str(b, t->key);
  ballast__put_i32(b, t->nchildren > 0);
  ballast__put_i32(b, t->params.nprocs);
  ballast__put_i64(b, (int64_t)t->params_hash);
  ballast__put_f64(b, t->params.est_work);
  ballast__put_f64(b, (double)t->params.state_size + (double)arr);
  ballast__put_i32(b, c.measured);
  ballast__put_f64(b, c.avg_time);
  ballast__put_i32(b, t->params.ncomm);
  for (int i = 0; i < t->params.ncomm; i++) {
    ballast__put_str(b, t->params.comm[i].key);
    ballast__put_f64(b, t->params.comm[i].bytes);
  }
  for (int i = 0; i < t->nchildren && !rc; i++)
    rc = pack_task(b, t->children[i]);
  return rc;
}

static int64_t subtree_size(const rta_task_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->nchildren; i++)
    n += subtree_size(t->children[i]);
  return n;
}

/* The subtree's tasks in pack_task's order into v[*k...]. */
static void list_subtree(rta_task_t *t, rta_task_t **v, int64_t *k) {
  v[(*k)++] = t;
  for (int i = 0; i < t->nchildren; i++)
    list_subtree(t->children[i], v, k);
}

/* ---- the merged view ------------------------------------------------------------- */

typedef struct {
  const char *key;
  rta_task_t *task; /* this process's task, for the records it packed */
  int rank;
  int has_children, nprocs, measured, ncomm;
  uint64_t hash;
  double est_work, state, avg_time;
  ballast__rbuf_t comm; /* reader positioned on the partners */
} rec_t;

static int cmp_rec(const void *a, const void *b) {
  const rec_t *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
  int size, me;
  rta_task_t **mine;   /* this process's tasks in the order it packed them */
  int64_t nmine;
  rec_t *recs;
  int64_t nrecs;
  long long *steps;    /* per rank: steps since the partner baseline */
  double **sent;       /* per rank: bytes per step to every rank (dense) */
} world_t;

static void world_free(world_t *w) {
  free(w->mine);
  free(w->recs);
  if (w->sent)
    for (int r = 0; r < w->size; r++)
      free(w->sent[r]);
  free(w->sent);
  free(w->steps);
}

/* Parses every rank's buffer into w. */
static int parse_all(world_t *w, const unsigned char *all, const int *counts,
                     const int *displs) {
  int64_t total = 0;
  for (int r = 0; r < w->size; r++) {
    int64_t n;
    memcpy(&n, all + displs[r], sizeof n);
    total += n;
  }
  w->recs = ballast__calloc((size_t)(total ? total : 1), sizeof *w->recs);
  w->steps = ballast__calloc((size_t)w->size, sizeof *w->steps);
  w->sent = ballast__calloc((size_t)w->size, sizeof *w->sent);
  if (!w->recs || !w->steps || !w->sent)
    return BALLAST_ENOMEM;
  for (int r = 0; r < w->size; r++) {
    ballast__rbuf_t rd = {all + displs[r], all + displs[r] + counts[r], 0};
    int64_t n = ballast__get_i64(&rd);
    w->steps[r] = ballast__get_i64(&rd);
    int np = ballast__get_i32(&rd);
    w->sent[r] = ballast__calloc((size_t)w->size, sizeof **w->sent);
    if (!w->sent[r])
      return BALLAST_ENOMEM;
    for (int i = 0; i < np; i++) {
      int p = ballast__get_i32(&rd);
      double bytes = ballast__get_f64(&rd);
      if (p >= 0 && p < w->size)
        w->sent[r][p] = bytes;
    }
    for (int64_t i = 0; i < n && !rd.bad; i++) {
      rec_t *x = &w->recs[w->nrecs++];
      x->key = ballast__get_str(&rd);
      x->task = r == w->me && i < w->nmine ? w->mine[i] : NULL;
      x->rank = r;
      x->has_children = ballast__get_i32(&rd);
      x->nprocs = ballast__get_i32(&rd);
      x->hash = (uint64_t)ballast__get_i64(&rd);
      x->est_work = ballast__get_f64(&rd);
      x->state = ballast__get_f64(&rd);
      x->measured = ballast__get_i32(&rd);
      x->avg_time = ballast__get_f64(&rd);
      x->ncomm = ballast__get_i32(&rd);
      x->comm = rd;
      for (int k = 0; k < x->ncomm; k++) {
        ballast__get_str(&rd);
        ballast__get_f64(&rd);
      }
    }
    if (rd.bad)
      return BALLAST_ESIZE; /* cannot happen with buffers of this file */
  }
  qsort(w->recs, (size_t)w->nrecs, sizeof *w->recs, cmp_rec);
  return 0;
}

/* ---- collective helpers ------------------------------------------------------------ */

/* Agrees on failure: every rank returns its own code if it failed, else
 * BALLAST_EREMOTE when another rank failed. */

static uint64_t key_hash(const char *s) {
  return ballast__fnv1a(BALLAST__FNV_OFFSET, s, strlen(s));
}

/* Packs this process's part: header, partner bytes, subtree records; lists
 * the tasks packed in w->mine, so that the mapping can name each vertex's
 * task here without looking its key up. */
static int pack_local(MPI_Comm comm, world_t *w, rta_task_t *root,
                      ballast__wbuf_t *b) {
  int size = w->size;
  int64_t n = subtree_size(root);
  double *sent = ballast__calloc((size_t)size, sizeof *sent);
  w->mine = ballast__malloc((size_t)n * sizeof *w->mine);
  if (!sent || !w->mine) {
    free(sent);
    return BALLAST_ENOMEM;
  }
  list_subtree(root, w->mine, &w->nmine);
  long long nsteps = 0;
  /* Monitoring off or no steps: nothing measured, zeros go out. */
  task__cost_partner_bytes(comm, sent, &nsteps);
  int np = 0;
  for (int r = 0; r < size; r++)
    np += sent[r] > 0;
  ballast__put_i64(b, n);
  ballast__put_i64(b, nsteps);
  ballast__put_i32(b, np);
  for (int r = 0; r < size; r++)
    if (sent[r] > 0) {
      ballast__put_i32(b, r);
      ballast__put_f64(b, sent[r]);
    }
  free(sent);
  int rc = pack_task(b, root);
  return rc ? rc : (b->oom ? BALLAST_ENOMEM : 0);
}

/* Every rank's records into w. Returns the gather's code, agreed; the
 * parse's code, local, goes to *parse_rc (map_gathered agrees on it with its
 * own first errors: one collective fewer). */
static int allgather_records(MPI_Comm comm, world_t *w, const ballast__wbuf_t *b,
                             unsigned char **all_out, int *parse_rc) {
  int *counts = ballast__calloc((size_t)w->size, sizeof *counts);
  int *displs = ballast__calloc((size_t)w->size, sizeof *displs);
  unsigned char *all = NULL;
  int rc = (!counts || !displs) ? BALLAST_ENOMEM : 0;
  int mine = (int)b->n;
  if (b->n > (size_t)INT32_MAX)
    rc = BALLAST_EOVERFLOW;
  rc = ballast__agree(comm, rc, NULL, NULL);
  if (!rc && MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, comm) !=
                 MPI_SUCCESS)
    rc = BALLAST_EMPI;
  if (!rc) {
    int64_t total = 0;
    for (int r = 0; r < w->size; r++) {
      displs[r] = (int)total;
      total += counts[r];
    }
    if (total > INT32_MAX)
      rc = BALLAST_EOVERFLOW;
    else if (!(all = ballast__malloc((size_t)total)))
      rc = BALLAST_ENOMEM;
    rc = ballast__agree(comm, rc, NULL, NULL);
  }
  if (!rc && MPI_Allgatherv(b->p, mine, MPI_BYTE, all, counts, displs,
                            MPI_BYTE, comm) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  *parse_rc = rc ? 0 : parse_all(w, all, counts, displs);
  free(counts);
  free(displs);
  if (rc) {
    free(all);
    all = NULL;
  }
  *all_out = all;
  return rc;
}

/* ---- building the graph ---------------------------------------------------------- */

typedef struct {
  int64_t n;            /* leaves */
  int64_t *first;       /* index of the leaf's first record (its owner's) */
  int *ndef;
  char **keys;
} leaves_t;

static int64_t leaf_find(const leaves_t *L, const char *key) {
  int64_t lo = 0, hi = L->n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = strcmp(L->keys[mid], key);
    if (!c)
      return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* Which parameter two records of one task disagree on, for the warning. */
static const char *which_param(const rec_t *a, const rec_t *b, char *buf, size_t n) {
  if (a->nprocs != b->nprocs)
    snprintf(buf, n, "nprocs (%d against %d)", a->nprocs, b->nprocs);
  else if (a->est_work != b->est_work)
    snprintf(buf, n, "est_work (%g against %g)", a->est_work, b->est_work);
  else if (a->ncomm != b->ncomm)
    snprintf(buf, n, "ncomm, the number of declared partners (%d against %d)",
             a->ncomm, b->ncomm);
  else
    snprintf(buf, n, "state_size or the declared partners (comm: keys or bytes)");
  return buf;
}

/* Groups records by key, checks them and lists the leaves. Identical on
 * every rank; only rank 0 logs, except a disagreement between ranks, which
 * every rank reports (each returns the same code). */
static int find_leaves(const world_t *w, const char *root_key, leaves_t *L) {
  L->first = ballast__malloc((size_t)(w->nrecs ? w->nrecs : 1) * sizeof *L->first);
  L->ndef = ballast__malloc((size_t)(w->nrecs ? w->nrecs : 1) * sizeof *L->ndef);
  L->keys = ballast__malloc((size_t)(w->nrecs ? w->nrecs : 1) * sizeof *L->keys);
  if (!L->first || !L->ndef || !L->keys)
    return BALLAST_ENOMEM;
  int log = w->me == 0;
  for (int64_t i = 0; i < w->nrecs;) {
    int64_t j = i;
    int children = 0;
    while (j < w->nrecs && strcmp(w->recs[j].key, w->recs[i].key) == 0) {
      children |= w->recs[j].has_children;
      if (w->recs[j].hash != w->recs[i].hash) {
        char what[128];
        BALLAST_WARN("rta: task \"%s\" is defined with different parameters "
                     "on ranks %d and %d: %s", w->recs[i].key, w->recs[i].rank,
                     w->recs[j].rank,
                     which_param(&w->recs[i], &w->recs[j], what, sizeof what));
        return BALLAST_EMISMATCH;
      }
      j++;
    }
    const rec_t *x = &w->recs[i];
    int ndef = (int)(j - i);
    if (!children && strcmp(x->key, root_key) != 0) {
      if (ndef > 1 && (x->nprocs == 1 || ndef > x->nprocs)) {
        if (log)
          BALLAST_WARN("rta: leaf task \"%s\" (nprocs %d) is defined on %d "
                       "ranks (%d and %d at least): a leaf belongs to the rank "
                       "that defines it", x->key, x->nprocs, ndef, x->rank,
                       w->recs[i + 1].rank);
        return BALLAST_EEXIST;
      }
      L->first[L->n] = i;
      L->ndef[L->n] = ndef;
      L->keys[L->n] = (char *)x->key;
      L->n++;
    }
    i = j;
  }
  if (L->n == 0) {
    if (log)
      BALLAST_WARN("rta: map_tasks: no leaf task under \"%s\" (%s)", root_key,
                   ballast_err_name(BALLAST_ENOTFOUND));
    return BALLAST_ENOTFOUND;
  }
  return 0;
}

/* Sets vertex weights and edges of g from the leaves' records. */
static int fill_graph(const world_t *w, const leaves_t *L, int placement,
                      rta_graph_t *g, double *work, double *state) {
  /* Work: measured seconds where measured, else estimates scaled to them. */
  double sum_meas = 0, sum_est = 0;
  for (int64_t v = 0; v < L->n; v++) {
    const rec_t *x = &w->recs[L->first[v]];
    if (x->measured) {
      sum_meas += x->avg_time;
      sum_est += x->est_work;
    }
  }
  double scale = (sum_meas > 0 && sum_est > 0) ? sum_meas / sum_est : 1.0;
  for (int64_t v = 0; v < L->n; v++) {
    const rec_t *x = &w->recs[L->first[v]];
    work[v] = x->measured ? x->avg_time : x->est_work * scale;
    state[v] = x->state;
    int rc = rta_graph_set_vertex(g, v, work[v], state[v]);
    if (rc)
      return rc;
  }
  int log = w->me == 0;
  /* Bytes. Placement mode with measurements: per pair of ranks. */
  int measured_any = 0;
  for (int r = 0; r < w->size; r++)
    for (int p = 0; p < w->size; p++)
      measured_any |= w->steps[r] > 0 && w->sent[r][p] > 0;
  if (placement && measured_any) {
    int64_t *vof = ballast__malloc((size_t)w->size * sizeof *vof);
    if (!vof)
      return BALLAST_ENOMEM;
    for (int64_t v = 0; v < L->n; v++)
      vof[w->recs[L->first[v]].rank] = v;
    int rc = 0;
    for (int r = 0; r < w->size && !rc; r++)
      for (int p = 0; p < w->size && !rc; p++)
        if (p != r && w->sent[r][p] > 0)
          rc = rta_graph_add_edge(g, vof[r], vof[p], w->sent[r][p]);
    free(vof);
    return rc;
  }
  /* Otherwise declared bytes, scaled per rank by measured / declared
   * bytes to tasks of other ranks. */
  double *declared = ballast__calloc((size_t)w->size, sizeof *declared);
  double *rscale = ballast__malloc((size_t)w->size * sizeof *rscale);
  if (!declared || !rscale) {
    free(declared);
    free(rscale);
    return BALLAST_ENOMEM;
  }
  int rc = 0;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    for (int64_t v = 0; v < L->n && !rc; v++) {
      const rec_t *x = &w->recs[L->first[v]];
      ballast__rbuf_t rd = x->comm;
      for (int k = 0; k < x->ncomm && !rc; k++) {
        const char *pk = ballast__get_str(&rd);
        double bytes = ballast__get_f64(&rd);
        int64_t u = leaf_find(L, pk);
        if (u < 0) {
          if (log)
            BALLAST_WARN("rta: task \"%s\" declares partner \"%s\", which is "
                         "not a leaf task under the mapped root", x->key, pk);
          rc = BALLAST_ENOTFOUND;
        } else if (pass == 0) {
          if (w->recs[L->first[u]].rank != x->rank)
            declared[x->rank] += bytes;
        } else {
          rc = rta_graph_add_edge(g, v, u, bytes * rscale[x->rank]);
        }
      }
    }
    if (pass == 0)
      for (int r = 0; r < w->size; r++) {
        double meas = 0;
        for (int p = 0; p < w->size; p++)
          if (p != r && w->steps[r] > 0)
            meas += w->sent[r][p];
        rscale[r] = (meas > 0 && declared[r] > 0) ? meas / declared[r] : 1.0;
      }
  }
  free(declared);
  free(rscale);
  return rc;
}

/* ---- the call --------------------------------------------------------------------- */

void rta_task_map_options_init(rta_task_map_options_t *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->strategy = RTA_MAP_TWOPHASE;
  o->fresh = 0;
  rta_map_options_init(&o->engine);
}

static int mapping_alloc(rta_mapping_t **out, int64_t n) {
  rta_mapping_t *m = ballast__calloc(1, sizeof *m);
  if (!m)
    return BALLAST_ENOMEM;
  m->n = n;
  size_t sn = (size_t)n;
  m->keys = ballast__calloc(sn, sizeof *m->keys);
  m->task = ballast__calloc(sn, sizeof *m->task);
  m->slot = ballast__calloc(sn, sizeof *m->slot);
  m->owner = ballast__calloc(sn, sizeof *m->owner);
  m->ndef = ballast__calloc(sn, sizeof *m->ndef);
  m->nprocs = ballast__calloc(sn, sizeof *m->nprocs);
  m->work = ballast__calloc(sn, sizeof *m->work);
  m->state = ballast__calloc(sn, sizeof *m->state);
  *out = m;
  if (!m->keys || !m->task || !m->slot || !m->owner || !m->ndef ||
      !m->nprocs || !m->work || !m->state)
    return BALLAST_ENOMEM;
  return 0;
}

/* Owners, definers, keys (into one block) and this process's tasks of the
 * mapping's vertices, from their records. */
static int mapping_keys(rta_mapping_t *m, const world_t *w, const leaves_t *L) {
  size_t bytes = 1;
  for (int64_t v = 0; v < L->n; v++)
    bytes += strlen(w->recs[L->first[v]].key) + 1;
  if (!(m->keymem = ballast__malloc(bytes)))
    return BALLAST_ENOMEM;
  char *p = m->keymem;
  for (int64_t v = 0; v < L->n; v++) {
    const rec_t *x = &w->recs[L->first[v]];
    m->owner[v] = x->rank;
    m->ndef[v] = L->ndef[v];
    m->nprocs[v] = x->nprocs;
    size_t len = strlen(x->key) + 1;
    memcpy(p, x->key, len);
    m->keys[v] = p;
    p += len;
    for (int k = 0; k < L->ndef[v]; k++)
      if (x[k].task)
        m->task[v] = x[k].task;
  }
  return 0;
}

/* Everything after the gather: graph, map on rank 0, broadcast. */
static int map_gathered(MPI_Comm comm, int parse_rc, const world_t *w,
                        const char *root_key,
                        const rta_hw_t *hw, const rta_task_map_options_t *o,
                        rta_mapping_t **out, rta_graph_t **keep) {
  leaves_t L = {0};
  rta_graph_t *g = NULL;
  rta_mapping_t *m = NULL;
  int64_t *slots = NULL, *prev = NULL;
  /* Errors up to the mapping are computed identically on every rank, but
   * for failed allocations (here and in parsing the records). */
  int rc = parse_rc ? parse_rc : find_leaves(w, root_key, &L);
  int placement = 0;
  if (!rc && L.n == w->size) {
    int *count = ballast__calloc((size_t)w->size, sizeof *count);
    if (!count)
      rc = BALLAST_ENOMEM;
    else {
      placement = 1;
      for (int64_t v = 0; v < L.n; v++)
        count[w->recs[L.first[v]].rank]++;
      for (int r = 0; r < w->size; r++)
        placement &= count[r] == 1;
      free(count);
    }
  }
  if (!rc)
    rc = mapping_alloc(&m, L.n);
  if (!rc)
    rc = rta_graph_create(L.n, &g);
  if (!rc) {
    m->placement = placement;
    rc = fill_graph(w, &L, placement, g, m->work, m->state);
  }
  if (!rc) {
    slots = ballast__malloc((size_t)L.n * sizeof *slots);
    prev = ballast__malloc((size_t)L.n * sizeof *prev);
    if (!slots || !prev)
      rc = BALLAST_ENOMEM;
  }
  for (int64_t v = 0; !rc && v < L.n; v++)
    prev[v] = w->recs[L.first[v]].rank;
  if (!rc)
    rc = mapping_keys(m, w, &L);
  rc = ballast__agree(comm, rc, NULL, NULL);
  if (!rc && o->strategy == RTA_MAP_TWOPHASE) {
    /* Every rank holds the graph: phase 2 runs in parallel over the nodes
     * (seed figure 5); the engine agrees on errors itself. */
    rc = rta_map_graph_par(g, hw, o->strategy, o->fresh ? NULL : prev,
                           &o->engine, comm, slots, &m->q);
    if (rc && w->me == 0)
      BALLAST_WARN("rta: map_tasks: the mapping engine failed: %s",
                   ballast_strerror(rc));
  } else if (!rc) {
    int mrc = 0;
    if (w->me == 0)
      mrc = rta_map_graph_ex(g, hw, o->strategy, o->fresh ? NULL : prev,
                             &o->engine, slots, &m->q);
    if (MPI_Bcast(&mrc, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
    else if (mrc)
      rc = mrc; /* the engine's own code, identical everywhere */
    else if (MPI_Bcast(slots, (int)L.n, MPI_INT64_T, 0, comm) != MPI_SUCCESS ||
             MPI_Bcast(&m->q, (int)sizeof m->q, MPI_BYTE, 0, comm) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
    if (mrc && w->me == 0)
      BALLAST_WARN("rta: map_tasks: the mapping engine failed: %s",
                   ballast_strerror(mrc));
  }
  if (!rc)
    for (int64_t v = 0; v < L.n; v++)
      m->slot[v] = (int)slots[v];
  free(slots);
  free(prev);
  if (!rc && keep) {
    *keep = g; /* the graph the engine mapped, for the load-balancing record */
    g = NULL;
  }
  rta_graph_destroy(g);
  free(L.first);
  free(L.ndef);
  free(L.keys);
  if (rc) {
    rta_mapping_destroy(m);
    return rc;
  }
  *out = m;
  return 0;
}

int rta_task_map(MPI_Comm comm, rta_task_t *root, const rta_hw_t *hw,
                 const rta_task_map_options_t *opts, rta_mapping_t **out) {
  return task__map_keep(comm, root, hw, opts, out, NULL);
}

int task__map_keep(MPI_Comm comm, rta_task_t *root, const rta_hw_t *hw,
                   const rta_task_map_options_t *opts, rta_mapping_t **out,
                   rta_graph_t **graph) {
  if (out)
    *out = NULL;
  if (graph)
    *graph = NULL;
  int rc0 = ballast__need_mpi("rta_task_map");
  if (rc0)
    return rc0;
  if (comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  rta_task_map_options_t o;
  if (opts)
    o = *opts;
  else
    rta_task_map_options_init(&o);

  ballast__lib_begin();
  world_t w = {0};
  ballast__wbuf_t b = {0};
  unsigned char *all = NULL;
  int rc = 0;
  if (MPI_Comm_size(comm, &w.size) != MPI_SUCCESS ||
      MPI_Comm_rank(comm, &w.me) != MPI_SUCCESS) {
    rc = BALLAST_EMPI;
    goto done;
  }
  if (!root || !hw || !out)
    rc = BALLAST_EINVAL;
  else if (rta_hw_nslots(hw) != w.size) {
    BALLAST_WARN("rta: map_tasks: the hardware model has %d slots, the "
                 "communicator %d ranks", rta_hw_nslots(hw), w.size);
    rc = BALLAST_EINVAL;
  }
  rc = ballast__agree(comm, rc, NULL, NULL);
  if (rc)
    goto done;
  /* Same root everywhere: compare min and max of the key's hash. */
  uint64_t h[2], hm[2];
  h[0] = key_hash(root->key);
  h[1] = ~h[0];
  if (MPI_Allreduce(h, hm, 2, MPI_UINT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
    rc = BALLAST_EMPI;
    goto done;
  }
  if (hm[0] != h[0] || hm[1] != h[1])
    rc = BALLAST_EMISMATCH;
  if (rc == BALLAST_EMISMATCH)
    BALLAST_WARN("rta: map_tasks: ranks pass different roots (here \"%s\")",
                 root->key);
  rc = ballast__agree(comm, rc, NULL, NULL);
  if (rc == BALLAST_EREMOTE)
    rc = BALLAST_EMISMATCH; /* a disagreement is everyone's */
  if (rc)
    goto done;
  rc = ballast__agree(comm, pack_local(comm, &w, root, &b), NULL, NULL);
  int parse_rc = 0;
  if (!rc)
    rc = allgather_records(comm, &w, &b, &all, &parse_rc);
  if (!rc)
    rc = map_gathered(comm, parse_rc, &w, root->key, hw, &o, out, graph);
  if (!rc)
    task__cost_partner_rebase(comm);
done:
  free(b.p);
  free(all);
  world_free(&w);
  ballast__lib_end();
  return rc;
}

/* ---- the result ------------------------------------------------------------------- */

void rta_mapping_destroy(rta_mapping_t *m) {
  if (!m)
    return;
  free(m->keys);
  free(m->keymem);
  free(m->task);
  free(m->slot);
  free(m->owner);
  free(m->ndef);
  free(m->nprocs);
  free(m->work);
  free(m->state);
  free(m);
}

#define IN(m, i) ((m) && (i) >= 0 && (i) < (m)->n)

int64_t rta_mapping_ntasks(const rta_mapping_t *m) { return m ? m->n : BALLAST_EINVAL; }
const char *rta_mapping_key(const rta_mapping_t *m, int64_t i) {
  return IN(m, i) ? m->keys[i] : NULL;
}
int64_t rta_mapping_find(const rta_mapping_t *m, const char *key) {
  if (!m || !key)
    return BALLAST_EINVAL;
  char *const *k = bsearch(&key, m->keys, (size_t)m->n, sizeof *m->keys, cmp_str);
  return k ? (int64_t)(k - m->keys) : BALLAST_ENOTFOUND;
}
rta_task_t *task__mapping_task(const rta_mapping_t *m, int64_t i) {
  return IN(m, i) ? m->task[i] : NULL;
}
void task__mapping_set_task(rta_mapping_t *m, int64_t i, rta_task_t *t) {
  if (IN(m, i))
    m->task[i] = t;
}
/* The one answer to a bad task index (ballast.h, Errors). */
static int check_index(const rta_mapping_t *m, int64_t i) {
  if (!m)
    return BALLAST_EINVAL;
  return IN(m, i) ? 0 : BALLAST_ERANGE;
}
int rta_mapping_slot(const rta_mapping_t *m, int64_t i) {
  int rc = check_index(m, i);
  return rc ? rc : m->slot[i];
}
int rta_mapping_owner(const rta_mapping_t *m, int64_t i) {
  int rc = check_index(m, i);
  return rc ? rc : m->owner[i];
}
int rta_mapping_ndefiners(const rta_mapping_t *m, int64_t i) {
  int rc = check_index(m, i);
  return rc ? rc : m->ndef[i];
}
int rta_mapping_nprocs(const rta_mapping_t *m, int64_t i) {
  int rc = check_index(m, i);
  return rc ? rc : m->nprocs[i];
}
int rta_mapping_work(const rta_mapping_t *m, int64_t i, double *out) {
  int rc = check_index(m, i);
  if (!rc && !out)
    rc = BALLAST_EINVAL;
  if (!rc)
    *out = m->work[i];
  return rc;
}
int rta_mapping_state_bytes(const rta_mapping_t *m, int64_t i, double *out) {
  int rc = check_index(m, i);
  if (!rc && !out)
    rc = BALLAST_EINVAL;
  if (!rc)
    *out = m->state[i];
  return rc;
}
int rta_mapping_placement(const rta_mapping_t *m) {
  return m ? m->placement != 0 : BALLAST_EINVAL;
}
const rta_map_quality_t *rta_mapping_quality(const rta_mapping_t *m) {
  return m ? &m->q : NULL;
}
