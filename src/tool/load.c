/*
 * Loading the tools named in BALLAST_TOOLS: resolving an entry to a file,
 * dlopen, finding an init function of a version this library supports.
 * Every failure is one warning naming the entry; the run goes on.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "tool/tool_internal.h"

/* Versions a tool might be built for that this library does not support,
 * looked for only to say so: ballast_tool_init_v2 .. _v9. */
#define NEWEST_GUESS 9

/* A bare name ("count"): <dir of libballast>/ballast/tools/<name>.so, then
 * the install prefix's folder. 0 with \a out filled, -1 when neither exists. */
static int bundled_path(const char *name, char *out, size_t cap) {
  Dl_info info;
  if (dladdr((void *)tool__load, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    int dir = slash ? (int)(slash - info.dli_fname) : 1;
    const char *base = slash ? info.dli_fname : ".";
    int n = snprintf(out, cap, "%.*s/ballast/tools/%s.so", dir, base, name);
    if (n > 0 && (size_t)n < cap && access(out, R_OK) == 0)
      return 0;
  }
  int n = snprintf(out, cap, "%s/%s.so", BALLAST_TOOLDIR, name);
  return n > 0 && (size_t)n < cap && access(out, R_OK) == 0 ? 0 : -1;
}

static int has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Explains why a loaded object has no ballast_tool_init_v1. */
static void warn_no_init(const char *entry, void *dl) {
  for (int v = NEWEST_GUESS; v >= 2; v--) {
    char sym[32];
    snprintf(sym, sizeof sym, "ballast_tool_init_v%d", v);
    if (dlsym(dl, sym)) {
      BALLAST_WARN("tool \"%s\" is built for version %d of the tools interface (it exports "
                   "%s only); this ballast supports version %d (ballast_tool_init_v%d): "
                   "running without it", entry, v, sym, BALLAST_TOOL_VERSION,
                   BALLAST_TOOL_VERSION);
      return;
    }
  }
  BALLAST_WARN("tool \"%s\" exports no ballast_tool_init_v%d: not a ballast tool; running "
               "without it", entry, BALLAST_TOOL_VERSION);
}

void tool__load(const char *entry) {
  char path[PATH_MAX];
  const char *file = entry;
  if (!strchr(entry, '/') && !has_suffix(entry, ".so")) {
    if (bundled_path(entry, path, sizeof path) != 0) {
      BALLAST_WARN("tool \"%s\": no such bundled tool (looked for %s.so beside libballast "
                   "in ballast/tools/ and in %s); running without it", entry, entry,
                   BALLAST_TOOLDIR);
      return;
    }
    file = path;
  }
  dlerror();
  void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *why = dlerror();
    BALLAST_WARN("tool \"%s\" cannot be loaded (%s); running without it", entry,
                 why ? why : "dlopen failed");
    return;
  }
  void *sym = dlsym(dl, "ballast_tool_init_v1");
  if (!sym) {
    warn_no_init(entry, dl);
    dlclose(dl);
    return;
  }
  ballast_tool_init_v1_fn init;
  memcpy(&init, &sym, sizeof init); /* POSIX: a data pointer that is a function */
  int err = 0, queued = 0;
  ballast_tool_t *t = tool__new(entry, init, dl, &queued, &err);
  if (!t) {
    dlclose(dl);
    return;
  }
  /* A tool that declines or fails stays loaded: its init may have left
   * handlers (atexit, threads) that point into it. */
  (void)tool__run_init(t);
}
