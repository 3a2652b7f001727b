/* Large buffers: task arrays (rta_array_alloc) and the migration engine's
 * receive buffers and pool, which become applications' arrays. In common so
 * that the migration engine, which knows nothing of tasks, and the task
 * runtime share one rule. */
#include <stdlib.h>
#include <sys/mman.h>

#include "common/common_internal.h"

/* Fresh memory for a buffer the pool cannot serve. It costs a page fault per
 * 4 KiB page on first touch, which is most of a large migration's time on a
 * virtual machine (10 ms per MiB measured on the 2-core VM, against 0.2 ms
 * per MiB for memory already touched). Buffers of 1 MiB and more are
 * therefore aligned to 2 MiB and offered transparent huge pages (Linux
 * madvise; elsewhere this is a plain aligned allocation): one fault per
 * 2 MiB. A buffer between 1 and 2 MiB is given the whole 2 MiB so it can
 * be one huge page. The memory is freed with free(), as adopters expect. */
size_t ballast__large_len(size_t n) {
  return n >= BALLAST__HUGE_BYTES / 2 && n < BALLAST__HUGE_BYTES ? BALLAST__HUGE_BYTES : n;
}

void *ballast__alloc_large(size_t n) {
  if (n < BALLAST__HUGE_BYTES / 2)
    return ballast__malloc(n ? n : 1);
  size_t len = ballast__large_len(n);
  void *p = NULL;
  if (ballast__memalign(&p, BALLAST__HUGE_BYTES, len) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, len & ~(BALLAST__HUGE_BYTES - 1), MADV_HUGEPAGE);
#endif
  return p;
}
