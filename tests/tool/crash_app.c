/* The program of tool_crash (check_crash.py): every rank enters region
 * "work", then the last rank enters region "crash", where tt_crash faults;
 * the others wait in MPI_Barrier until the job ends.
 * With argument "own", the program installs its own SIGSEGV handler
 * (SA_SIGINFO) before MPI_Init, as Open MPI installs its own: the handler
 * writes "crash_app: SIGSEGV si_code C si_addr 0xA" and ends the process
 * with status 42, so the test sees the signal details that reached it
 * through ballast's handlers. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ballast/mon.h>

static void put(char *b, size_t *n, const char *s) {
  while (*s)
    b[(*n)++] = *s++;
}

static void putnum(char *b, size_t *n, unsigned long long v, int base) {
  char d[24];
  int k = 0;
  do {
    d[k++] = "0123456789abcdef"[v % (unsigned)base];
    v /= (unsigned)base;
  } while (v);
  while (k)
    b[(*n)++] = d[--k];
}

static void own_handler(int sig, siginfo_t *info, void *ctx) {
  (void)ctx;
  char b[256];
  size_t n = 0;
  put(b, &n, "crash_app: ");
  put(b, &n, sig == SIGSEGV ? "SIGSEGV" : "other");
  put(b, &n, " si_code ");
  if (info->si_code < 0) {
    put(b, &n, "-");
    putnum(b, &n, (unsigned long long)-(long long)info->si_code, 10);
  } else {
    putnum(b, &n, (unsigned long long)info->si_code, 10);
  }
  put(b, &n, " si_addr 0x");
  putnum(b, &n, (unsigned long long)(uintptr_t)info->si_addr, 16);
  put(b, &n, "\n");
  ssize_t w = write(2, b, n);
  (void)w;
  _exit(42);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "own") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
  }
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  mon_region_begin("work");
  MPI_Barrier(MPI_COMM_WORLD);
  mon_region_end("work");
  if (me == np - 1) {
    mon_region_begin("crash");
    mon_region_end("crash");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
