/* The allocator of task arrays: rta_alloc_array() for applications, and
 * rta__alloc_large() for the migration engine's receive buffers and pool,
 * which become applications' arrays. */
#include <stdlib.h>
#include <sys/mman.h>

#include "common/common_internal.h"
#include "task/task_internal.h"

/* Fresh memory for a buffer the pool cannot serve. It costs a page fault per
 * 4 KiB page on first touch, which is most of a large migration's time on a
 * virtual machine (10 ms per MiB measured on the 2-core VM, against 0.2 ms
 * per MiB for memory already touched). Buffers of 1 MiB and more are
 * therefore aligned to 2 MiB and offered transparent huge pages (Linux
 * madvise; elsewhere this is a plain aligned allocation): one fault per
 * 2 MiB. A buffer between 1 and 2 MiB is given the whole 2 MiB so it can
 * be one huge page. The memory is freed with free(), as adopters expect. */
size_t rta__large_len(size_t n) {
  return n >= RTA__HUGE_BYTES / 2 && n < RTA__HUGE_BYTES ? RTA__HUGE_BYTES : n;
}
void *rta__alloc_large(size_t n) {
  if (n < RTA__HUGE_BYTES / 2)
    return ballast__malloc(n ? n : 1);
  size_t len = rta__large_len(n);
  void *p = NULL;
  if (ballast__memalign(&p, RTA__HUGE_BYTES, len) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, len & ~(RTA__HUGE_BYTES - 1), MADV_HUGEPAGE);
#endif
  return p;
}

void *rta_alloc_array(size_t bytes) { return rta__alloc_large(bytes); }
