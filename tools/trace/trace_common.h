/*
 * What ballast's two bundled trace writers (the Perfetto JSON writer and the
 * OTF2 writer) share: a bounded output buffer flushed to a file when full,
 * settings read from the environment, a log line, and the alignment of each
 * rank's clock with rank 0's.
 *
 * These plugins use only public interfaces (ballast/tool.h, MPI), like any
 * user's tool. They call MPI through the PMPI_ names on a communicator of
 * their own: ballast then neither counts their traffic as the application's
 * nor raises tool events for it (a writer must not trace itself), and their
 * messages can never match the application's receives.
 */
#ifndef BALLAST_TRACE_COMMON_H
#define BALLAST_TRACE_COMMON_H

#include <ballast/tool.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A file written through a buffer of fixed size. Appends that do not fit
 * flush the buffer (one write(2)); nothing grows. Not thread safe: callers
 * hold their own lock. err keeps the first error (negative BALLAST_E*); after
 * an error further appends are dropped and counted in lost. */
typedef struct trace_buf {
  int fd;
  char *buf;
  size_t cap, len;
  uint64_t written; /* bytes that reached the file */
  uint64_t lost;    /* bytes dropped after an error */
  uint64_t flushes; /* flushes because the buffer was full */
  int err;
  char *path;
} trace_buf_t;

int trace_buf_open(trace_buf_t *b, const char *path, size_t cap);
int trace_buf_append(trace_buf_t *b, const char *s, size_t n);
int trace_buf_printf(trace_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int trace_buf_flush(trace_buf_t *b);
/* Flushes, closes and frees; returns the first error the file ever had. */
int trace_buf_close(trace_buf_t *b);

/* The message of a BALLAST_E* code, from the public header's error list
 * (the plugins call nothing of libballast, so they load into a program
 * that links ballast statically as well). */
const char *trace_strerror(int err);

/* Log a line "ballast-trace[rank] <tool>: ..." on stderr. */
void trace_log(int rank, const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Environment: a size with an optional K, M or G suffix (binary), a number
 * of microseconds, a flag. Unset gives def; a malformed or out-of-range value
 * gives def and one warning naming the variable, printed by rank 0 (rank
 * <= 0) only, as the environment's warnings are. */
size_t trace_env_size(const char *var, size_t def, size_t min, int rank, const char *tool);
double trace_env_double(const char *var, double def, double min, int rank, const char *tool);
int trace_env_flag(const char *var, int def);

/* Clock alignment. CLOCK_MONOTONIC (ballast's event clock) starts at an
 * arbitrary point on each host, so ranks on different nodes disagree by
 * seconds. Each rank measures offset = (rank 0's clock) - (its clock) with
 * ping-pongs against rank 0: rank r sends at t1, rank 0 answers with its time
 * t0, rank r receives at t2; the round trip with the smallest t2 - t1 gives
 * offset = t0 - (t1 + t2) / 2, exact to within half that round trip (a few
 * microseconds over a network, well under one on a node). Measured at init
 * and again at finalize, the two give a linear correction that also absorbs
 * the drift between the hosts' oscillators over the run. Collective over comm. */
typedef struct trace_clock_sample {
  uint64_t t_local; /* local time of the measurement */
  int64_t offset;   /* rank 0's clock minus the local clock at t_local */
  uint64_t rtt;     /* round trip of the sample kept (its error bound x 2) */
} trace_clock_sample_t;

int trace_clock_sync(MPI_Comm comm, uint64_t (*now_ns)(void), trace_clock_sample_t *out);

/* Local time t on rank 0's clock, interpolating between two samples (or the
 * first alone when the second is missing: s1 NULL or s1->t_local == 0). A
 * drift over 100 ppm between the samples is taken for measurement noise:
 * the sample with the shorter round trip then serves alone. */
/* Whether s1 exists, follows s0 and the two give a plausible drift. */
int trace_clock_drift_ok(const trace_clock_sample_t *s0, const trace_clock_sample_t *s1);

uint64_t trace_clock_global(uint64_t t, const trace_clock_sample_t *s0,
                            const trace_clock_sample_t *s1);

/* What is open on one track (thread): the slices a writer began and has
 * not ended, innermost last. The writers keep one per track so that what
 * they write nests whatever the events do: an end that matches an open
 * slice below the innermost one first ends those above it (they would
 * otherwise cross it); an end that matches nothing open is dropped; at the
 * finalize event what is still open is ended, innermost first. Not thread
 * safe: callers hold their own lock. */
typedef struct trace_open {
  int kind;    /* the writer's kind of slice (region, task, ...) */
  char *name;  /* owned */
  char *extra; /* owned, may be NULL: what the writer repeats at the end */
} trace_open_t;

typedef struct trace_nest {
  trace_open_t *v;
  int n, cap;
  uint64_t dropped; /* ends that matched nothing open */
  uint64_t forced;  /* slices ended early (an outer end, or the finalize event) */
} trace_nest_t;

/* Records a slice begun (name and extra, which may be NULL, copied);
 * BALLAST_ENOMEM (the caller then writes no begin). */
int trace_nest_push(trace_nest_t *s, int kind, const char *name, const char *extra);
/* Where the end of (kind, name) goes: the number of open slices above the
 * innermost match (0: it is the innermost), or -1 when nothing open matches
 * (counted in dropped). */
int trace_nest_find(trace_nest_t *s, int kind, const char *name);
/* The innermost open slice, or NULL. */
const trace_open_t *trace_nest_top(const trace_nest_t *s);
/* Forgets the innermost open slice. */
void trace_nest_pop(trace_nest_t *s);
/* Frees everything (a zeroed nest is empty and valid). */
void trace_nest_free(trace_nest_t *s);

/* The callbacks a writer registers (NULL: not registered). */
typedef struct trace_callbacks {
  ballast_tool_region_fn region_enter, region_exit;
  ballast_tool_task_fn task_begin, task_end;
  ballast_tool_mpi_exit_fn mpi_exit;
  ballast_tool_lb_decision_fn lb_decision;
  ballast_tool_remap_begin_fn remap_begin;
  ballast_tool_remap_end_fn remap_end;
  ballast_tool_task_move_fn task_move;
  ballast_tool_finalize_fn finalize;
  ballast_tool_mpi_complete_fn mpi_complete;
  ballast_tool_rep_fn rep_outlier; /* registered when the table has it */
} trace_callbacks_t;

/* The start of a writer's init: BALLAST_ENOTSUP for a table older than
 * this header's (the writers need mpi_complete, comm_id and tag), 1
 * (decline, with a message) when the writer is attached already in this
 * process (named twice in BALLAST_TOOLS), else 0. */
int trace_init_check(const ballast_tool_api_v1_t *api, int attached, const char *tool);

/* Registers every non-NULL callback of cb; the first error, or 0. */
int trace_register(const ballast_tool_api_v1_t *api, ballast_tool_t *tool,
                   const trace_callbacks_t *cb);

#endif /* BALLAST_TRACE_COMMON_H */
