/*
 * Merging the Perfetto writer's per-rank parts into one trace-event JSON
 * file. Rank 0 calls it at MPI_Finalize; the ballast-trace-merge command
 * calls it after a run that died before (its parts are still on disk).
 *
 * A part, "<trace>.part<rank>", is text, one JSON object per line:
 *   {"ballast_trace_part":1,"rank":R,"size":P,"t_local":T,"offset":O,"rtt":D}
 *       first line: the rank, the job's size, and the clock sample taken at
 *       init (trace_clock_sample_t: local time, rank 0's clock minus the
 *       local one, round trip of the measurement), all nanoseconds.
 *   {"ts":<local CLOCK_MONOTONIC ns>,"ph":...}
 *       one trace event in Chrome's trace-event format, except that ts is
 *       the rank's raw clock in nanoseconds; "dur" is already microseconds.
 *   {"ballast_trace_end":1,"t_local":T,"offset":O,"rtt":D,"lost":L}
 *       last line, written at finalize: the second clock sample and the
 *       bytes the rank lost (0 unless its disk failed). Missing when the
 *       run died: the merge then corrects with the first sample alone.
 * The merge writes {"traceEvents":[...],"displayTimeUnit":"ns",
 * "otherData":{...}} with every ts on rank 0's clock, in microseconds from
 * the start of the trace, and names each rank's process ("rank R").
 */
#ifndef BALLAST_PERFETTO_MERGE_H
#define BALLAST_PERFETTO_MERGE_H

#include <stddef.h>
#include <stdint.h>

/* The path of rank's part of the trace out (caller frees). */
char *perfetto_part_path(const char *out, int rank);

/* Merge out.part0 .. out.part<P-1> into out (P is read from part 0's
 * header). nranks_expected > 0 must match it. With remove_parts the parts
 * are deleted once the merged file is complete. Returns 0, or a negative
 * BALLAST_E* code with a message naming the file and the problem in err.
 * *events (may be NULL) receives the number of events written. */
int perfetto_merge(const char *out, int nranks_expected, int remove_parts, uint64_t *events,
                   char *err, size_t errlen);

#endif /* BALLAST_PERFETTO_MERGE_H */
