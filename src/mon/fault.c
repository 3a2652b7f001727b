/*
 * Nothing lost when a rank dies: with BALLAST_PROFILE=path set, each rank
 * writes its own part of the profile to "path.part<rank>" when
 *  - the program calls MPI_Abort (the wrapper below, before PMPI_Abort;
 *    Open MPI then ends the other ranks with SIGTERM, which they catch);
 *  - a fatal signal it can catch arrives (SIGTERM, SIGINT, SIGHUP, SIGQUIT,
 *    SIGXCPU, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT);
 *  - the program exits without MPI_Finalize (mon's atexit teardown);
 *  - and every BALLAST_PROFILE_INTERVAL seconds when set, so that a rank
 *    killed by SIGKILL (a scheduler's time limit) leaves its part as of its
 *    last interval.
 * `ballast-profile-merge` turns the parts into a profile of the usual
 * format. A rank that reaches MPI_Finalize writes its part once more on
 * entering it (reason "MPI_Finalize", its final figures), before any of
 * the collectives that write the report and the profile, and removes it
 * only when every rank has learnt that rank 0 wrote the job's profile
 * whole (written to PATH.tmp, renamed to PATH): so a rank that leaves the
 * job early (exit without MPI_Finalize, a crash) and makes Open MPI end
 * the others costs no other rank its data, and a profile that cannot be
 * written leaves every rank's part.
 *
 * The signal handler is async-signal-safe: the part is rendered into a
 * buffer allocated at MPI_Init (and grown, outside any handler, whenever a
 * periodic or exit-time part comes near its size), with mon__fmt_safe
 * instead of vsnprintf, reading mon's counters with the atomic loads they
 * are made for and skipping a partner table whose lock is taken; then
 * open(2), write(2), close(2), rename(2). Afterwards the handler that was
 * there before (Open MPI's, the application's, or the default) is put back
 * and the signal handed on with the kernel's own siginfo
 * (ballast__sig_chain: the previous handler called with it, or the fault
 * left to happen again), so the process ends as it would have and Open
 * MPI's report names the real fault (si_code, address), not a signal this
 * process raised.
 *
 * Periodic parts are written at the first MPI call after the interval
 * elapsed (one comparison of the tick counter there), not from
 * a timer: a timer signal would interrupt the application's system calls
 * (EINTR) and need the same signal-safe rendering for every interval, and a
 * thread would compete for the cores of a job that uses all of them. A rank
 * that makes no MPI call for longer than the interval
 * writes no part in between; its part is as of its last MPI call.
 * Parts go to "part.tmp" then rename(2) over the part, so a kill during a
 * write leaves the previous part whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "common/sigchain.h"
#include "mon/mon_core.h"

uint64_t mon__fault_next = UINT64_MAX;

static char part_path[4096], tmp_path[4100];
static int my_rank, nranks;
static char *sigbuf;          /* the handler's buffer */
static size_t sigcap;
static int sig_busy;          /* atomic: the handler's buffer is in use */
static int armed;             /* handlers installed */
static uint64_t interval_ticks;
static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU,
                           SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGS ((int)(sizeof sigs / sizeof sigs[0]))
static struct sigaction old_act[NSIGS];

/* ---- an async-signal-safe formatter ------------------------------------------- */

typedef struct {
  char *o;
  size_t cap, n;
} out_t;

static void put_c(out_t *w, char c) {
  if (w->n + 1 < w->cap)
    w->o[w->n] = c;
  w->n++;
}

static void put_u(out_t *w, unsigned long long v, unsigned base, int width, char pad) {
  char d[32];
  int k = 0;
  do {
    d[k++] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v);
  for (int i = k; i < width; i++)
    put_c(w, pad);
  while (k)
    put_c(w, d[--k]);
}

static void put_i(out_t *w, long long v) {
  if (v < 0) {
    put_c(w, '-');
    put_u(w, 0ull - (unsigned long long)v, 10, 0, ' ');
  } else {
    put_u(w, (unsigned long long)v, 10, 0, ' ');
  }
}

/* %.Pg: P significant digits, trailing zeros dropped, exponent form outside
 * 1e-4 .. 1e P, as printf does (to the last digit's rounding). */
static void put_g(out_t *w, double x, int prec) {
  if (prec < 1)
    prec = 1;
  if (prec > 17)
    prec = 17;
  if (!isfinite(x)) {
    const char *s = isnan(x) ? "nan" : x < 0 ? "-inf" : "inf";
    while (*s)
      put_c(w, *s++);
    return;
  }
  if (x < 0) {
    put_c(w, '-');
    x = -x;
  }
  if (x == 0) {
    put_c(w, '0');
    return;
  }
  int e = (int)floor(log10(x));
  double scaled = x / pow(10.0, e - prec + 1);
  unsigned long long m = (unsigned long long)llround(scaled);
  unsigned long long lim = 1;
  for (int i = 0; i < prec; i++)
    lim *= 10;
  if (m >= lim) { /* rounding carried into one more digit */
    m /= 10;
    e++;
  }
  char dig[20];
  for (int i = prec - 1; i >= 0; i--) {
    dig[i] = (char)('0' + m % 10);
    m /= 10;
  }
  int nd = prec;
  while (nd > 1 && dig[nd - 1] == '0')
    nd--;
  if (e < -4 || e >= prec) {
    put_c(w, dig[0]);
    if (nd > 1)
      put_c(w, '.');
    for (int i = 1; i < nd; i++)
      put_c(w, dig[i]);
    put_c(w, 'e');
    put_c(w, e < 0 ? '-' : '+');
    put_u(w, (unsigned long long)(e < 0 ? -e : e), 10, 2, '0');
  } else if (e < 0) {
    put_c(w, '0');
    put_c(w, '.');
    for (int i = -1; i > e; i--)
      put_c(w, '0');
    for (int i = 0; i < nd; i++)
      put_c(w, dig[i]);
  } else {
    for (int i = 0; i <= e; i++)
      put_c(w, i < nd ? dig[i] : '0');
    if (nd > e + 1) {
      put_c(w, '.');
      for (int i = e + 1; i < nd; i++)
        put_c(w, dig[i]);
    }
  }
}

int mon__fmt_safe(char *o, size_t cap, const char *f, va_list ap) {
  out_t w = {o, cap, 0};
  for (; *f; f++) {
    if (*f != '%') {
      put_c(&w, *f);
      continue;
    }
    f++;
    char pad = ' ';
    int width = 0, prec = 6, lng = 0, size = 0;
    if (*f == '0')
      pad = '0';
    while (*f >= '0' && *f <= '9')
      width = width * 10 + (*f++ - '0');
    if (*f == '.') {
      prec = 0;
      for (f++; *f >= '0' && *f <= '9'; f++)
        prec = prec * 10 + (*f - '0');
    }
    for (; *f == 'l'; f++)
      lng++;
    if (*f == 'z') {
      size = 1;
      f++;
    }
    switch (*f) {
    case 'd':
    case 'i':
      put_i(&w, lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int));
      break;
    case 'u':
    case 'x': {
      unsigned long long v = size ? va_arg(ap, size_t)
                             : lng >= 2 ? va_arg(ap, unsigned long long)
                             : lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
      put_u(&w, v, *f == 'x' ? 16 : 10, width, pad);
      break;
    }
    case 'g':
    case 'f':
      put_g(&w, va_arg(ap, double), prec);
      break;
    case 's':
      for (const char *s = va_arg(ap, const char *); s && *s; s++)
        put_c(&w, *s);
      break;
    case 'c':
      put_c(&w, (char)va_arg(ap, int));
      break;
    case '%':
      put_c(&w, '%');
      break;
    default: /* not one the profile uses: stop rather than misread the arguments */
      if (cap)
        o[w.n < cap ? w.n : cap - 1] = 0;
      return (int)w.n;
    }
  }
  if (cap)
    o[w.n < cap ? w.n : cap - 1] = 0;
  return (int)w.n;
}

/* ---- writing a part ------------------------------------------------------------- */

/* write(2) all of it; 0 or -1. */
static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* The part through a temporary file and rename(2): signal-safe calls only. */
static int put_file(const char *text, size_t len) {
  int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return -1;
  int bad = write_all(fd, text, len);
  bad |= close(fd);
  if (!bad)
    bad = rename(tmp_path, part_path);
  return bad;
}

void mon__fault_write(const char *reason) {
  /* MON__DONE: inside MPI_Finalize, the figures final. */
  if (!part_path[0] || MON__LD(&mon__state) == MON__OFF)
    return;
  size_t len = 0;
  char *text = mon__profile_part(my_rank, nranks, reason, &len);
  if (!text || put_file(text, len) != 0)
    BALLAST_WARN("mon: cannot write this rank's profile part %s", part_path);
  /* Keep the handler's buffer twice the largest part seen, so a signal
   * finds room; never while the handler may be using it. */
  if (text && len * 2 > sigcap && !__atomic_exchange_n(&sig_busy, 1, __ATOMIC_ACQUIRE)) {
    char *nb = malloc(len * 2);
    if (nb) {
      free(sigbuf);
      sigbuf = nb;
      sigcap = len * 2;
    }
    __atomic_store_n(&sig_busy, 0, __ATOMIC_RELEASE);
  }
  free(text);
}

void mon__fault_tick(uint64_t now) {
  /* Only one thread writes; the others go on at once. */
  static int writing;
  if (__atomic_exchange_n(&writing, 1, __ATOMIC_ACQUIRE))
    return;
  MON__ST(&mon__fault_next, now + interval_ticks);
  mon__fault_write("interval");
  __atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
}

static void on_signal(int sig, siginfo_t *info, void *ctx) {
  int saved = errno;
  int k = 0;
  while (k < NSIGS && sigs[k] != sig)
    k++;
  /* Inside MPI_Finalize (MON__DONE) the part written on entering it holds
   * the final figures already. */
  if (MON__LD(&mon__state) == MON__ON &&
      !__atomic_exchange_n(&sig_busy, 1, __ATOMIC_ACQUIRE) && sigbuf) {
    size_t len = mon__profile_part_fixed(sigbuf, sigcap, my_rank, nranks,
                                         ballast__sig_name(sig));
    if (len)
      put_file(sigbuf, len);
    /* sig_busy stays set: one part per process from a handler */
  }
  errno = saved;
  if (k == NSIGS)
    return;
  /* The previous handler back, then the signal handed on as the kernel
   * gave it: the process ends (or goes on) as it would have without
   * ballast, and the next handler sees the real si_code and address. */
  sigaction(sig, &old_act[k], NULL);
  ballast__sig_chain(sig, info, ctx, &old_act[k]);
}

/* BALLAST_PROFILE_INTERVAL: seconds, > 0, a plain number. 0 when unset. */
static double read_interval(void) {
  const char *s = getenv("BALLAST_PROFILE_INTERVAL");
  if (!s || !*s)
    return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0) || v > 1e6) {
    if (my_rank == 0)
      BALLAST_WARN("mon: BALLAST_PROFILE_INTERVAL=%s is not a number of seconds in "
                   "(0, 1e6]; no periodic parts", s);
    return 0;
  }
  return v;
}

void mon__fault_init(void) {
  if (!mon__cfg.profile)
    return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int n = snprintf(part_path, sizeof part_path, "%s.part%d", mon__cfg.profile, my_rank);
  if (n < 0 || (size_t)n >= sizeof part_path) {
    part_path[0] = 0;
    return;
  }
  snprintf(tmp_path, sizeof tmp_path, "%s.tmp", part_path);
  /* Untouched pages cost nothing; a part is ~200 bytes per region. */
  sigcap = (size_t)1 << 20;
  sigbuf = malloc(sigcap);
  if (!sigbuf)
    sigcap = 0;
  ballast__sig_install(sigs, NSIGS, on_signal, old_act);
  armed = 1;
  double iv = read_interval();
  if (iv > 0) {
    interval_ticks = (uint64_t)(iv / mon__tick_seconds());
    if (!interval_ticks)
      interval_ticks = 1;
    MON__ST(&mon__fault_next, mon__ticks() + interval_ticks);
  }
}

void mon__fault_finalize(int profile_rc) {
  MON__ST(&mon__fault_next, UINT64_MAX);
  if (armed) {
    for (int k = 0; k < NSIGS; k++)
      sigaction(sigs[k], &old_act[k], NULL);
    armed = 0;
  }
  /* The parts go only once the job's profile is whole on disk, which only
   * rank 0 knows: every rank learns it (the rank that failed, rank 0, and
   * its code). Every rank with BALLAST_PROFILE set takes part. */
  int who = -1, code = 0;
  int agreed = mon__cfg.profile ? ballast__agree(MPI_COMM_WORLD, profile_rc, &who, &code) : 0;
  if (agreed != 0) {
    if (my_rank == 0 && part_path[0])
      BALLAST_WARN("mon: the profile %s was not written (%s): every rank keeps its part "
                   "(%s.part<rank>); merge them with ballast-profile-merge",
                   mon__cfg.profile, ballast_err_name(code), mon__cfg.profile);
  } else if (part_path[0]) {
    unlink(part_path);
    unlink(tmp_path);
  }
  if (!__atomic_exchange_n(&sig_busy, 1, __ATOMIC_ACQUIRE)) {
    free(sigbuf);
    sigbuf = NULL;
    sigcap = 0;
  }
}

/* Hand-written, not from mpi31.spec: MPI_Abort ends the job, so it is not
 * measured; it only gives this rank the chance to leave its part. */
int MPI_Abort(MPI_Comm comm, int errorcode) {
  mon__fault_write("MPI_Abort");
  /* The SIGTERM Open MPI may send this process too must not replace the
   * part that says why the job ended. */
  __atomic_store_n(&sig_busy, 1, __ATOMIC_RELEASE);
  return PMPI_Abort(comm, errorcode);
}
