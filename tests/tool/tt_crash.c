/* A test tool that crashes: at the entry of region "crash" it writes to a
 * page it may not touch (PROT_NONE), after printing the address on stderr
 * ("tt_crash: faulting at 0x..."), so the test can compare it with what the
 * handlers receive. A real fault, not a NULL store (UBSan would stop that in
 * the sanitizer build first). With TT_CRASH_INIT=1 it faults in its init
 * instead, on the last rank, as the only tool loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <ballast/tool.h>

static void fault(void) {
  volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return;
  fprintf(stderr, "tt_crash: faulting at %p\n", (void *)(p + 24));
  fflush(stderr);
  p[24] = 1;
}

static void on_enter(const ballast_tool_region_t *ev, void *ud) {
  (void)ud;
  if (ev->name && strcmp(ev->name, "crash") == 0)
    fault();
}

int ballast_tool_init_v1(const ballast_tool_api_v1_t *api, ballast_tool_t *tool);
int ballast_tool_init_v1(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  const char *init = getenv("TT_CRASH_INIT");
  if (init && strcmp(init, "1") == 0 && api->world_rank() == api->world_size() - 1)
    fault();
  return api->on_region_enter(tool, on_enter, NULL);
}
