/* The allocator of task arrays for applications: the large-buffer rule of
 * common (ballast__alloc_large), which the migration engine's buffers
 * follow too, so arrivals and the application's own arrays are alike. */
#include "common/common_internal.h"
#include "task/task_internal.h"

void *rta_array_alloc(size_t bytes) { return ballast__alloc_large(bytes); }
