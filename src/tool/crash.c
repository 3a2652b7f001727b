/*
 * A tool that crashes inside a callback: before the process dies, one line
 * on stderr names the tool (its name and the file it was loaded from) and
 * the event whose callback it was in, then the signal goes on, unchanged,
 * to the handler that was there before (ballast's profile-on-crash handler,
 * Open MPI's, the program's, or the default): that one sees the kernel's own
 * si_code and failing address, as it would without ballast.
 *
 * Installed before the first tool's init runs (at MPI_Init, after Open MPI and
 * mon installed theirs), removed after the finalize event. The dispatch
 * keeps "which callback this thread is in" (tool.c, tl_in); the handler
 * reads it, formats into a buffer on its stack and write(2)s: nothing here
 * allocates or locks.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "common/sigchain.h"
#include "tool/tool_internal.h"

static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGS ((int)(sizeof sigs / sizeof sigs[0]))
static struct sigaction old_act[NSIGS];
static int armed;     /* 0, 1 (installed), 2 (removed); changed under a lock-free CAS */
static int crash_rank = -1;

static void on_crash(int sig, siginfo_t *info, void *ctx) {
  int k = 0;
  while (k < NSIGS && sigs[k] != sig)
    k++;
  const char *name, *file, *event;
  if (tool__current(&name, &file, &event)) {
    char b[1536];
    size_t n = 0;
    b[0] = 0;
    ballast__sig_puts(b, sizeof b, &n, "ballast");
    if (crash_rank >= 0) {
      ballast__sig_puts(b, sizeof b, &n, "[");
      ballast__sig_puti(b, sizeof b, &n, crash_rank);
      ballast__sig_puts(b, sizeof b, &n, "]");
    }
    ballast__sig_puts(b, sizeof b, &n, ": error: tool \"");
    ballast__sig_puts(b, sizeof b, &n, name);
    ballast__sig_puts(b, sizeof b, &n, "\"");
    if (file && strcmp(file, name) != 0) {
      ballast__sig_puts(b, sizeof b, &n, " (");
      ballast__sig_puts(b, sizeof b, &n, file);
      ballast__sig_puts(b, sizeof b, &n, ")");
    }
    ballast__sig_puts(b, sizeof b, &n, " crashed in its ");
    ballast__sig_puts(b, sizeof b, &n, event);
    ballast__sig_puts(b, sizeof b, &n, strcmp(event, "init") ? " callback: " : " function: ");
    ballast__sig_puts(b, sizeof b, &n, ballast__sig_name(sig));
    if (info) {
      ballast__sig_puts(b, sizeof b, &n, " (si_code ");
      ballast__sig_puti(b, sizeof b, &n, info->si_code);
      if (sig != SIGABRT) {
        ballast__sig_puts(b, sizeof b, &n, ", address ");
        ballast__sig_putu(b, sizeof b, &n, (unsigned long long)(uintptr_t)info->si_addr, 16);
      }
      ballast__sig_puts(b, sizeof b, &n, ")");
    }
    ballast__sig_puts(b, sizeof b, &n, "\n");
    if (n + 1 >= sizeof b)
      b[sizeof b - 2] = '\n';
    ssize_t w = write(2, b, strlen(b));
    (void)w;
  }
  if (k < NSIGS)
    ballast__sig_chain(sig, info, ctx, &old_act[k]);
}

void tool__crash_arm(void) {
  int want = 0;
  if (!__atomic_compare_exchange_n(&armed, &want, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return;
  crash_rank = ballast__world_rank();
  ballast__sig_install(sigs, NSIGS, on_crash, old_act);
}

void tool__crash_disarm(void) {
  int want = 1;
  if (!__atomic_compare_exchange_n(&armed, &want, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return;
  for (int k = 0; k < NSIGS; k++) {
    /* Only where ours is still the handler: one installed over it since
     * keeps its place (and may call ours, which still hands on). */
    struct sigaction cur;
    if (sigaction(sigs[k], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_crash)
      sigaction(sigs[k], &old_act[k], NULL);
  }
}
