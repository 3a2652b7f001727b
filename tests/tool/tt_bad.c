/* Test tools that fail to attach, one per TT_BAD kind:
 *   1  exports only ballast_tool_init_v2 (a later interface version)
 *   2  exports no init function at all
 *   3  init returns an error (-7)
 *   4  init declines (returns 1), after registering an event: nothing of it
 *      may take effect. */
#include <stdlib.h>

#include <ballast/tool.h>

#if TT_BAD == 1
int ballast_tool_init_v2(const void *api, ballast_tool_t *tool);
int ballast_tool_init_v2(const void *api, ballast_tool_t *tool) {
  (void)api;
  (void)tool;
  return 0;
}
#elif TT_BAD == 2
int tt_bad_nothing(void);
int tt_bad_nothing(void) { return 0; }
#else
static void never(const ballast_tool_finalize_t *e, void *ud) {
  (void)e;
  (void)ud;
  abort(); /* a declined or failed tool's registration took effect */
}
int ballast_tool_init_v1(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  api->on_finalize(tool, never, NULL);
  return TT_BAD == 3 ? -7 : 1;
}
#endif
