/* Installing ballast's signal handlers, and handing a caught signal on to the
 * handler that was there before, with the signal's own details. */
#ifndef BALLAST_COMMON_SIGCHAIN_H
#define BALLAST_COMMON_SIGCHAIN_H

#include <signal.h>
#include <stddef.h>

/**
 * Called at the end of a ballast signal handler (installed with SA_SIGINFO)
 * to hand signal \a sig on to \a old, the disposition that was there before
 * ours, so the process goes on or ends as it would have without ballast and
 * whoever handles the signal next sees what the kernel gave (si_code,
 * si_addr, si_pid, the context); the signal is never raised anew with
 * raise(), which would turn a fault into SI_TKILL from this process.
 * - \a old a function: called directly with \a info and \a ctx as the
 *   kernel would (its sa_mask blocked during the call, SA_RESETHAND
 *   honoured);
 * - \a old the default action (or ignoring a fault): \a old put back; a
 *   fault the kernel raised (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP with
 *   si_code > 0) is left to happen again when the handler returns, at the
 *   same instruction with the same details; any other signal is queued
 *   again to this thread with its original siginfo (rt_tgsigqueueinfo);
 * - \a old ignoring a signal that is not a fault: nothing.
 * The caller decides whether its own handler stays installed (put \a old
 * back first with sigaction() to make it one-shot). Async-signal-safe.
 */
void ballast__sig_chain(int sig, siginfo_t *info, void *ctx, const struct sigaction *old);

/**
 * Installs \a fn (SA_SIGINFO, no extra mask) for each of the \a n signals
 * \a sigs, keeping what was there before in \a old[k], for
 * ballast__sig_chain and for putting it back.
 */
void ballast__sig_install(const int *sigs, int n, void (*fn)(int, siginfo_t *, void *),
                          struct sigaction *old);

/** The signal's name ("SIGSEGV"), or "signal" for one not listed.
 *  Async-signal-safe. */
const char *ballast__sig_name(int sig);

/**
 * A line built with no allocation, for signal handlers: the text of \a s
 * appended to \a buf (capacity \a cap, kept NUL-terminated), at \a *len.
 * Async-signal-safe.
 */
void ballast__sig_puts(char *buf, size_t cap, size_t *len, const char *s);
/** The same for an unsigned number in base 10 or 16 (16: with "0x"). */
void ballast__sig_putu(char *buf, size_t cap, size_t *len, unsigned long long v, int base);
/** The same for a signed number in base 10. */
void ballast__sig_puti(char *buf, size_t cap, size_t *len, long long v);

#endif
