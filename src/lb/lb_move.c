/* Moving leaf tasks between the processes of a context through the
 * migration engine (migrate.h), which commits everywhere or rolls back
 * everywhere. Both sides know from the mapping which tasks move where;
 * what the destination needs to define a task (key, parameters, cost
 * window, layout of the state: its descriptor) travels with the engine's
 * headers (the engine's meta and announce operations): one exchange of
 * every rank's headers before the rounds, so the descriptors need no
 * message of their own and no copy into the tails, and a task whose state
 * is one array has no tail at all (its head is its only part on the wire).
 *
 * The state of one task on the wire:
 *   raw:    the bytes of its single registered array of a ballast element
 *           type (no callback bytes), as the engine's head: sent from the
 *           application's array, received into the memory that becomes the
 *           destination's array;
 *   packed: head = the payload of the lead array (the largest of a ballast
 *           element type, task__arrays_lead), sent and adopted as above;
 *           tail = the callback bytes, padded to 8, then the registered
 *           arrays as task_array.c packs them (count, headers, payloads;
 *           the lead's payload left out). No lead: everything in the tail.
 * The memory of arrays that left is handed to the context's pool at commit
 * (migrate.h), where the next remap's arrivals find touched memory.
 */
#include "lb/lb_internal.h"
#include "common/bytebuf.h"
#include "mig/migrate.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"
#include "task/task_hooks.h"
#include "tool/tool_internal.h"

#define MAX_SAMPLES 1024
/* Partners of an arrival read into the scratch after the samples' room (no
 * allocation an arrival) up to this many; more take an allocation. */
#define SCRATCH_PARTNERS 64


/* A key of a descriptor, copied into dst (RTA_KEY_MAX + 1 bytes): the
 * arrival's key is cut at its last '/' to find the parent. */
static size_t get_key(ballast__rbuf_t *r, char *dst) {
  const char *s = ballast__get_str(r);
  size_t n = strlen(s);
  if (n > RTA_KEY_MAX) {
    r->bad = 1;
    n = 0;
  }
  memcpy(dst, s, n);
  dst[n] = 0;
  return n;
}

/* ---- per-move records ------------------------------------------------------------ */

typedef struct {
  rta_task_t *t;
  int64_t v; /* its vertex in the mapping */
  int dest;
  size_t user_bytes, arr_bytes; /* arr_bytes: packed, without the lead's payload */
  int lead;                     /* packed: the lead array, -1 none */
  size_t head_bytes;            /* packed: the lead's payload */
  int raw;
  void **raw_slot;
  rta_serial_t ops;
  void *user;
  int has_ops;
  int gone; /* committed and released: leaves the tree after the engine */
  size_t doff, dlen; /* its descriptor in mctx_t.desc */
} out_t;

typedef struct {
  int64_t v;
  int src;                   /* the rank it comes from (its owner) */
  const unsigned char *desc; /* in the engine's headers (op_announce), until
                              * the engine returns */
  size_t desc_len;
  size_t desc_body;          /* bytes of its fixed part (read_head) */
  int arrived;               /* unpack was called for it */
  size_t user_bytes, arr_bytes;
  int lead;
  size_t head_bytes;
  int64_t stage; /* under its parent at the source */
  int raw, raw_elem, raw_ndims;
  int64_t raw_dims[RTA_MAX_DIMS];
  rta_task_t *t;   /* defined at unpack */
  int unpacked;    /* the unpack callback succeeded (release owed on rollback) */
  const char *hkey; /* its key in the mapping, hashed ahead (op_unpack), or NULL */
  unsigned hash;    /* that key's hash */
  rta_serial_t ops;
  void *user;
} in_t;

typedef struct {
  const rta_mapping_t *m;
  out_t *out;
  in_t *in;
  int64_t *out_of; /* vertex -> index in out, -1 */
  int64_t *in_of;  /* vertex -> index in in, -1 */
  int nout, nin;   /* departures in out, arrivals in in */
  ballast__wbuf_t desc; /* the departures' descriptors */
  mig__pool_t *pool;
  rta_task_t **made; /* inner tasks this move defined (arrivals' missing
                      * parents), in creation order: removed on rollback */
  int nmade, capmade;
  rta_task_t *parent; /* the last arrival's parent: most arrivals share one */
  size_t parent_len;  /* the length of its key */
  double *samples; /* MAX_SAMPLES, then SCRATCH_PARTNERS partners:
                    * scratch of define_arrival */
  struct gift {
    void *mem;
    size_t bytes;
  } *gifts;        /* departed arrays' memory for the pool (give_to_pool) */
  int ngifts, capgifts;
  int err;          /* this rank's code of describing (op_start) */
  MPI_Comm base;    /* the context's: ranks of task_move events */
  int rank;         /* this rank in base */
} mctx_t;

/* A descriptor: its fixed part (vertex, user bytes, array bytes as 8
 * bytes each; raw, element, ndims, lead as 4; the ndims dims of a raw
 * state as 8; head bytes, stage), then the task's parameters (nprocs and
 * ncomm as 4 bytes each, work, state size, the partners), its cost window
 * (count, total, samples) and its key. The dims a state has, not
 * RTA_MAX_DIMS of them, and small fields in 4 bytes: 80 bytes less for a
 * task of one dimension (208 bytes on the wire, now 128, with a key of
 * 13 characters and no cost samples), written, copied and read on both
 * sides of every move. */

/* Before the departure out[i] is used, in a loop over the departures in
 * order: the records of those a few places ahead are asked for, so their
 * cache misses overlap instead of coming one after the other. */
static inline TASK__ALWAYS_INLINE void prefetch_out(const mctx_t *c, int i) {
  enum { AHEAD = 8 };
  if (i + AHEAD < c->nout)
    task__prefetch(c->out[i + AHEAD].t, 0);
  if (i + AHEAD / 2 < c->nout)
    task__prefetch(c->out[i + AHEAD / 2].t, 1);
}

/* ---- descriptors ------------------------------------------------------------------ */

static int describe(out_t *o, int64_t v, ballast__wbuf_t *b) {
  rta_task_t *t = o->t;
  const rta_task_params_t *p = rta_task_params(t);
  o->has_ops = rta_task_serial(t, &o->ops, &o->user) == 0;
  o->user_bytes = 0;
  if (o->has_ops && o->ops.size) {
    if (o->ops.size(t, &o->user_bytes, o->user) != 0) {
      BALLAST_WARN("rta: load balancing: the size callback of \"%s\" failed",
                   rta_task_key(t));
      return BALLAST_ECALLBACK;
    }
  }
  if (o->user_bytes > 0 && (!o->has_ops || !o->ops.pack)) {
    BALLAST_WARN("rta: load balancing: \"%s\" has state bytes but no pack callback",
                 rta_task_key(t));
    return BALLAST_ECALLBACK;
  }
  int elem = 0;
  size_t abytes = 0;
  o->raw_slot = o->user_bytes == 0 ? task__single_array(t, &elem, &abytes)
                                   : NULL;
  o->raw = o->raw_slot != NULL && (abytes == 0 || *o->raw_slot != NULL);
  int ndims = 0;
  int64_t dims[RTA_MAX_DIMS] = {0};
  o->lead = -1;
  o->head_bytes = 0;
  if (o->raw) {
    task__array_shape(t, &ndims, dims);
    o->arr_bytes = abytes;
  } else {
    o->lead = task__arrays_lead(t, &o->head_bytes);
    int rc = task__arrays_packed_size_lead(t, o->lead, &o->arr_bytes);
    if (rc)
      return rc;
  }
  if (ndims < 0 || ndims > RTA_MAX_DIMS)
    return BALLAST_ESIZE;
  int64_t w[3] = {v, (int64_t)o->user_bytes, (int64_t)o->arr_bytes};
  int32_t h[4] = {o->raw, elem, ndims, o->lead};
  ballast__wput(b, w, sizeof w);
  ballast__wput(b, h, sizeof h);
  ballast__wput(b, dims, (size_t)ndims * sizeof *dims);
  int64_t w2[2] = {(int64_t)o->head_bytes, rta_task_stage(t)};
  ballast__wput(b, w2, sizeof w2);
  int32_t pc[2] = {p->nprocs, p->ncomm};
  ballast__wput(b, pc, sizeof pc);
  ballast__put_f64(b, p->est_work);
  ballast__put_i64(b, (int64_t)p->state_size);
  for (int k = 0; k < p->ncomm; k++) {
    ballast__put_str(b, p->comm[k].key);
    ballast__put_f64(b, p->comm[k].bytes);
  }
  double s[MAX_SAMPLES];
  long long total = 0;
  int ns = task__cost_export(t, s, MAX_SAMPLES, &total);
  ballast__put_i64(b, ns);
  ballast__put_i64(b, total);
  for (int i = 0; i < ns; i++)
    ballast__put_f64(b, s[i]);
  ballast__put_str(b, rta_task_key(t));
  return b->oom ? BALLAST_ENOMEM : 0;
}

/* Reads the fixed part of a descriptor into \a x. */
static int read_head(in_t *x) {
  ballast__rbuf_t r = {x->desc, x->desc + x->desc_len, 0};
  x->v = ballast__get_i64(&r);
  x->user_bytes = (size_t)ballast__get_i64(&r);
  x->arr_bytes = (size_t)ballast__get_i64(&r);
  x->raw = (int)ballast__get_i32(&r);
  x->raw_elem = (int)ballast__get_i32(&r);
  x->raw_ndims = (int)ballast__get_i32(&r);
  x->lead = (int)ballast__get_i32(&r);
  if (x->raw_ndims < 0 || x->raw_ndims > RTA_MAX_DIMS)
    return BALLAST_ESIZE;
  memset(x->raw_dims, 0, sizeof x->raw_dims);
  for (int d = 0; d < x->raw_ndims; d++)
    x->raw_dims[d] = ballast__get_i64(&r);
  x->head_bytes = (size_t)ballast__get_i64(&r);
  x->stage = ballast__get_i64(&r);
  x->desc_body = (size_t)(r.p - x->desc);
  return r.bad ? BALLAST_ESIZE : 0;
}

/* The parent of an arriving task, defined here (with default parameters,
 * each missing level under the nearest ancestor that exists, in its last
 * stage) when this
 * process does not have it; what was defined is recorded in c->made so a
 * rollback removes it. \a key is the parent's key (modified and restored). */
static int find_or_make_parent(mctx_t *c, char *key, rta_task_t **out) {
  if (rta_task_find(key, out) == 0)
    return 0;
  char *slash = strrchr(key, '/');
  if (!slash) {
    BALLAST_WARN("rta: load balancing: a task arrives under \"%s\", a root "
                 "task this process does not have", key);
    return BALLAST_ENOTFOUND;
  }
  *slash = 0;
  rta_task_t *up = NULL;
  int rc = find_or_make_parent(c, key, &up);
  *slash = '/';
  if (rc)
    return rc;
  if (c->nmade == c->capmade) {
    int cap = c->capmade ? 2 * c->capmade : 8;
    rta_task_t **m = ballast__realloc(c->made, (size_t)cap * sizeof *m);
    if (!m)
      return BALLAST_ENOMEM;
    c->made = m;
    c->capmade = cap;
  }
  /* In the parent's last stage when it has one here, so a rollback leaves
   * its stage count as it was. */
  const char *name = slash + 1;
  int ns = rta_task_nstages(up);
  static const rta_task_params_t defaults = RTA_TASK_PARAMS_INIT;
  rc = ns > 0 ? task__adopt(up, name, &defaults, ns - 1, out)
              : rta_task_define(up, 1, &name, NULL, out);
  if (rc)
    return rc;
  c->made[c->nmade++] = *out;
  BALLAST_INFO("rta: load balancing: defined \"%s\" here, the parent of an "
               "arriving task", key);
  return 0;
}

/* Defines the arriving task from its descriptor, in its stage under its
 * parent when the parent has that stage here, else in a new stage. */
static int define_arrival(mctx_t *c, in_t *x) {
  ballast__rbuf_t r = {x->desc + x->desc_body, x->desc + x->desc_len, 0};
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.nprocs = (int)ballast__get_i32(&r);
  int64_t ncomm = ballast__get_i32(&r);
  p.est_work = ballast__get_f64(&r);
  p.state_size = (size_t)ballast__get_i64(&r);
  if (r.bad || ncomm < 0 || ncomm > (int64_t)x->desc_len)
    return BALLAST_ESIZE;
  /* Partners into the scratch (no allocation) unless they are many. */
  rta_comm_est_t *ce = NULL;
  if (ncomm > SCRATCH_PARTNERS)
    ce = ballast__calloc((size_t)ncomm, sizeof *ce);
  else if (ncomm > 0)
    ce = (rta_comm_est_t *)(void *)(c->samples + MAX_SAMPLES);
  double *s = c->samples;
  char key[RTA_KEY_MAX + 1];
  int rc = (ncomm && !ce) || !s ? BALLAST_ENOMEM : 0;
  for (int64_t k = 0; !rc && k < ncomm; k++) {
    ce[k].key = ballast__get_str(&r); /* into the descriptor: copied at definition */
    ce[k].bytes = ballast__get_f64(&r);
  }
  int64_t ns = rc ? 0 : ballast__get_i64(&r);
  long long total = rc ? 0 : (long long)ballast__get_i64(&r);
  if (ns < 0 || ns > MAX_SAMPLES)
    r.bad = 1;
  for (int64_t i = 0; !rc && !r.bad && i < ns; i++)
    s[i] = ballast__get_f64(&r);
  size_t klen = rc ? 0 : get_key(&r, key);
  if (!rc && r.bad)
    rc = BALLAST_ESIZE;
  p.ncomm = (int)ncomm;
  p.comm = ce;
  char *slash = NULL; /* the key's last '/', found from its end */
  for (size_t i = klen; !rc && !slash && i > 0; i--)
    if (key[i - 1] == '/')
      slash = key + i - 1;
  rta_task_t *parent = NULL;
  if (!rc && !slash) {
    BALLAST_WARN("rta: load balancing: root task \"%s\" cannot move", key);
    rc = BALLAST_EINVAL;
  }
  if (!rc) {
    size_t plen = (size_t)(slash - key);
    if (c->parent && c->parent_len == plen &&
        memcmp(rta_task_key(c->parent), key, plen) == 0) {
      parent = c->parent;
    } else {
      *slash = 0;
      rc = find_or_make_parent(c, key, &parent);
      *slash = '/';
      c->parent = parent;
      c->parent_len = plen;
    }
  }
  if (!rc) {
    const char *name = slash + 1;
    if (x->stage >= 0 && x->stage < rta_task_nstages(parent))
      rc = task__adopt_hashed(parent, name, &p, (int)x->stage, x->hkey,
                              x->hash, &x->t);
    else
      rc = rta_task_define(parent, 1, &name, &p, &x->t);
  }
  if (!rc)
    rc = task__cost_restore(x->t, s, (int)ns, total);
  if (ncomm > SCRATCH_PARTNERS)
    free(ce);
  return rc;
}

/* ---- engine operations --------------------------------------------------------- */

/* Head and tail bytes of a state on the wire, its descriptor left out
 * (both sides agree on them). */
static void wire_sizes(int raw, size_t user_bytes, size_t arr_bytes,
                       size_t head_bytes, size_t *head, size_t *tail) {
  *head = raw ? arr_bytes : head_bytes;
  *tail = raw ? 0 : ballast__round8(user_bytes) + arr_bytes;
}

static int op_size(void *vc, int64_t v, size_t *head, size_t *tail) {
  mctx_t *c = vc;
  const out_t *o = &c->out[c->out_of[v]];
  wire_sizes(o->raw, o->user_bytes, o->arr_bytes, o->head_bytes, head, tail);
  return 0;
}

/* The departure's descriptor, sent with the engine's headers. */
static int op_meta(void *vc, int64_t v, const void **ptr, size_t *len) {
  mctx_t *c = vc;
  const out_t *o = &c->out[c->out_of[v]];
  *ptr = c->desc.p + o->doff;
  *len = o->dlen;
  return 0;
}

static int op_head(void *vc, int64_t v, const void **ptr) {
  mctx_t *c = vc;
  int64_t i = c->out_of[v];
  const out_t *o = &c->out[i];
#if defined(__GNUC__)
  /* The engine asks in the departures' order; the application's pointer to
   * a later one's array is cold. */
  if (i + 8 < c->nout && c->out[i + 8].raw_slot)
    __builtin_prefetch(c->out[i + 8].raw_slot);
#endif
  void **slot = o->raw_slot;
  if (!o->raw && rta_task_array(o->t, o->lead, &slot) != 0)
    return BALLAST_EINVAL;
  if (!slot || !*slot)
    return BALLAST_EINVAL;
  *ptr = *slot;
  return 0;
}

static int op_pack(void *vc, int64_t v, void *buf, size_t bytes) {
  mctx_t *c = vc;
  out_t *o = &c->out[c->out_of[v]];
  if (o->raw) /* no tail: the engine does not ask */
    return BALLAST_ESIZE;
  unsigned char *p = buf;
  if (bytes < ballast__round8(o->user_bytes))
    return BALLAST_ESIZE;
  if (o->user_bytes > 0) {
    if (o->ops.pack(o->t, p, o->user_bytes, o->user) != 0) {
      BALLAST_WARN("rta: load balancing: the pack callback of \"%s\" failed",
                   rta_task_key(o->t));
      return BALLAST_ECALLBACK;
    }
    memset(p + o->user_bytes, 0, ballast__round8(o->user_bytes) - o->user_bytes);
  }
  size_t off = ballast__round8(o->user_bytes), used = 0;
  int rc = task__arrays_pack_lead(o->t, o->lead, p + off, bytes - off, &used);
  if (rc)
    return rc;
  return used == o->arr_bytes ? 0 : BALLAST_ESIZE;
}

static void drop_arrival(in_t *x) {
  if (!x->t)
    return;
  task__free_arrays(x->t);
  if (x->unpacked && x->ops.release)
    x->ops.release(x->t, x->user);
  rta_task_remove(x->t);
  x->t = NULL;
  x->unpacked = 0;
}

/* The arrival's descriptor, from the engine's headers: read, and checked
 * against what the engine announced (the task, its source, the sizes). */
static int read_arrival(in_t *x, int64_t v, int src, const void *desc,
                        size_t dlen, size_t hbytes, size_t tbytes) {
  if (x->desc || src != x->src)
    return BALLAST_ESIZE;
  x->desc = desc;
  x->desc_len = dlen;
  int rc = read_head(x);
  if (rc || x->v != v)
    return BALLAST_ESIZE;
  size_t wh, wt;
  wire_sizes(x->raw, x->user_bytes, x->arr_bytes, x->head_bytes, &wh, &wt);
  if (wh != hbytes || wt != tbytes || (x->lead >= 0) != (!x->raw && hbytes > 0))
    return BALLAST_ESIZE;
  return 0;
}

/* An arrival announced by the engine with its descriptor, before any state
 * moves: its descriptor's fixed part is read and checked now, a mismatch
 * refused before a byte of state travels. */
static int op_announce(void *vc, int64_t v, int src, const void *desc,
                       size_t dlen, size_t hbytes, size_t tbytes) {
  mctx_t *c = vc;
  if (v < 0 || v >= rta_mapping_ntasks(c->m) || c->in_of[v] < 0)
    return BALLAST_ESIZE;
  return read_arrival(&c->in[c->in_of[v]], v, src, desc, dlen, hbytes, tbytes);
}

static int op_unpack(void *vc, int64_t v, int src, void **head, size_t hbytes,
                     const void *wtail, size_t tbytes) {
  mctx_t *c = vc;
  if (v < 0 || v >= rta_mapping_ntasks(c->m) || c->in_of[v] < 0)
    return BALLAST_ESIZE;
  in_t *x = &c->in[c->in_of[v]];
  /* The engine unpacks in the order of c->in (by source, then vertex): the
   * index's slot of a later arrival is asked for now, its miss overlapping
   * this one's. */
  int64_t ahead = c->in_of[v] + 4;
  if (ahead < c->nin) {
    in_t *a = &c->in[ahead];
    a->hkey = rta_mapping_key(c->m, a->v);
    a->hash = task__index_prefetch_key(a->hkey);
  }
  size_t wh, wt;
  wire_sizes(x->raw, x->user_bytes, x->arr_bytes, x->head_bytes, &wh, &wt);
  if (!x->desc || x->arrived || src != x->src || wh != hbytes || wt != tbytes)
    return BALLAST_ESIZE;
  x->arrived = 1;
  const unsigned char *tail = wtail;
  int rc = define_arrival(c, x);
  if (rc)
    return rc;
  int has_ops = rta_task_serial(x->t, &x->ops, &x->user) == 0;
  if (x->user_bytes > 0 && (!has_ops || !x->ops.unpack)) {
    BALLAST_WARN("rta: load balancing: task \"%s\" arrives with %zu bytes of "
                 "callback state but no unpack callback serves it here",
                 rta_task_key(x->t), x->user_bytes);
    drop_arrival(x);
    return BALLAST_ECALLBACK;
  }
  if (has_ops && x->ops.unpack) {
    task__arriving(x->t, 1);
    int urc = x->ops.unpack(x->t, tail, x->user_bytes, x->user);
    task__arriving(x->t, 0);
    if (urc != 0) {
      BALLAST_WARN("rta: load balancing: the unpack callback of \"%s\" failed",
                   rta_task_key(x->t));
      drop_arrival(x);
      return BALLAST_ECALLBACK;
    }
    x->unpacked = 1;
  }
  /* Arrays nobody registered a receiver for (no unpack callback, or one
   * that registers none): rta holds them itself (rta_task_array()). */
  if ((x->raw || x->arr_bytes > 8) && rta_task_narrays(x->t) == 0) {
    rc = x->raw ? task__arrays_own(x->t, NULL, 0, -1, x->raw_elem, x->raw_ndims,
                                   x->raw_dims)
                : task__arrays_own(x->t, tail + ballast__round8(x->user_bytes),
                                   x->arr_bytes, x->lead, 0, 0, NULL);
    if (rc) {
      drop_arrival(x);
      return rc;
    }
  }
  if (x->raw) {
    rc = task__adopt_array(x->t, x->raw_elem, x->raw_ndims, x->raw_dims,
                             *head, hbytes);
    if (!rc)
      *head = NULL; /* adopted: it is the task's array now */
  } else {
    size_t used = 0, off = ballast__round8(x->user_bytes);
    rc = task__arrays_unpack_lead(x->t, tail + off, x->arr_bytes, &used, x->lead,
                                  *head, hbytes);
    if (!rc && x->lead >= 0)
      *head = NULL; /* adopted by the lead array */
  }
  if (rc)
    drop_arrival(x);
  return rc;
}

/* The tools interface's task_move, on both ranks of a committed move;
 * \a from and \a to are ranks of the context's base communicator. */
static void move_event(const mctx_t *c, const rta_task_t *t, int from, int to,
                       uint64_t bytes) {
  int r[2] = {from, to}, w[2] = {-1, -1};
  MPI_Group g, world;
  if (MPI_Comm_group(c->base, &g) == MPI_SUCCESS) {
    if (MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
      MPI_Group_translate_ranks(g, 2, r, world, w);
      MPI_Group_free(&world);
    }
    MPI_Group_free(&g);
  }
  ballast_tool_task_move_t ev = {.t_ns = tool__now(), .key = rta_task_key(t),
                                 .from = w[0], .to = w[1], .bytes = bytes};
  tool__emit_task_move(&ev);
}

/* A departed array's memory, for the next arrivals (task__give_arrays):
 * below MIG__POOL_MIN listed, and given to the pool after the engine in
 * address order (give_gifts); given at once when large or when the list
 * cannot grow. */
static void give_to_pool(void *vc, void *mem, size_t bytes) {
  mctx_t *c = vc;
  if (bytes >= MIG__POOL_MIN) {
    /* A large block spans its own pages: its order buys nothing, and
     * given after the engine (past the pool's new bound) it was evicted
     * and unmapped more (256 x 1 MiB: commit and tree 0.41 -> 0.55 us a
     * task). */
    mig__pool_give(c->pool, mem, bytes);
    return;
  }
  if (c->ngifts == c->capgifts) {
    /* Most departures give one array: room for one each at first, and as
     * much again for sorting them (give_gifts). */
    int cap = c->capgifts ? 2 * c->capgifts : c->nout + 16;
    struct gift *g = ballast__realloc(c->gifts, 2 * (size_t)cap * sizeof *g);
    if (!g) {
      mig__pool_give(c->pool, mem, bytes);
      return;
    }
    c->gifts = g;
    c->capgifts = cap;
  }
  c->gifts[c->ngifts++] = (struct gift){mem, bytes};
}

static int cmp_gift(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const struct gift *)a)->mem;
  uintptr_t y = (uintptr_t)((const struct gift *)b)->mem;
  return x < y ? -1 : x > y;
}

/* Sorts the gifts by the 4 KiB page they start in (the pool keeps blocks
 * of 4 KiB and more, so theirs differ; smaller ones, freed by the pool, keep
 * their order within a page): a radix sort of the pages' offsets from the
 * lowest (two digits of 11 bits: a span of 16 GiB) through \a tmp (room
 * for n); qsort beyond that span or for a few gifts. glibc's merge sort of
 * a remap's 2,048 gifts was a fifth of the move's tree phase at 4 KiB. */
static void sort_gifts(struct gift *g, struct gift *tmp, int n) {
  enum { BITS = 11, DIGITS = 2, RADIX = 1 << BITS, PAGE = 12 };
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < n; i++) {
    uintptr_t a = (uintptr_t)g[i].mem;
    lo = a < lo ? a : lo;
    hi = a > hi ? a : hi;
  }
  if (!tmp || n < 256 || ((hi - lo) >> PAGE) >> (BITS * DIGITS)) {
    qsort(g, (size_t)n, sizeof *g, cmp_gift);
    return;
  }
  static unsigned count[RADIX]; /* lb runs on one thread */
  struct gift *from = g, *to = tmp;
  for (int d = 0; d < DIGITS; d++) {
    int shift = PAGE + d * BITS;
    memset(count, 0, sizeof count);
    for (int i = 0; i < n; i++)
      count[(((uintptr_t)from[i].mem - lo) >> shift) & (RADIX - 1)]++;
    unsigned sum = 0;
    for (int k = 0; k < RADIX; k++) {
      unsigned c = count[k];
      count[k] = sum;
      sum += c;
    }
    for (int i = 0; i < n; i++)
      to[count[(((uintptr_t)from[i].mem - lo) >> shift) & (RADIX - 1)]++] = from[i];
    struct gift *x = from;
    from = to;
    to = x;
  }
  if (from != g) /* an odd number of digits: the result is in tmp */
    memcpy(g, from, (size_t)n * sizeof *g);
}

/* The departed arrays' memory to the pool, highest address first: the pool
 * hands out the last block given of a size first, so the next remap's
 * arrivals, which take blocks in their order (by source, then vertex: key
 * order), receive them in address order. Given in the departures' order
 * instead, each remap handed the blocks out reversed and interleaved with
 * those of the tasks that stayed: after a few remaps the states of
 * neighbouring keys lay pages apart (the exchange reads and writes them in
 * key order). Not sorted when already in order. */
static void give_gifts(mctx_t *c) {
  int sorted = 1;
  for (int i = 1; i < c->ngifts && sorted; i++)
    sorted = (uintptr_t)c->gifts[i - 1].mem <= (uintptr_t)c->gifts[i].mem;
  if (!sorted)
    sort_gifts(c->gifts, c->gifts + c->capgifts, c->ngifts);
  for (int i = c->ngifts - 1; i >= 0; i--)
    mig__pool_give(c->pool, c->gifts[i].mem, c->gifts[i].bytes);
  free(c->gifts);
  c->gifts = NULL;
  c->ngifts = c->capgifts = 0;
}

static void op_finish(void *vc, int64_t v, int outgoing, int outcome) {
  mctx_t *c = vc;
  if (outgoing) /* the engine finishes the departures in their order */
    prefetch_out(c, (int)c->out_of[v]);
  if (outcome == MIG__COMMIT && TOOL__ON(TOOL__EV_TASK_MOVE)) {
    size_t head, tail;
    if (outgoing) {
      const out_t *o = &c->out[c->out_of[v]];
      wire_sizes(o->raw, o->user_bytes, o->arr_bytes, o->head_bytes, &head, &tail);
      if (o->t && !o->gone)
        move_event(c, o->t, c->rank, o->dest, head + tail);
    } else {
      const in_t *x = &c->in[c->in_of[v]];
      wire_sizes(x->raw, x->user_bytes, x->arr_bytes, x->head_bytes, &head, &tail);
      if (x->t)
        move_event(c, x->t, x->src, c->rank, head + tail);
    }
  }
  if (outgoing) {
    out_t *o = &c->out[c->out_of[v]];
    if (outcome != MIG__COMMIT || !o->t || o->gone)
      return;
    /* Arrays first: a release() that frees the structure holding the
     * application's pointers must not leave rta writing through them. The
     * memory of arrays of ballast element types goes to the pool (touched
     * memory for the next arrivals), the rest is freed. */
    task__give_arrays(o->t, give_to_pool, c);
    if (o->has_ops && o->ops.release)
      o->ops.release(o->t, o->user);
    o->gone = 1; /* removed with the others once the engine is done */
  } else {
    in_t *x = &c->in[c->in_of[v]];
    if (outcome != MIG__COMMIT)
      drop_arrival(x);
  }
}

/* This rank's code of describing the departures (move_describe), agreed by
 * the engine with its sizes. */
static int op_start(void *vc) {
  const mctx_t *c = vc;
  return c->err;
}

/* ---- the move ------------------------------------------------------------------------ */

/* One move, in phases: allocate, describe the departures and list the
 * arrivals, move the states (the engine's commit point), clean up. */
typedef struct {
  rta_lb_context_t *ctx;
  rta_mapping_t *m;                /* the new mapping (c.m), kept current */
  const int *slot;
  mctx_t c;
  mig__move_t *moves;
  rta_task_t **gone;               /* room for the departures' removal */
  int64_t *arrv;                   /* the arrivals' vertices, vertex order */
  int who, code;                   /* the failing rank and its code, -1 none */
  double tm0, tm1, tm2;
} move_t;

/* \a need bytes of the context's scratch \a *mem (\a *bytes of it), kept
 * from remap to remap (a quarter more than asked, as the next remap's
 * counts differ a little); NULL without memory (the old kept). Records
 * allocated afresh per remap were pages faulted in or cache lines missed
 * on first touch: the departures' records, room for every vertex (150
 * bytes a task, 1.2 MiB at 8,192 tasks) copied twice by a counting sort,
 * were 8% of the move's own samples at 4,096 x 4 KiB. What the scratch
 * held before does not matter, so a remap that fails leaves nothing to
 * undo there. */
static void *scratch(void **mem, size_t *bytes, size_t need) {
  need = need ? need : 1;
  if (*bytes < need) {
    size_t n = need + need / 4;
    void *p = ballast__malloc(n);
    if (!p)
      return NULL;
    free(*mem);
    *mem = p;
    *bytes = n;
  }
  return *mem;
}

/* Every allocation of the move whose size is known in advance. */
static int move_alloc(move_t *s) {
  size_t n = (size_t)rta_mapping_ntasks(s->c.m);
  n = n ? n : 1;
  s->c.out_of = ballast__malloc(n * sizeof *s->c.out_of);
  s->c.in_of = ballast__malloc(n * sizeof *s->c.in_of);
  s->arrv = ballast__malloc(n * sizeof *s->arrv);
  s->moves = ballast__malloc(n * sizeof *s->moves);
  s->gone = ballast__malloc(n * sizeof *s->gone);
  s->c.samples = ballast__malloc(MAX_SAMPLES * sizeof *s->c.samples +
                                 SCRATCH_PARTNERS * sizeof(rta_comm_est_t));
  if (!s->c.out_of || !s->c.in_of || !s->arrv || !s->moves ||
      !s->gone || !s->c.samples)
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < rta_mapping_ntasks(s->c.m); v++)
    s->c.out_of[v] = s->c.in_of[v] = -1;
  return 0;
}

/* The tasks that arrive here, listed by move_describe's pass over the
 * mapping (s->arrv, vertex order): put in the order the engine hands them
 * over, by source, each source's in vertex order (the order it sends them
 * in, place_departures). */
static int order_arrivals(move_t *s) {
  int np = s->ctx->size, nin = s->c.nin;
  int *start = ballast__calloc((size_t)np + 1, sizeof *start);
  rta_lb_context_t *ctx = s->ctx;
  s->c.in = scratch(&ctx->move_in, &ctx->move_in_bytes,
                    (size_t)nin * sizeof *s->c.in);
  if (!start || !s->c.in) {
    free(start);
    s->c.in = NULL;
    return BALLAST_ENOMEM;
  }
  memset(s->c.in, 0, (size_t)nin * sizeof *s->c.in);
  for (int i = 0; i < nin; i++)
    start[rta_mapping_owner(s->c.m, s->arrv[i]) + 1]++;
  for (int p = 0; p < np; p++)
    start[p + 1] += start[p];
  for (int i = 0; i < nin; i++) {
    int64_t v = s->arrv[i];
    int owner = rta_mapping_owner(s->c.m, v);
    int k = start[owner]++;
    s->c.in[k].v = v;
    s->c.in[k].src = owner;
    s->c.in_of[v] = k;
  }
  free(start);
  return 0;
}

/* Room for \a nout departures' records. */
static int out_room(move_t *s, int nout) {
  rta_lb_context_t *ctx = s->ctx;
  s->c.out = scratch(&ctx->move_out, &ctx->move_out_bytes,
                     (size_t)nout * sizeof *s->c.out);
  return s->c.out ? 0 : BALLAST_ENOMEM;
}

/* The departures listed in s->moves (vertex order, which is key order:
 * rta_mapping_key) into their records, ordered by destination, each
 * destination's in key order: counted per destination, then each record
 * written once at its place. */
static int place_departures(move_t *s, int nout) {
  const rta_mapping_t *m = s->c.m;
  int np = s->ctx->size;
  int *start = ballast__calloc((size_t)np + 1, sizeof *start);
  int rc = start ? out_room(s, nout) : BALLAST_ENOMEM;
  for (int i = 0; !rc && i < nout; i++)
    start[s->moves[i].dest + 1]++;
  for (int p = 0; !rc && p < np; p++)
    start[p + 1] += start[p];
  for (int i = 0; !rc && i < nout; i++) {
    int64_t v = s->moves[i].task;
    /* The gather listed this process's tasks: no lookup by key. */
    rta_task_t *t = task__mapping_task(m, v);
    if (!t && rta_task_find(rta_mapping_key(m, v), &t) != 0)
      rc = BALLAST_ENOTFOUND;
    int k = start[s->moves[i].dest]++;
    s->c.out[k] = (out_t){.t = t, .v = v, .dest = s->moves[i].dest};
    s->c.out_of[v] = k;
  }
  free(start);
  s->c.nout = rc ? 0 : nout;
  return rc;
}

/* What leaves this rank, in destination order, described (sizes asked now),
 * and what arrives. */
static int move_describe(move_t *s) {
  const rta_mapping_t *m = s->c.m;
  int me = s->ctx->rank, np = s->ctx->size;
  int64_t n = rta_mapping_ntasks(m);
  /* One pass over the mapping lists both sides (the mapping's accessors
   * were a third of describing's samples at 4,096 x 4 KiB). */
  int nin = 0, nout = 0;
  for (int64_t v = 0; v < n; v++) {
    if (rta_mapping_nprocs(m, v) != 1)
      continue;
    int owner = rta_mapping_owner(m, v);
    if (owner != me) {
      if (s->slot[v] == me && owner >= 0 && owner < np)
        s->arrv[nin++] = v;
      continue;
    }
    if (s->slot[v] != me)
      s->moves[nout++] = (mig__move_t){.task = v, .dest = s->slot[v]};
  }
  int err = place_departures(s, nout);
  ballast__wbuf_t *b = &s->c.desc;
  for (int i = 0; !err && i < s->c.nout; i++) {
    prefetch_out(&s->c, i);
    out_t *o = &s->c.out[i];
    o->doff = b->n;
    err = describe(o, o->v, b);
    o->dlen = b->n - o->doff;
  }
  s->c.nin = err ? 0 : nin;
  return err ? err : order_arrivals(s);
}

/* The states, through the engine: commits or rolls back everywhere. */
static void move_states(move_t *s, lb__move_result_t *res) {
  rta_lb_context_t *ctx = s->ctx;
  s->tm2 = MPI_Wtime();
  for (int i = 0; i < s->c.nout; i++) {
    s->moves[i].task = s->c.out[i].v;
    s->moves[i].dest = s->c.out[i].dest;
  }
  /* op_unpack adopts every head: by default (mem_limit 0) the rounds do
   * not count batched heads, only staging and heads of their own message;
   * an explicit mem_limit bounds every byte received per round (rta_lb.h). */
  const mig__ops_t ops = {op_size,   op_head,   op_pack,
                          op_unpack, op_finish, op_start,
                          ctx->cfg.mem_limit == 0, op_meta, op_announce};
  task__slab_open(); /* the arrivals' records; closed in move_cleanup */
  mig__stats_t st;
  int rc = mig__run(ctx->base, s->moves, s->c.nout, &ops, &s->c,
                        ctx->cfg.mem_limit, ctx->pool, &st);
  s->who = st.failed_rank;
  s->code = st.failed_code;
  size_t held;
  int blocks;
  long long hits, misses;
  mig__pool_info(ctx->pool, &held, &blocks, &hits, &misses);
  BALLAST_DEBUG("rta: migration: %lld tasks out, %lld in (%lld read from the "
                "sources' memory); describing %.3f ms, states %.3f ms; pool %zu "
                "bytes in %d blocks, %lld hits, %lld misses so far",
                (long long)st.tasks_sent, (long long)st.tasks_received,
                (long long)st.heads_read, (s->tm1 - s->tm0) * 1e3, st.seconds * 1e3,
                held, blocks, hits, misses);
  for (int k = 0; k < MIG__PH_NPHASES; k++)
    ctx->move_phase[LB__PH_PLAN + k] += st.phase[k];
  if (!rc) {
    /* The states' bytes only (wire_sizes leaves the descriptors out): the
     * figure weighs the application's state, not the wire format. */
    res->tasks = st.tasks_sent;
    for (int i = 0; i < s->c.nout; i++) {
      const out_t *o = &s->c.out[i];
      size_t head, tail;
      wire_sizes(o->raw, o->user_bytes, o->arr_bytes, o->head_bytes, &head, &tail);
      res->bytes += head + tail;
    }
  }
}

/* After the engine: committed departures leave the task tree together (one
 * pass over each parent's children, not one scan per task: thousands of
 * small tasks), into room allocated before the commit; a rollback removes
 * the parents this move defined (the arrivals under them are gone),
 * deepest first. Then everything is freed. Cannot fail. */
static void move_cleanup(move_t *s) {
  task__slab_close();
  give_gifts(&s->c);
  int ngone = 0;
  for (int i = 0; i < s->c.nout; i++)
    if (s->c.out[i].gone) {
      s->gone[ngone++] = s->c.out[i].t;
      s->c.out[i].t = NULL;
      task__mapping_set_task(s->m, s->c.out[i].v, NULL);
    }
  /* The mapping names the arrivals' tasks too, for the local list after a
   * commit (a rollback discards the mapping). */
  for (int i = 0; s->who < 0 && i < s->c.nin; i++)
    task__mapping_set_task(s->m, s->c.in[i].v, s->c.in[i].t);
  if (ngone > 0)
    task__remove_tasks(s->gone, ngone);
  for (int i = s->c.nmade - 1; s->who >= 0 && i >= 0; i--)
    if (rta_task_nchildren(s->c.made[i]) == 0)
      rta_task_remove(s->c.made[i]);
  free(s->c.made);
  free(s->c.samples);
  free(s->moves);
  free(s->gone);
  free(s->arrv);
  /* The descriptors' buffer goes back to the context: grown by doubling
   * from nothing it was copied ten times per remap, and with the arrivals'
   * records allocated afresh it made describing 0.19-0.29 us per task
   * moved at 4,096 x 4 KiB, kept 0.17-0.19. Not beyond DESC_KEEP (tasks
   * of a thousand cost samples carry 8 KiB each). */
  enum { DESC_KEEP = 16 << 20 };
  if (s->c.desc.cap > DESC_KEEP) {
    free(s->c.desc.p);
    s->c.desc = (ballast__wbuf_t){NULL, 0, 0, 0};
  }
  s->ctx->move_desc = s->c.desc.p;
  s->ctx->move_desc_bytes = s->c.desc.cap;
  free(s->c.out_of);
  free(s->c.in_of);
}

int lb__move(rta_lb_context_t *ctx, rta_mapping_t *m,
             const int *slot, lb__move_result_t *res) {
  memset(res, 0, sizeof *res);
  res->failed_rank = -1;
  if (!ctx->pool)
    ctx->pool = mig__pool_create(ctx->cfg.mem_limit); /* NULL: no cache */
  move_t s = {.ctx = ctx, .m = m, .slot = slot, .who = -1};
  s.c.m = m;
  s.c.pool = ctx->pool;
  s.c.base = ctx->base;
  s.c.rank = ctx->rank;
  s.c.desc = (ballast__wbuf_t){ctx->move_desc, 0, ctx->move_desc_bytes, 0};
  s.tm0 = s.tm1 = s.tm2 = MPI_Wtime();
  int err = move_alloc(&s);
  ballast__lib_begin();
  if (!err)
    err = move_describe(&s);
  s.c.err = err ? err : (s.c.desc.oom ? BALLAST_ENOMEM : 0);
  s.tm1 = MPI_Wtime();
  move_states(&s, res); /* agrees on every rank's code of describing first */
  double t3 = MPI_Wtime();
  move_cleanup(&s);
  ballast__lib_end();
  double *ph = ctx->move_phase;
  ph[LB__PH_DESCRIBE] += s.tm1 - s.tm0;
  ph[LB__PH_DESCRIPTORS] += s.tm2 - s.tm1;
  ph[LB__PH_TREE] += MPI_Wtime() - t3;
  res->failed_rank = s.who;
  res->failed_code = s.code;
  if (s.who < 0)
    return 0;
  return s.who == ctx->rank ? s.code : BALLAST_EREMOTE;
}
