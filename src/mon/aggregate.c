/*
 * Running aggregates and the recording hot path.
 *
 * mon__record updates, for the calling thread only:
 *  - the whole-run aggregate of the activity (t->act) and the distribution
 *    of its call durations (t->actdist, common/dist.h);
 *  - the activity's aggregate in the innermost open region ("self": calls
 *    made while that region was the innermost one). The block of MON__NACT
 *    aggregates of a region is allocated the first time the thread makes an
 *    MPI call in it, so regions without MPI calls cost nothing here;
 *  - the thread's running MPI time t->mpi_ticks. Regions take the difference
 *    of this counter between their begin and end, which makes region MPI time
 *    inclusive (children included) at O(1) per call and per region;
 *  - the signature table and, for point-to-point and one-sided messages with
 *    a partner, the partner matrix (collectives keep their root in the
 *    signature only). A message is counted there once, empty ones too (MPI
 *    counts them): at the call that moved it, or for a request at its
 *    completion (mon__account), as the spec's generator says
 *    (mon__act_msg).
 * Inside the library's own traffic (ballast__lib_depth() > 0) only t->lib is
 * updated: those calls never reach the application's figures.
 *
 * Reads sum the per-thread aggregates (O(threads)); a group is the sum of its
 * member activities (O(MON__NACT x threads), independent of regions and
 * signatures).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"
#include "mon/wrap_internal.h"

#undef uthash_fatal
#define uthash_fatal(msg) abort()
#include <uthash.h>

void mon__agg_reset(mon__agg_t *a, int n) {
  for (int i = 0; i < n; i++) {
    a[i].ncalls = a[i].nbytes = a[i].tsum = a[i].tmax = 0;
    a[i].tmin = UINT64_MAX;
  }
}

static inline void agg_add(mon__agg_t *a, uint64_t calls, uint64_t bytes,
                           uint64_t ticks) {
  MON__ADD(&a->nbytes, bytes);
  if (!calls)
    return;
  MON__ADD(&a->tsum, ticks);
  if (ticks < MON__LD(&a->tmin))
    MON__ST(&a->tmin, ticks);
  if (ticks > MON__LD(&a->tmax))
    MON__ST(&a->tmax, ticks);
  /* The count last, with release (a plain store on x86): a reader that sees
   * the count (acquire) sees the times of those calls too, never the empty
   * record's tmin = UINT64_MAX with ncalls > 0. */
  __atomic_store_n(&a->ncalls, MON__LD(&a->ncalls) + calls, __ATOMIC_RELEASE);
}

/* ---- activity x region blocks ---------------------------------------------- */

mon__agg_t *mon__regact_get(mon__tls_t *t, int region) {
  if (region == t->last_regact_id)
    return t->last_regact;
  int c = region >> MON__CHUNK_BITS, s = region & (MON__CHUNK - 1);
  mon__agg_t **chunk = t->regact[c];
  if (!chunk) {
    chunk = calloc(MON__CHUNK, sizeof *chunk);
    if (!chunk)
      return NULL;
    MON__STREL(&t->regact[c], chunk);
  }
  mon__agg_t *blk = chunk[s];
  if (!blk) {
    blk = malloc(MON__NACT * sizeof *blk);
    if (!blk)
      return NULL;
    mon__agg_reset(blk, MON__NACT);
    MON__STREL(&chunk[s], blk);
  }
  t->last_regact_id = region;
  t->last_regact = blk;
  return blk;
}

void mon__regact_free(mon__tls_t *t) {
  for (int c = 0; c < MON__MAX_CHUNKS; c++) {
    if (!t->regact[c])
      continue;
    for (int s = 0; s < MON__CHUNK; s++)
      free(t->regact[c][s]);
    free(t->regact[c]);
    t->regact[c] = NULL;
  }
  t->last_regact_id = -1;
  t->last_regact = NULL;
}

static const mon__agg_t *regact_peek(const mon__tls_t *t, int region) {
  mon__agg_t **chunk = MON__LDACQ(&t->regact[region >> MON__CHUNK_BITS]);
  return chunk ? MON__LDACQ(&chunk[region & (MON__CHUNK - 1)]) : NULL;
}

/* ---- hot path ---------------------------------------------------------------- */

/* What each activity's partner means for the partner matrix, filled by
 * mon__acts_init (MPI_Init): P_NONE for collectives and local calls (their
 * root stays in the signature only), P_SEND / P_RECV for point-to-point and
 * one-sided calls. */
enum { P_NONE = 0, P_SEND = 1, P_RECV = 2 };
static unsigned char act_dir[MON__NACT];     /* mon__record */
static unsigned char act_dir_acc[MON__NACT]; /* mon__account */

void mon__record(mon__tls_t *t, int act, int partner, uint64_t bytes,
                 uint64_t ticks) {
  if ((unsigned)act >= (unsigned)MON__NACT)
    return;
  if (ballast__tl_lib_depth) {
    agg_add(&t->lib[act], 1, bytes, ticks);
    return;
  }
  int region = t->cur_region;
  uint64_t program_ticks = ticks;
  if (__builtin_expect(act == MON_ACT_MPI_Init || act == MON_ACT_MPI_Init_thread, 0)) {
    /* The run's wall clock starts where MPI_Init started, as IPM's does, so
     * the time spent in MPI_Init is inside the wall time it is part of. It
     * is not the program's MPI time, though (a start-up cost the program
     * cannot change): its own activity shows it, reported apart. */
    if (ticks < mon__cfg.t_init)
      MON__ST(&mon__cfg.t_init, mon__cfg.t_init - ticks);
    program_ticks = 0;
  }
  agg_add(&t->act[act], 1, bytes, ticks);
  ballast__dist_add(&t->actdist[act], mon__dur_ns(ticks));
  mon__agg_t *blk = mon__regact_get(t, region);
  if (blk)
    agg_add(&blk[act], 1, bytes, ticks);
  MON__ADD(&t->mpi_ticks, program_ticks);
  mon__sig_add(t, act, region, partner, bytes, ticks, 1);
  if (partner >= 0 && act_dir[act])
    mon__partner_add(t, region, partner, bytes, act_dir[act] == P_RECV);
  /* BALLAST_PROFILE_INTERVAL (fault.c): one load and compare when unset */
  uint64_t due = MON__LD(&mon__fault_next);
  if (__builtin_expect(due != UINT64_MAX, 0)) {
    uint64_t now = mon__ticks();
    if (now >= due)
      mon__fault_tick(now);
  }
}

void mon__account(mon__tls_t *t, int act, int partner, uint64_t bytes) {
  if ((unsigned)act >= (unsigned)MON__NACT)
    return;
  /* For the tools' mpi_exit: cheaper than a branch on whether a tool listens. */
  mon__tl_credit_bytes += bytes;
  mon__tl_credit_partner =
      mon__tl_credit_n++ == 0 || mon__tl_credit_partner == partner ? partner : -1;
  if (ballast__tl_lib_depth) {
    agg_add(&t->lib[act], 0, bytes, 0);
    return;
  }
  int region = t->cur_region;
  /* An empty message changes no figure but its partner's message count. */
  if (bytes == 0) {
    if (partner >= 0 && act_dir_acc[act])
      mon__partner_add(t, region, partner, 0, act_dir_acc[act] == P_RECV);
    return;
  }
  agg_add(&t->act[act], 0, bytes, 0);
  mon__agg_t *blk = mon__regact_get(t, region);
  if (blk)
    agg_add(&blk[act], 0, bytes, 0);
  mon__sig_add(t, act, region, partner, bytes, 0, 0);
  if (partner >= 0 && act_dir_acc[act])
    mon__partner_add(t, region, partner, bytes, act_dir_acc[act] == P_RECV);
}

/* ---- activity names --------------------------------------------------------------- */

typedef struct {
  const char *name;
  int id;
  UT_hash_handle hh;
} act_name_t;

static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static act_name_t *names_hash;
static act_name_t names_entries[MON__NACT + MON__NGROUPS];

/* An activity receives data when its name says so (MPI_Recv, MPI_Irecv,
 * MPI_Mrecv, MPI_Recv_init, MPI_Imrecv ...) or it is a one-sided get.
 * MPI_Sendrecv* record their send side (mon__record) and credit their
 * receive side through mon__account. */
static int name_is_recv(const char *n) {
  char low[64];
  size_t i = 0;
  for (; n[i] && i < sizeof low - 1; i++)
    low[i] = (char)tolower((unsigned char)n[i]);
  low[i] = 0;
  if (strstr(low, "sendrecv"))
    return 0;
  if (strstr(low, "recv"))
    return 1;
  return strcmp(low, "mpi_get") == 0 || strcmp(low, "mpi_rget") == 0;
}

static void names_build(void) {
  for (int i = 0; i < MON__NACT + MON__NGROUPS; i++) {
    names_entries[i].name = mon__act_names[i];
    names_entries[i].id = i;
    act_name_t *dup = NULL;
    HASH_FIND_STR(names_hash, mon__act_names[i], dup);
    if (!dup)
      HASH_ADD_KEYPTR(hh, names_hash, names_entries[i].name,
                      strlen(names_entries[i].name), &names_entries[i]);
    if (i < MON__NACT) {
      unsigned pt = (1u << (MON_GRP_P2P - MON__NACT)) | (1u << (MON_GRP_RMA - MON__NACT));
      if (!(mon__act_groups[i] & pt))
        continue;
      int recv = name_is_recv(mon__act_names[i]);
      if (mon__act_msg[i] & MON__MSG_CALL)
        act_dir[i] = recv ? P_RECV : P_SEND;
      if (mon__act_msg[i] & MON__MSG_DONE)
        act_dir_acc[i] = recv || strstr(mon__act_names[i], "Sendrecv") ? P_RECV : P_SEND;
    }
  }
}

void mon__acts_init(void) { pthread_once(&names_once, names_build); }

int mon__act_count(void) { return MON__NACT + MON__NGROUPS; }

const char *mon__act_name(int act) {
  if (act < 0 || act >= MON__NACT + MON__NGROUPS)
    return NULL;
  return mon__act_names[act];
}

int mon__act_find(const char *name) {
  if (!name)
    return BALLAST_EINVAL;
  pthread_once(&names_once, names_build);
  act_name_t *e = NULL;
  HASH_FIND_STR(names_hash, name, e);
  return e ? e->id : BALLAST_ENOTFOUND;
}

/* ---- reads -------------------------------------------------------------------- */

static void acc_agg(mon__actstats_t *out, const mon__agg_t *a, double sec) {
  uint64_t n = __atomic_load_n(&a->ncalls, __ATOMIC_ACQUIRE); /* see agg_add */
  out->nbytes += MON__LD(&a->nbytes);
  if (!n)
    return;
  out->ncalls += n;
  out->tsum += (double)MON__LD(&a->tsum) * sec;
  double mn = (double)MON__LD(&a->tmin) * sec, mx = (double)MON__LD(&a->tmax) * sec;
  if (mn < out->tmin)
    out->tmin = mn;
  if (mx > out->tmax)
    out->tmax = mx;
}

int mon__act_read(int act, int region, mon__actstats_t *out) {
  if (!out || act < 0 || act >= MON__NACT + MON__NGROUPS)
    return BALLAST_EINVAL;
  if (region >= mon__region_count())
    return BALLAST_ENOTFOUND;
  double sec = mon__tick_seconds();
  int lo = act, hi = act + 1;
  unsigned mask = 0;
  if (act >= MON__NACT) {
    lo = 0;
    hi = MON__NACT;
    /* MON_GRP_ALL is every activity but MPI_Init, MPI_Init_thread and
     * MPI_Finalize (the generator leaves its bit off them): the program's MPI
     * time, the figure %mpi divides by the wall time. */
    mask = 1u << (act - MON__NACT);
  }
  for (const mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    const mon__agg_t *base = region < 0 ? t->act : regact_peek(t, region);
    if (!base)
      continue;
    for (int a = lo; a < hi; a++)
      if (!mask || (mon__act_groups[a] & mask))
        acc_agg(out, &base[a], sec);
  }
  return 0;
}

void mon__lib_read(int act, mon__agg_t *out) {
  mon__agg_reset(out, 1);
  for (const mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    const mon__agg_t *a = &t->lib[act];
    out->ncalls += __atomic_load_n(&a->ncalls, __ATOMIC_ACQUIRE); /* see agg_add */
    out->nbytes += MON__LD(&a->nbytes);
    out->tsum += MON__LD(&a->tsum);
    uint64_t mn = MON__LD(&a->tmin), mx = MON__LD(&a->tmax);
    if (mn < out->tmin)
      out->tmin = mn;
    if (mx > out->tmax)
      out->tmax = mx;
  }
}

int mon__act_read_region(int region, mon__actstats_t *out) {
  if (!out || region < 0 || region >= mon__region_count())
    return BALLAST_EINVAL;
  double sec = mon__tick_seconds();
  int any = 0;
  for (int a = 0; a < MON__NACT; a++)
    out[a] = (mon__actstats_t){0, 0, 0.0, INFINITY, 0.0};
  for (const mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    const mon__agg_t *base = regact_peek(t, region);
    if (!base)
      continue;
    any = 1;
    for (int a = 0; a < MON__NACT; a++)
      acc_agg(&out[a], &base[a], sec);
  }
  return any;
}
