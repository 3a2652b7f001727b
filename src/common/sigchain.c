/* Handing a caught signal on with its own details (common/sigchain.h), and
 * the few formatting helpers a handler's message needs. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sigchain.h"

/* A fault the kernel raised at an instruction: it happens again there. */
static int is_fault(int sig, const siginfo_t *info) {
  return info && info->si_code > 0 &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP);
}

void ballast__sig_install(const int *sigs, int n, void (*fn)(int, siginfo_t *, void *),
                          struct sigaction *old) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (int k = 0; k < n; k++)
    sigaction(sigs[k], &sa, &old[k]);
}

void ballast__sig_chain(int sig, siginfo_t *info, void *ctx, const struct sigaction *old) {
  int saved = errno;
  if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    /* What the kernel does when it delivers to a handler: the handler's
     * mask added (the signal itself is blocked already, being ours),
     * SA_RESETHAND's default put back before the call. */
    sigset_t prev;
    sigprocmask(SIG_BLOCK, &old->sa_mask, &prev);
    void (*act)(int, siginfo_t *, void *) = old->sa_sigaction;
    void (*plain)(int) = old->sa_handler;
    int with_info = (old->sa_flags & SA_SIGINFO) != 0;
    if (old->sa_flags & SA_RESETHAND) {
      struct sigaction dfl;
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(sig, &dfl, NULL);
    }
    errno = saved;
    if (with_info)
      act(sig, info, ctx);
    else
      plain(sig);
    saved = errno;
    sigprocmask(SIG_SETMASK, &prev, NULL);
    errno = saved;
    return;
  }
  if (old->sa_handler == SIG_IGN && !is_fault(sig, info)) {
    errno = saved;
    return;
  }
  /* The default action (a fault cannot be ignored: the kernel would end the
   * process, and so does the default). */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  if (!is_fault(sig, info)) {
    /* Pending until this handler returns, then the default action, with
     * the siginfo the kernel gave (the kernel lets a process send itself
     * any si_code). raise() only if that is refused: the process ends by
     * the same signal either way. */
    siginfo_t again;
    if (info) {
      again = *info;
      if (syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), sig, &again) != 0)
        raise(sig);
    } else {
      raise(sig);
    }
  }
  errno = saved;
}

const char *ballast__sig_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGABRT: return "SIGABRT";
  case SIGTRAP: return "SIGTRAP";
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGHUP: return "SIGHUP";
  case SIGQUIT: return "SIGQUIT";
  case SIGXCPU: return "SIGXCPU";
  default: return "signal";
  }
}

void ballast__sig_puts(char *buf, size_t cap, size_t *len, const char *s) {
  while (s && *s && *len + 1 < cap)
    buf[(*len)++] = *s++;
  if (cap)
    buf[*len < cap ? *len : cap - 1] = 0;
}

void ballast__sig_putu(char *buf, size_t cap, size_t *len, unsigned long long v, int base) {
  char d[24];
  int k = 0;
  do {
    d[k++] = "0123456789abcdef"[v % (unsigned)base];
    v /= (unsigned)base;
  } while (v);
  char s[28];
  int n = 0;
  if (base == 16) {
    s[n++] = '0';
    s[n++] = 'x';
  }
  while (k)
    s[n++] = d[--k];
  s[n] = 0;
  ballast__sig_puts(buf, cap, len, s);
}

void ballast__sig_puti(char *buf, size_t cap, size_t *len, long long v) {
  if (v < 0) {
    ballast__sig_puts(buf, cap, len, "-");
    ballast__sig_putu(buf, cap, len, 0ull - (unsigned long long)v, 10);
  } else {
    ballast__sig_putu(buf, cap, len, (unsigned long long)v, 10);
  }
}
