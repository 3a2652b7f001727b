/*
 * The trace writers' shared pieces: the bounded buffer, settings, log and
 * clock alignment (see trace_common.h).
 */
#include "trace_common.h"

#include <ballast/common.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int trace_buf_open(trace_buf_t *b, const char *path, size_t cap) {
  memset(b, 0, sizeof *b);
  b->fd = -1;
  if (!path || !*path || cap == 0) return BALLAST_EINVAL;
  b->buf = malloc(cap);
  b->path = strdup(path);
  if (!b->buf || !b->path) {
    free(b->buf);
    free(b->path);
    b->buf = b->path = NULL;
    return BALLAST_ENOMEM;
  }
  b->cap = cap;
  b->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (b->fd < 0) {
    free(b->buf);
    free(b->path);
    b->buf = b->path = NULL;
    return BALLAST_EIO;
  }
  return 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return BALLAST_EIO;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int trace_buf_flush(trace_buf_t *b) {
  if (b->err) return b->err;
  if (b->len == 0) return 0;
  int rc = write_all(b->fd, b->buf, b->len);
  if (rc) {
    b->err = rc;
    b->lost += b->len;
  } else {
    b->written += b->len;
  }
  b->len = 0;
  return rc;
}

int trace_buf_append(trace_buf_t *b, const char *s, size_t n) {
  if (b->err) {
    b->lost += n;
    return b->err;
  }
  if (b->len + n > b->cap) {
    b->flushes++;
    int rc = trace_buf_flush(b);
    if (rc) {
      b->lost += n;
      return rc;
    }
  }
  if (n > b->cap) { /* larger than the whole buffer: straight to the file */
    int rc = write_all(b->fd, s, n);
    if (rc) {
      b->err = rc;
      b->lost += n;
      return rc;
    }
    b->written += n;
    return 0;
  }
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  return 0;
}

int trace_buf_printf(trace_buf_t *b, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return BALLAST_EINVAL;
  if ((size_t)n < sizeof line) return trace_buf_append(b, line, (size_t)n);
  /* A long line (a long region name): format it again into the heap. */
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->lost += (size_t)n;
    return BALLAST_ENOMEM;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  int rc = trace_buf_append(b, big, (size_t)n);
  free(big);
  return rc;
}

int trace_buf_close(trace_buf_t *b) {
  int rc = 0;
  if (b->fd >= 0) {
    trace_buf_flush(b);
    if (close(b->fd) != 0 && !b->err) b->err = BALLAST_EIO;
    rc = b->err;
  }
  free(b->buf);
  free(b->path);
  b->buf = b->path = NULL;
  b->fd = -1;
  return rc;
}

const char *trace_strerror(int err) {
  switch (err) {
#define TRACE_ERR_CASE_(name, val, msg) case val: return msg;
    BALLAST_ERRNO_MAP(TRACE_ERR_CASE_)
#undef TRACE_ERR_CASE_
  case 0: return "success";
  }
  return "unknown error";
}

void trace_log(int rank, const char *tool, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "ballast-trace[%d] %s: %s\n", rank, tool, msg);
}

size_t trace_env_size(const char *var, size_t def, size_t min, int rank, const char *tool) {
  const char *s = getenv(var);
  if (!s || !*s) return def;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned long long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1ull << 30, end++;
  if (errno || end == s || *end || s[0] == '-' || v > (1ull << 40) / mul || v * mul < min) {
    if (rank <= 0) /* every rank reads the same value: one warning per job */
      trace_log(rank, tool, "%s=%s is not a size of at least %zu bytes (e.g. 4M); using %zu",
                var, s, min, def);
    return def;
  }
  return (size_t)(v * mul);
}

double trace_env_double(const char *var, double def, double min, int rank, const char *tool) {
  const char *s = getenv(var);
  if (!s || !*s) return def;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= min) || v > 1e12) {
    if (rank <= 0) /* every rank reads the same value: one warning per job */
      trace_log(rank, tool, "%s=%s is not a number >= %g; using %g", var, s, min, def);
    return def;
  }
  return v;
}

int trace_env_flag(const char *var, int def) {
  const char *s = getenv(var);
  if (!s || !*s) return def;
  return !(strcmp(s, "0") == 0 || strcmp(s, "no") == 0 || strcmp(s, "off") == 0);
}

enum { SYNC_ROUNDS = 8, SYNC_TAG = 4242 };

/* Rank 0's side: answer each rank's pings with its own time, rank by rank. */
static int sync_root(MPI_Comm comm, int size, uint64_t (*now_ns)(void)) {
  for (int r = 1; r < size; r++)
    for (int i = 0; i < SYNC_ROUNDS; i++) {
      char ping;
      if (PMPI_Recv(&ping, 1, MPI_CHAR, r, SYNC_TAG, comm, MPI_STATUS_IGNORE))
        return BALLAST_EMPI;
      uint64_t t0 = now_ns();
      if (PMPI_Send(&t0, 1, MPI_UINT64_T, r, SYNC_TAG, comm)) return BALLAST_EMPI;
    }
  return 0;
}

int trace_clock_sync(MPI_Comm comm, uint64_t (*now_ns)(void), trace_clock_sample_t *out) {
  int rank, size;
  if (PMPI_Comm_rank(comm, &rank) || PMPI_Comm_size(comm, &size)) return BALLAST_EMPI;
  memset(out, 0, sizeof *out);
  if (rank == 0) {
    out->t_local = now_ns();
    return sync_root(comm, size, now_ns);
  }
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < SYNC_ROUNDS; i++) {
    char ping = 0;
    uint64_t t0, t1 = now_ns();
    if (PMPI_Send(&ping, 1, MPI_CHAR, 0, SYNC_TAG, comm) ||
        PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, SYNC_TAG, comm, MPI_STATUS_IGNORE))
      return BALLAST_EMPI;
    uint64_t t2 = now_ns();
    if (t2 - t1 < best) {
      best = t2 - t1;
      out->rtt = best;
      out->t_local = t1 + (t2 - t1) / 2;
      out->offset = (int64_t)(t0 - out->t_local);
    }
  }
  return 0;
}

/* Oscillators of different hosts drift apart by a few ppm, NTP-disciplined
 * ones by well under 100 ppm. Two samples giving more than that measured
 * noise (a rank descheduled during every ping-pong of a sample on a loaded
 * machine), not drift: then the sample with the shorter round trip serves
 * alone, as a constant offset. */
#define TRACE_MAX_DRIFT 1e-4

static double drift(const trace_clock_sample_t *s0, const trace_clock_sample_t *s1) {
  return (double)(s1->offset - s0->offset) / (double)(s1->t_local - s0->t_local);
}

int trace_clock_drift_ok(const trace_clock_sample_t *s0, const trace_clock_sample_t *s1) {
  if (!s1 || s1->t_local <= s0->t_local) return 0;
  double d = drift(s0, s1);
  return d <= TRACE_MAX_DRIFT && d >= -TRACE_MAX_DRIFT;
}

uint64_t trace_clock_global(uint64_t t, const trace_clock_sample_t *s0,
                            const trace_clock_sample_t *s1) {
  int64_t off = s0->offset;
  if (trace_clock_drift_ok(s0, s1))
    off += (int64_t)(drift(s0, s1) * ((double)t - (double)s0->t_local));
  else if (s1 && s1->t_local > s0->t_local && s1->rtt < s0->rtt)
    off = s1->offset;
  return (uint64_t)((int64_t)t + off);
}

int trace_nest_push(trace_nest_t *s, int kind, const char *name, const char *extra) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    trace_open_t *v = realloc(s->v, (size_t)cap * sizeof *v);
    if (!v) return BALLAST_ENOMEM;
    s->v = v;
    s->cap = cap;
  }
  char *copy = strdup(name ? name : "(null)");
  char *xcopy = extra ? strdup(extra) : NULL;
  if (!copy || (extra && !xcopy)) {
    free(copy);
    free(xcopy);
    return BALLAST_ENOMEM;
  }
  s->v[s->n].kind = kind;
  s->v[s->n].name = copy;
  s->v[s->n].extra = xcopy;
  s->n++;
  return 0;
}

int trace_nest_find(trace_nest_t *s, int kind, const char *name) {
  if (!name) name = "(null)";
  for (int i = s->n - 1; i >= 0; i--)
    if (s->v[i].kind == kind && strcmp(s->v[i].name, name) == 0) return s->n - 1 - i;
  s->dropped++;
  return -1;
}

const trace_open_t *trace_nest_top(const trace_nest_t *s) {
  return s->n > 0 ? &s->v[s->n - 1] : NULL;
}

void trace_nest_pop(trace_nest_t *s) {
  if (s->n > 0) {
    s->n--;
    free(s->v[s->n].name);
    free(s->v[s->n].extra);
  }
}

void trace_nest_free(trace_nest_t *s) {
  while (s->n > 0) trace_nest_pop(s);
  free(s->v);
  memset(s, 0, sizeof *s);
}

int trace_init_check(const ballast_tool_api_v1_t *api, int attached, const char *tool) {
  if (!api || api->version < 1 || api->size < BALLAST_TOOL_API_V1_1_SIZE) return BALLAST_ENOTSUP;
  if (attached) {
    trace_log(api->world_rank(), tool, "already attached once in this process; ignored");
    return 1;
  }
  return 0;
}

int trace_register(const ballast_tool_api_v1_t *api, ballast_tool_t *tool,
                   const trace_callbacks_t *cb) {
  int rc = 0;
  if (!rc && cb->region_enter) rc = api->on_region_enter(tool, cb->region_enter, NULL);
  if (!rc && cb->region_exit) rc = api->on_region_exit(tool, cb->region_exit, NULL);
  if (!rc && cb->task_begin) rc = api->on_task_begin(tool, cb->task_begin, NULL);
  if (!rc && cb->task_end) rc = api->on_task_end(tool, cb->task_end, NULL);
  if (!rc && cb->mpi_exit) rc = api->on_mpi_exit(tool, cb->mpi_exit, NULL);
  if (!rc && cb->lb_decision) rc = api->on_lb_decision(tool, cb->lb_decision, NULL);
  if (!rc && cb->remap_begin) rc = api->on_remap_begin(tool, cb->remap_begin, NULL);
  if (!rc && cb->remap_end) rc = api->on_remap_end(tool, cb->remap_end, NULL);
  if (!rc && cb->task_move) rc = api->on_task_move(tool, cb->task_move, NULL);
  if (!rc && cb->mpi_complete) rc = api->on_mpi_complete(tool, cb->mpi_complete, NULL);
  if (!rc && cb->rep_outlier && api->size >= BALLAST_TOOL_API_V1_3_SIZE)
    rc = api->on_rep_outlier(tool, cb->rep_outlier, NULL);
  if (!rc && cb->finalize) rc = api->on_finalize(tool, cb->finalize, NULL);
  return rc;
}
