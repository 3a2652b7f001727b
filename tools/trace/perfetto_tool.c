/*
 * The Perfetto / Chrome trace-event JSON writer, a ballast tool
 * (BALLAST_TOOLS=perfetto). It uses only the public tools interface and MPI.
 *
 * Tracks: one process per rank ("rank R", pid R), one thread track per
 * thread that raised events (tid 0 is the first, normally the main thread).
 * - regions and tasks: B/E slices (cat "region", "task"; a task's region is
 *   also a region, so a task shows as a task slice around a region slice);
 * - MPI calls lasting at least BALLAST_TRACE_MPI_MIN_US: X slices named by
 *   the function (cat "mpi", or "mpi,ballast" for ballast's own traffic),
 *   args bytes, posted_bytes, partner (world rank), comm_size, comm_id
 *   (this process's id, tool.h) and tag;
 * - remaps: B/E slices "remap <strategy>" (cat "lb") on every rank, args
 *   context and step, and just before the end an instant "remap result"
 *   with the tasks moved, bytes, mapping and migration seconds, committed;
 *
 * The B/E slices of a track nest (trace_nest_t): an E repeats its B's name,
 * category and args (readers such as speedscope match them on all three),
 * an end that would cross an open slice first ends that slice, an end of
 * nothing open is dropped, and what is open at the finalize event (tasks
 * still running, regions of other threads) ends there, innermost first.
 * - each task moved: a zero-length slice "move <key>" (cat "migration") on
 *   the rank it leaves and on the rank it reaches, joined by a flow arrow
 *   (s on the source, f on the destination, one id per task and remap);
 * - the imbalance of each judged step: a counter track "imbalance <context>"
 *   on rank 0 (steps not judged, during warm-up, have no sample), and at
 *   every decision an instant "lb decision" carrying imbalance, verdict,
 *   reason, predicted gain and remap cost.
 *
 * Each rank appends to "<trace>.part<rank>" through a buffer of
 * BALLAST_TRACE_BUFFER bytes (flushed when full; memory never grows with the
 * run). At the finalize event every rank closes its part and rank 0 merges
 * them into <trace> (perfetto_merge.c), then removes the parts unless
 * BALLAST_TRACE_KEEP_PARTS=1. A run that dies leaves its parts:
 * ballast-trace-merge <trace> merges them. Timestamps are aligned to rank
 * 0's clock (trace_common.h): the tool must be loaded on every rank, since
 * its init and finalize measure the clocks collectively.
 */
#include "perfetto_merge.h"
#include "trace_common.h"

#include <ballast/tool.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "perfetto"

typedef struct pf {
  const ballast_tool_api_v1_t *api;
  pthread_mutex_t mu;
  trace_buf_t out;
  char *path;
  int rank, size;
  int open;           /* the part is being written */
  uint64_t min_mpi_ns;
  int keep_parts, with_lib;
  MPI_Comm comm;
  trace_clock_sample_t s0;
  long remap_seq;     /* remaps seen (collective, so equal on every rank) */
  int next_tid;
  trace_nest_t *nests; /* per track (tid): the B slices open */
  int capnests;
} pf_t;

enum { S_REGION, S_TASK, S_REMAP, S_N };
static const char *const slice_cat[S_N] = {"region", "task", "lb"};

static pf_t g = {.mu = PTHREAD_MUTEX_INITIALIZER, .comm = MPI_COMM_NULL};
static int g_attached;
static _Thread_local int t_tid = -1;

/* s as the inside of a JSON string, truncated (with "...") to fit dst. */
static const char *jstr(char *dst, size_t cap, const char *s) {
  size_t o = 0;
  if (!s) s = "(null)";
  for (; *s && o + 8 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      dst[o++] = '\\';
      dst[o++] = (char)c;
    } else if (c < 0x20) {
      o += (size_t)snprintf(dst + o, cap - o, "\\u%04x", c);
    } else {
      dst[o++] = (char)c;
    }
  }
  if (*s) {
    memcpy(dst + o, "...", 3);
    o += 3;
  }
  dst[o] = '\0';
  return dst;
}

/* This thread's track; under g.mu. The first event of a thread names it. */
static int tid_locked(void) {
  if (t_tid < 0) {
    t_tid = g.next_tid++;
    trace_buf_printf(&g.out,
                     "{\"ts\":%" PRIu64 ",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                     "\"name\":\"thread_name\",\"args\":{\"name\":\"%s %d\"}}\n",
                     g.api->now_ns(), g.rank, t_tid, t_tid ? "thread" : "main", t_tid);
  }
  return t_tid;
}

/* Writes one event "{"ts":t,"ph":ph,"pid":..,"tid":..,<rest>}". */
static void emit(uint64_t t, const char *ph, const char *rest) {
  pthread_mutex_lock(&g.mu);
  if (g.open) {
    int tid = tid_locked();
    trace_buf_printf(&g.out, "{\"ts\":%" PRIu64 ",\"ph\":\"%s\",\"pid\":%d,\"tid\":%d,%s}\n", t,
                     ph, g.rank, tid, rest);
  }
  pthread_mutex_unlock(&g.mu);
}

/* The open slices of track tid (under g.mu); NULL out of memory. */
static trace_nest_t *nest_of(int tid) {
  if (tid >= g.capnests) {
    int cap = tid < 8 ? 8 : 2 * tid;
    trace_nest_t *n = realloc(g.nests, (size_t)cap * sizeof *n);
    if (!n) return NULL;
    memset(n + g.capnests, 0, (size_t)(cap - g.capnests) * sizeof *n);
    g.nests = n;
    g.capnests = cap;
  }
  return &g.nests[tid];
}

/* Writes the E of the innermost open slice of track tid at t (under g.mu). */
static void end_top(trace_nest_t *s, int tid, uint64_t t) {
  const trace_open_t *o = trace_nest_top(s);
  char n[512];
  trace_buf_printf(&g.out,
                   "{\"ts\":%" PRIu64 ",\"ph\":\"E\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\","
                   "\"name\":\"%s\"%s}\n", t, g.rank, tid, slice_cat[o->kind],
                   jstr(n, sizeof n, o->name), o->extra ? o->extra : "");
  trace_nest_pop(s);
}

/* A B slice of this kind and name; args: ",\"args\":{...}" or "", repeated
 * by its E. */
static void slice_begin(int kind, const char *name, const char *args, uint64_t t) {
  char n[512];
  pthread_mutex_lock(&g.mu);
  trace_nest_t *s;
  if (g.open && (s = nest_of(tid_locked())) && trace_nest_push(s, kind, name, args) == 0)
    trace_buf_printf(&g.out,
                     "{\"ts\":%" PRIu64 ",\"ph\":\"B\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\","
                     "\"name\":\"%s\"%s}\n", t, g.rank, t_tid, slice_cat[kind],
                     jstr(n, sizeof n, name), args);
  pthread_mutex_unlock(&g.mu);
}

/* Ends the innermost open slice of this kind and name, and first those
 * opened inside it and still open; nothing when none is open. */
static void slice_end(int kind, const char *name, uint64_t t) {
  pthread_mutex_lock(&g.mu);
  trace_nest_t *s;
  if (g.open && (s = nest_of(tid_locked()))) {
    int above = trace_nest_find(s, kind, name);
    for (int i = 0; i < above; i++) {
      s->forced++;
      end_top(s, t_tid, t);
    }
    if (above >= 0) end_top(s, t_tid, t);
  }
  pthread_mutex_unlock(&g.mu);
}

static void on_region_enter(const ballast_tool_region_t *ev, void *u) {
  char args[96];
  snprintf(args, sizeof args, ",\"args\":{\"id\":%d,\"depth\":%d}", ev->id, ev->depth);
  slice_begin(S_REGION, ev->name, args, ev->t_ns);
}
static void on_region_exit(const ballast_tool_region_t *ev, void *u) {
  slice_end(S_REGION, ev->name, ev->t_ns);
}
static void on_task_begin(const ballast_tool_task_t *ev, void *u) {
  slice_begin(S_TASK, ev->key, "", ev->t_ns);
}
static void on_task_end(const ballast_tool_task_t *ev, void *u) {
  slice_end(S_TASK, ev->key, ev->t_ns);
}

static void on_mpi_exit(const ballast_tool_mpi_exit_t *ev, void *u) {
  uint64_t dur = ev->t_ns - ev->t_begin_ns;
  if ((ev->lib && !g.with_lib) || dur < g.min_mpi_ns) return;
  char n[128], rest[512];
  snprintf(rest, sizeof rest,
           "\"dur\":%" PRIu64 ".%03u,\"cat\":\"%s\",\"name\":\"%s\",\"args\":{\"bytes\":%" PRIu64
           ",\"posted_bytes\":%" PRIu64 ",\"partner\":%d,\"comm_size\":%d,\"comm_id\":%d,"
           "\"tag\":%d}",
           dur / 1000, (unsigned)(dur % 1000), ev->lib ? "mpi,ballast" : "mpi",
           jstr(n, sizeof n, ev->name), ev->bytes, ev->posted_bytes, ev->partner, ev->comm_size,
           ev->comm_id, ev->tag);
  emit(ev->t_begin_ns, "X", rest);
}

static void on_lb_decision(const ballast_tool_lb_decision_t *ev, void *u) {
  if (g.rank != 0) return; /* the same figures on every rank: one track */
  char c[256], r[128], rest[1024];
  jstr(c, sizeof c, ev->context);
  /* A step not judged (warm-up) has imbalance 0: no sample, so the
   * counter does not drop to 0 after each remap. */
  if (ev->imbalance > 0) {
    snprintf(rest, sizeof rest, "\"name\":\"imbalance %s\",\"args\":{\"imbalance\":%.6g}",
             c, ev->imbalance);
    emit(ev->t_ns, "C", rest);
  }
  snprintf(rest, sizeof rest,
           "\"s\":\"t\",\"cat\":\"lb\",\"name\":\"lb decision\",\"args\":{\"context\":\"%s\","
           "\"step\":%ld,\"imbalance\":%.6g,\"predicted_gain_s\":%.6g,\"remap_cost_s\":%.6g,"
           "\"verdict\":\"%s\",\"reason\":\"%s\"}",
           c, ev->step, ev->imbalance, ev->predicted_gain_s, ev->remap_cost_s,
           ev->verdict == BALLAST_TOOL_REMAP ? "remap" : "keep", jstr(r, sizeof r, ev->reason));
  emit(ev->t_ns, "i", rest);
}

/* A repetition labelled an outlier: an instant on its thread at its end. */
static void on_rep_outlier(const ballast_tool_rep_t *ev, void *u) {
  char n[256], rest[600];
  snprintf(rest, sizeof rest,
           "\"s\":\"t\",\"cat\":\"repetition\",\"name\":\"outlier\",\"args\":{\"region\":"
           "\"%s\",\"index\":%lld,\"wtime_s\":%.6g,\"median_s\":%.6g}",
           jstr(n, sizeof n, ev->name), ev->index, ev->wtime, ev->median);
  emit(ev->t_ns, "i", rest);
  (void)u;
}

static void on_remap_begin(const ballast_tool_remap_begin_t *ev, void *u) {
  char c[256], name[160], args[400];
  __atomic_add_fetch(&g.remap_seq, 1, __ATOMIC_RELAXED);
  snprintf(name, sizeof name, "remap %s", ev->strategy ? ev->strategy : "?");
  snprintf(args, sizeof args, ",\"args\":{\"context\":\"%s\",\"step\":%ld}",
           jstr(c, sizeof c, ev->context), ev->step);
  slice_begin(S_REMAP, name, args, ev->t_ns);
}

static void on_remap_end(const ballast_tool_remap_end_t *ev, void *u) {
  char name[160], rest[640];
  /* The outcome in an instant: the E repeats the B's args (see the top). */
  snprintf(rest, sizeof rest,
           "\"s\":\"t\",\"cat\":\"lb\",\"name\":\"remap result\",\"args\":{\"tasks_moved\":%ld,"
           "\"bytes_moved\":%" PRIu64 ",\"mapping_s\":%.6g,\"migration_s\":%.6g,"
           "\"committed\":%d}",
           ev->tasks_moved, ev->bytes_moved, ev->mapping_s, ev->migration_s, ev->committed);
  emit(ev->t_ns, "i", rest);
  snprintf(name, sizeof name, "remap %s", ev->strategy ? ev->strategy : "?");
  slice_end(S_REMAP, name, ev->t_ns);
}

/* FNV-1a: the flow id both ends of a move compute alike from what they know. */
static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void on_task_move(const ballast_tool_task_move_t *ev, void *u) {
  char k[512], rest[1400];
  long seq = __atomic_load_n(&g.remap_seq, __ATOMIC_RELAXED);
  int out = ev->from == g.rank;
  jstr(k, sizeof k, ev->key);
  snprintf(rest, sizeof rest,
           "\"dur\":0,\"cat\":\"migration\",\"name\":\"move %s\",\"args\":{\"key\":\"%s\","
           "\"from\":%d,\"to\":%d,\"bytes\":%" PRIu64 "}",
           k, k, ev->from, ev->to, ev->bytes);
  emit(ev->t_ns, "X", rest);
  snprintf(rest, sizeof rest, "%s\"cat\":\"migration\",\"name\":\"move\",\"id\":\"%ld-%016" PRIx64
           "\"", out ? "" : "\"bp\":\"e\",", seq, fnv1a(ev->key));
  emit(ev->t_ns, out ? "s" : "f", rest);
}

static void pf_free(void) {
  for (int i = 0; i < g.capnests; i++) trace_nest_free(&g.nests[i]);
  free(g.nests);
  g.nests = NULL;
  g.capnests = 0;
  if (g.comm != MPI_COMM_NULL) PMPI_Comm_free(&g.comm);
  free(g.path);
  g.path = NULL;
}

static void on_finalize(const ballast_tool_finalize_t *ev, void *u) {
  trace_clock_sample_t s1;
  int rc = trace_clock_sync(g.comm, g.api->now_ns, &s1);
  pthread_mutex_lock(&g.mu);
  /* What is still open ends here, innermost first, on every track. */
  uint64_t forced = 0, dropped = 0;
  for (int tid = 0; g.open && tid < g.capnests; tid++) {
    trace_nest_t *s = &g.nests[tid];
    forced += s->forced;
    dropped += s->dropped;
    while (s->n > 0) end_top(s, tid, ev->t_ns);
  }
  if (forced || dropped)
    trace_log(g.rank, TOOL, "%" PRIu64 " slice(s) ended early by the end of an outer one, %"
              PRIu64 " end(s) of nothing open dropped", forced, dropped);
  uint64_t lost = g.out.lost;
  trace_buf_printf(&g.out,
                   "{\"ballast_trace_end\":1,\"t_local\":%" PRIu64 ",\"offset\":%" PRId64
                   ",\"rtt\":%" PRIu64 ",\"lost\":%" PRIu64 "}\n",
                   rc ? 0 : s1.t_local, rc ? (int64_t)0 : s1.offset, rc ? 0 : s1.rtt, lost);
  int wrc = trace_buf_close(&g.out);
  g.open = 0;
  pthread_mutex_unlock(&g.mu);
  if (wrc) trace_log(g.rank, TOOL, "writing %s.part%d failed: %s (%" PRIu64 " bytes lost)",
                     g.path, g.rank, trace_strerror(wrc), lost);
  /* Every part is complete before rank 0 reads them. */
  PMPI_Barrier(g.comm);
  if (g.rank == 0) {
    char err[512] = "";
    uint64_t n = 0;
    int mrc = perfetto_merge(g.path, g.size, !g.keep_parts, &n, err, sizeof err);
    if (mrc)
      trace_log(0, TOOL, "merging the parts failed: %s; the parts stay for ballast-trace-merge %s",
                err, g.path);
    else if (trace_env_flag("BALLAST_TRACE_QUIET", 0) == 0)
      trace_log(0, TOOL, "wrote %s (%" PRIu64 " events, %d ranks)", g.path, n, g.size);
  }
  pf_free();
}

static int pf_setup(const ballast_tool_api_v1_t *api) {
  g.api = api;
  g.rank = api->world_rank();
  g.size = api->world_size();
  const char *p = getenv("BALLAST_TRACE_PERFETTO");
  g.path = strdup(p && *p ? p : "ballast_trace.json");
  if (!g.path) return BALLAST_ENOMEM;
  g.min_mpi_ns = (uint64_t)(1000.0 * trace_env_double("BALLAST_TRACE_MPI_MIN_US", 0.0, 0.0,
                                                      g.rank, TOOL));
  size_t cap = trace_env_size("BALLAST_TRACE_BUFFER", 4u << 20, 4096, g.rank, TOOL);
  g.keep_parts = trace_env_flag("BALLAST_TRACE_KEEP_PARTS", 0);
  g.with_lib = trace_env_flag("BALLAST_TRACE_LIB", 1);
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &g.comm)) return BALLAST_EMPI;
  int rc = trace_clock_sync(g.comm, api->now_ns, &g.s0);
  char *part = rc ? NULL : perfetto_part_path(g.path, g.rank);
  if (!rc && !part) rc = BALLAST_ENOMEM;
  if (!rc && (rc = trace_buf_open(&g.out, part, cap)) != 0)
    trace_log(g.rank, TOOL, "cannot create %s: %s", part, trace_strerror(rc));
  free(part);
  /* Whether every rank can write decides for all: a trace missing a rank
   * would not merge. */
  int bad = rc != 0, anybad = 0;
  if (PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, g.comm)) return BALLAST_EMPI;
  if (anybad) {
    if (!rc) trace_buf_close(&g.out);
    return rc ? rc : BALLAST_EREMOTE;
  }
  trace_buf_printf(&g.out,
                   "{\"ballast_trace_part\":1,\"rank\":%d,\"size\":%d,\"t_local\":%" PRIu64
                   ",\"offset\":%" PRId64 ",\"rtt\":%" PRIu64 "}\n",
                   g.rank, g.size, g.s0.t_local, g.s0.offset, g.s0.rtt);
  g.open = 1;
  return 0;
}

static const trace_callbacks_t pf_callbacks = {
    .region_enter = on_region_enter, .region_exit = on_region_exit,
    .task_begin = on_task_begin,     .task_end = on_task_end,
    .mpi_exit = on_mpi_exit,         .lb_decision = on_lb_decision,
    .remap_begin = on_remap_begin,   .remap_end = on_remap_end,
    .task_move = on_task_move,       .finalize = on_finalize,
    .rep_outlier = on_rep_outlier};

__attribute__((visibility("default"))) int ballast_tool_init_v1(const ballast_tool_api_v1_t *api,
                                                                 ballast_tool_t *tool) {
  int rc = trace_init_check(api, g_attached, TOOL);
  if (rc) return rc;
  rc = pf_setup(api);
  if (rc == 0) rc = trace_register(api, tool, &pf_callbacks);
  if (rc) {
    pthread_mutex_lock(&g.mu);
    if (g.open) trace_buf_close(&g.out);
    g.open = 0;
    pthread_mutex_unlock(&g.mu);
    pf_free();
    return rc;
  }
  g_attached = 1;
  return 0;
}
