/*
 * Merging the per-rank parts of a Perfetto trace (format in
 * perfetto_merge.h). The merge streams: one line of one part in memory at a
 * time, whatever the size of the trace.
 */
#include "perfetto_merge.h"

#include "trace_common.h"

#include <ballast/common.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct part_info {
  int rank, size;
  trace_clock_sample_t s0, s1; /* s1.t_local == 0: no end line (run died) */
  uint64_t lost;
  int complete;
} part_info_t;

char *perfetto_part_path(const char *out, int rank) {
  size_t n = strlen(out) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s.part%d", out, rank);
  return p;
}

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return code;
}

/* The end line, if the part has one: the last line of the file. */
static void read_end_line(FILE *f, part_info_t *pi) {
  char tail[512];
  if (fseek(f, 0, SEEK_END) != 0) return;
  long size = ftell(f);
  long from = size > (long)sizeof tail - 1 ? size - (long)sizeof tail + 1 : 0;
  if (fseek(f, from, SEEK_SET) != 0) return;
  size_t n = fread(tail, 1, sizeof tail - 1, f);
  tail[n] = '\0';
  const char *e = strstr(tail, "{\"ballast_trace_end\":1,");
  if (!e) return;
  long long off;
  unsigned long long t, rtt, lost;
  if (sscanf(e, "{\"ballast_trace_end\":1,\"t_local\":%llu,\"offset\":%lld,\"rtt\":%llu,"
                "\"lost\":%llu}", &t, &off, &rtt, &lost) == 4) {
    pi->s1.t_local = t;
    pi->s1.offset = off;
    pi->s1.rtt = rtt;
    pi->lost = lost;
    pi->complete = 1;
  }
}

static int read_header(const char *path, FILE *f, part_info_t *pi, char *err, size_t errlen) {
  char line[512];
  long long off;
  unsigned long long t, rtt;
  memset(pi, 0, sizeof *pi);
  if (!fgets(line, sizeof line, f) ||
      sscanf(line, "{\"ballast_trace_part\":1,\"rank\":%d,\"size\":%d,\"t_local\":%llu,"
                   "\"offset\":%lld,\"rtt\":%llu}", &pi->rank, &pi->size, &t, &off, &rtt) != 5 ||
      pi->size < 1 || pi->rank < 0 || pi->rank >= pi->size)
    return fail(err, errlen, BALLAST_EPARSE,
                "%s: not a ballast trace part (first line must be its header)", path);
  pi->s0.t_local = t;
  pi->s0.offset = off;
  pi->s0.rtt = rtt;
  read_end_line(f, pi);
  return 0;
}

static int open_part(const char *out, int r, FILE **f, part_info_t *pi, char *err,
                     size_t errlen) {
  char *path = perfetto_part_path(out, r);
  if (!path) return fail(err, errlen, BALLAST_ENOMEM, "out of memory");
  *f = fopen(path, "r");
  int rc = 0;
  if (!*f)
    rc = fail(err, errlen, BALLAST_EIO, "%s: cannot open rank %d's part of the trace", path, r);
  else if ((rc = read_header(path, *f, pi, err, errlen)) == 0 && pi->rank != r)
    rc = fail(err, errlen, BALLAST_EPARSE, "%s: header says rank %d, expected %d", path,
              pi->rank, r);
  if (rc && *f) {
    fclose(*f);
    *f = NULL;
  }
  free(path);
  return rc;
}

/* Copy one part's events, each ts moved to rank 0's clock, microseconds
 * since epoch. Lines that are not events (header, end line) are skipped. */
static int copy_events(FILE *in, FILE *out, const part_info_t *pi, uint64_t epoch,
                       uint64_t *count, char *err, size_t errlen) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  rewind(in);
  while ((n = getline(&line, &cap, in)) > 0) {
    if (strncmp(line, "{\"ts\":", 6) != 0) continue;
    char *end;
    unsigned long long t = strtoull(line + 6, &end, 10);
    if (end == line + 6 || *end != ',') continue; /* a torn last line of a died run */
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    if (n < 2 || line[n - 1] != '}') continue;
    const trace_clock_sample_t *s1 = pi->complete ? &pi->s1 : NULL;
    uint64_t g = trace_clock_global(t, &pi->s0, s1);
    uint64_t rel = g > epoch ? g - epoch : 0;
    fprintf(out, "%s{\"ts\":%" PRIu64 ".%03u", *count ? ",\n" : "", rel / 1000,
            (unsigned)(rel % 1000));
    /* A duration moves with the clock too (its end is corrected like its
     * start), so slices that nest on the rank's clock still nest. */
    char *d = strstr(end, ",\"dur\":");
    char *dend;
    double dur_us = d ? strtod(d + 7, &dend) : 0;
    if (d && dend != d + 7 && dur_us >= 0) {
      uint64_t dur = (uint64_t)(dur_us * 1000.0 + 0.5);
      uint64_t g1 = trace_clock_global(t + dur, &pi->s0, s1) - g;
      fwrite(end, 1, (size_t)(d - end), out);
      fprintf(out, ",\"dur\":%" PRIu64 ".%03u%s", g1 / 1000, (unsigned)(g1 % 1000), dend);
    } else {
      fputs(end, out);
    }
    (*count)++;
  }
  free(line);
  if (ferror(out)) return fail(err, errlen, BALLAST_EIO, "writing the merged trace failed");
  return 0;
}

static void write_process_names(FILE *out, int size, uint64_t *count) {
  for (int r = 0; r < size; r++) {
    fprintf(out,
            "%s{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\","
            "\"args\":{\"name\":\"rank %d\"}},\n"
            "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_sort_index\","
            "\"args\":{\"sort_index\":%d}}",
            *count ? ",\n" : "", r, r, r, r);
    *count += 2;
  }
}

static int merge_open(const char *out, int nranks_expected, FILE ***parts, part_info_t **pis,
                      int *size, char *err, size_t errlen) {
  FILE *f0;
  part_info_t p0;
  int rc = open_part(out, 0, &f0, &p0, err, errlen);
  if (rc) return rc;
  if (nranks_expected > 0 && p0.size != nranks_expected) {
    fclose(f0);
    return fail(err, errlen, BALLAST_ESIZE, "%s.part0 is from a run of %d ranks, not %d", out,
                p0.size, nranks_expected);
  }
  *size = p0.size;
  *parts = calloc((size_t)p0.size, sizeof **parts);
  *pis = calloc((size_t)p0.size, sizeof **pis);
  if (!*parts || !*pis) {
    fclose(f0);
    return fail(err, errlen, BALLAST_ENOMEM, "out of memory for %d parts", p0.size);
  }
  (*parts)[0] = f0;
  (*pis)[0] = p0;
  for (int r = 1; r < p0.size && !rc; r++) {
    rc = open_part(out, r, &(*parts)[r], &(*pis)[r], err, errlen);
    if (!rc && (*pis)[r].size != p0.size)
      rc = fail(err, errlen, BALLAST_ESIZE, "%s.part%d is from a run of %d ranks, part 0 of %d",
                out, r, (*pis)[r].size, p0.size);
  }
  return rc;
}

int perfetto_merge(const char *out, int nranks_expected, int remove_parts, uint64_t *events,
                   char *err, size_t errlen) {
  FILE **parts = NULL;
  part_info_t *pis = NULL;
  int size = 0;
  uint64_t count = 0, lost = 0;
  if (!out || !*out) return fail(err, errlen, BALLAST_EINVAL, "no trace path given");
  int rc = merge_open(out, nranks_expected, &parts, &pis, &size, err, errlen);
  FILE *o = NULL;
  if (!rc && !(o = fopen(out, "w")))
    rc = fail(err, errlen, BALLAST_EIO, "%s: cannot create the merged trace", out);
  if (!rc) {
    /* The trace starts at the earliest moment any rank can have recorded
     * anything: its init sample, less the sample's uncertainty. */
    uint64_t epoch = UINT64_MAX;
    int died = 0;
    for (int r = 0; r < size; r++) {
      const trace_clock_sample_t *s1 = pis[r].complete ? &pis[r].s1 : NULL;
      uint64_t g = trace_clock_global(pis[r].s0.t_local, &pis[r].s0, s1) - pis[r].s0.rtt;
      if (g < epoch) epoch = g;
      lost += pis[r].lost;
      died += !pis[r].complete;
    }
    fputs("{\"traceEvents\":[\n", o);
    write_process_names(o, size, &count);
    for (int r = 0; r < size && !rc; r++)
      rc = copy_events(parts[r], o, &pis[r], epoch, &count, err, errlen);
    fprintf(o,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"writer\":\"ballast perfetto\","
            "\"ranks\":%d,\"clock\":\"CLOCK_MONOTONIC of each rank, aligned to rank 0\","
            "\"ranks_without_end\":%d,\"lost_bytes\":%" PRIu64 "}}\n",
            size, died, lost);
    if (fclose(o) != 0 && !rc)
      rc = fail(err, errlen, BALLAST_EIO, "%s: writing the merged trace failed", out);
  }
  for (int r = 0; r < size; r++)
    if (parts && parts[r]) fclose(parts[r]);
  if (!rc && remove_parts)
    for (int r = 0; r < size; r++) {
      char *p = perfetto_part_path(out, r);
      if (p) remove(p);
      free(p);
    }
  free(parts);
  free(pis);
  if (events) *events = count;
  return rc;
}
