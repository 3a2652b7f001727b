/*
 * The assertion layer's private interface: the compiled form of an
 * expression (parse.c), its evaluation (eval.c), the registry of assertions
 * and their results (assert.c), the attachment to regions and the run
 * (attach.c) and the end-of-run reduction and report (report.c).
 *
 * An expression compiles to a postfix program over a small table of inputs:
 * each input is a value read at the check (a metric of the scope, a program
 * variable, nprocs, rank, or a cross-rank aggregate of a sub-program), so the
 * evaluator itself only pushes numbers and applies operators.
 */
#ifndef BALLAST_ASSERT_INTERNAL_H
#define BALLAST_ASSERT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <ballast/pia.h>
#include <ballast/pia_assert.h>

enum {
  PA_OP_NUM, PA_OP_IN, PA_OP_NEG, PA_OP_NOT, PA_OP_ADD, PA_OP_SUB, PA_OP_MUL,
  PA_OP_DIV, PA_OP_LT, PA_OP_LE, PA_OP_GT, PA_OP_GE, PA_OP_EQ, PA_OP_NE,
  PA_OP_AND, PA_OP_OR, PA_OP_IMP, PA_OP_EXP, PA_OP_LOG, PA_OP_SQRT, PA_OP_ABS,
  PA_OP_POW, PA_OP_MIN, PA_OP_MAX
};

typedef struct {
  int op;
  int arg;    /* PA_OP_IN: input index */
  double num; /* PA_OP_NUM: the constant */
} pa_ins_t;

/* Kinds of input. */
enum { PA_IN_WALL, PA_IN_CPU, PA_IN_ACT, PA_IN_VAR, PA_IN_NPROCS, PA_IN_RANK,
       PA_IN_AGG, PA_IN_MPIT };
/* Fields of an activity's change over a scope. */
enum { PA_F_TIME, PA_F_CALLS, PA_F_BYTES };
enum { PA_AGG_MAX, PA_AGG_MIN, PA_AGG_AVG };

#define PA_MAX_TERMS 12
#define PA_MAX_STACK 64
#define PA_MAX_INPUTS 64 /* distinct names in one expression */
#define PA_MAX_AGGS 32
#define PA_MAX_ACTS 64   /* distinct activities in one expression */

typedef struct {
  int slot;  /* index into the program's acts[] */
  int field; /* PA_F_* */
  int sign;  /* +1 or -1 */
} pa_term_t;

typedef struct {
  int kind;
  char name[96]; /* as the report shows it: "WallTime", "time(MPI_Send)" */
  int var;       /* PA_IN_VAR: variable index; PA_IN_MPIT: MPI_T variable */
  int agg;       /* PA_IN_AGG: aggregate index */
  int nterm;     /* PA_IN_ACT: sum of terms */
  pa_term_t term[PA_MAX_TERMS];
} pa_input_t;

typedef struct {
  int op;    /* PA_AGG_* */
  int start; /* its sub-program in acode[] */
  int len;
} pa_agg_t;

typedef struct {
  pa_ins_t *code, *acode;
  int ncode, nacode;
  pa_input_t *in;
  int nin;
  pa_agg_t *agg;
  int nagg;
  int *acts; /* distinct activity ids the inputs read */
  int nact;
  int uses_cpu; /* reads CPUTime (a system call at both ends: only then) */
} pa_prog_t;

/* parse.c */
/** Compile \a expr into \a p (zeroed first). 0, or BALLAST_EPARSE /
 *  BALLAST_ENOTFOUND / BALLAST_ENOMEM with a message in msg. */
int assert__compile(const char *expr, pa_prog_t *p, char *msg, size_t len);
void assert__prog_free(pa_prog_t *p);

/* eval.c */
/** Change of the scope's activities: 3 values (time, calls, bytes) per act. */
typedef struct {
  double wall, cpu;
  double *act; /* 3 * nact */
} pa_delta_t;
/** The values of the program's inputs except the aggregates (left 0).
 *  BALLAST_ESTATE when a variable is not registered (its index in *badvar). */
int assert__inputs(const pa_prog_t *p, const pa_delta_t *d, double *vals, int *badvar);
/** Run the sub-program of aggregate \a k over \a vals. */
double assert__eval_agg(const pa_prog_t *p, int k, const double *vals);
/** Run \a n instructions over \a vals; the value left on top. */
double assert__eval_code(const pa_ins_t *code, int n, const double *vals);
/** Run the main program over \a vals: 1 held, 0 failed. */
int assert__eval(const pa_prog_t *p, const double *vals);
/** Read activity \a act's whole-run figures: time, calls, bytes. */
void assert__act_read(int act, double out[3]);
double assert__cpu_now(void);
uint64_t assert__now_ns(void);

/* assert.c: variables and the configuration file */
int assert__var_find_or_add(const char *name);       /* index, or BALLAST_ENOMEM */
int assert__var_read(int idx, double *v);            /* 0 or BALLAST_ESTATE */
const char *assert__var_name(int idx);
void assert__var_list(char *buf, size_t len);        /* registered names, ", " */
int assert__conf_get(const char *name, double *v, char *msg, size_t len);
int assert__world(int *rank, int *size);

/* The registry (assert.c). */
enum { PA_KIND_SCOPE, PA_KIND_REGION, PA_KIND_RUN };
typedef struct pa_assert {
  int id, kind, flags;
  char *text, *file, *region;
  int line;
  pa_prog_t prog;
  long long checks, passes, first_fail, errors; /* atomics */
  int warned;
  double *first_vals; /* nin values at the first failure */
} pa_assert_t;

int assert__count(void);
/** Where it came from: "file:line", "region NAME", "run" or "code". */
void assert__source(const pa_assert_t *a, char *buf, size_t len);
/** Frees the MPI objects (the aggregates' operation): at finalize. */
void assert__mpi_teardown(void);
/** Frees every assertion (at exit, after the report). */
void assert__registry_teardown(void);
pa_assert_t *assert__get(int id);
/** Create from options: the id, or a negative code (message in msg). */
int assert__create(const pia_assert_options_t *o, char *msg, size_t len);
/** Check \a a over delta \a d: 1 held, 0 failed, negative error. Runs the
 *  failure action. Collective when the program has aggregates. */
int assert__check(pa_assert_t *a, const pa_delta_t *d);
int assert__action_exit(void);

/* scope.c */
void assert__region_added(void);
void assert__region_enter(int id, const char *name);
void assert__region_exit(int id, const char *name);
void assert__run_checks(void);
void assert__scope_teardown(void);

/* attach.c */
/** Reads BALLAST_ASSERT_FILE (once): creates its assertions. */
int assert__file_load(const char *path);
/** A region or run assertion was created: attach the tool callbacks. */
void assert__attach_need(void);

/* report.c */
/** Collective at finalize: reduce results over ranks, register the report
 *  section. Returns the number of assertions that failed on any rank. */
long long assert__finalize_reduce(void);


#endif
