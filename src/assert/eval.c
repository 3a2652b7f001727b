/* Evaluation of a compiled assertion: the inputs are read from a scope's
 * change (assert__inputs), then the postfix program runs over them with a fixed
 * stack. The parser bounded the stack depth, so the loop checks nothing. */
#include <math.h>
#include <time.h>

#include <ballast/tool.h>

#include "assert/assert_internal.h"
#include "common/common_internal.h"

/* The events' clock (mon's calibrated TSC where it has one): a scope's wall
 * time costs no system call. */
uint64_t assert__now_ns(void) { return ballast_tool_now_ns(); }

double assert__cpu_now(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void assert__act_read(int act, double out[3]) {
  pia_actdata_t d;
  pia_actdata_init(&d);
  if (pia_activity_data(act, &d) < 0) {
    out[0] = out[1] = out[2] = 0;
    return;
  }
  out[0] = d.tsum;
  out[1] = (double)d.ncalls;
  out[2] = (double)d.nbytes;
}

int assert__inputs(const pa_prog_t *p, const pa_delta_t *d, double *vals, int *badvar) {
  int rank = 0, size = 1;
  int rc = 0;
  for (int i = 0; i < p->nin; i++) {
    const pa_input_t *in = &p->in[i];
    double v = 0;
    switch (in->kind) {
    case PA_IN_WALL:
      v = d->wall;
      break;
    case PA_IN_CPU:
      v = d->cpu;
      break;
    case PA_IN_ACT:
      for (int t = 0; t < in->nterm; t++)
        v += in->term[t].sign * d->act[3 * in->term[t].slot + in->term[t].field];
      /* A difference of sums can come out a rounding error below zero. */
      if (v < 0 && in->term[0].field == PA_F_TIME && in->nterm > 1)
        v = 0;
      break;
    case PA_IN_VAR:
      if (assert__var_read(in->var, &v) < 0) {
        if (badvar)
          *badvar = in->var;
        rc = BALLAST_ESTATE;
      }
      break;
    case PA_IN_MPIT:
      if (pia_mpit_read(in->var, &v) < 0)
        rc = BALLAST_ESTATE;
      break;
    case PA_IN_NPROCS:
    case PA_IN_RANK:
      assert__world(&rank, &size);
      v = in->kind == PA_IN_RANK ? rank : size;
      break;
    default: /* aggregates: filled by the caller after the reduction */
      break;
    }
    vals[i] = v;
  }
  return rc;
}

double assert__eval_code(const pa_ins_t *code, int n, const double *vals) {
  double st[PA_MAX_STACK + 1];
  int sp = 0;
  for (int i = 0; i < n; i++) {
    const pa_ins_t *c = &code[i];
    double b;
    switch (c->op) {
    case PA_OP_NUM: st[sp++] = c->num; continue;
    case PA_OP_IN: st[sp++] = vals[c->arg]; continue;
    case PA_OP_NEG: st[sp - 1] = -st[sp - 1]; continue;
    case PA_OP_NOT: st[sp - 1] = st[sp - 1] == 0; continue;
    case PA_OP_EXP: st[sp - 1] = exp(st[sp - 1]); continue;
    case PA_OP_LOG: st[sp - 1] = log(st[sp - 1]); continue;
    case PA_OP_SQRT: st[sp - 1] = sqrt(st[sp - 1]); continue;
    case PA_OP_ABS: st[sp - 1] = fabs(st[sp - 1]); continue;
    default: break;
    }
    b = st[--sp];
    double *a = &st[sp - 1];
    switch (c->op) {
    case PA_OP_ADD: *a += b; break;
    case PA_OP_SUB: *a -= b; break;
    case PA_OP_MUL: *a *= b; break;
    case PA_OP_DIV: *a /= b; break;
    case PA_OP_LT: *a = *a < b; break;
    case PA_OP_LE: *a = *a <= b; break;
    case PA_OP_GT: *a = *a > b; break;
    case PA_OP_GE: *a = *a >= b; break;
    case PA_OP_EQ: *a = *a == b; break;
    case PA_OP_NE: *a = *a != b; break;
    case PA_OP_AND: *a = *a != 0 && b != 0; break;
    case PA_OP_OR: *a = *a != 0 || b != 0; break;
    case PA_OP_IMP: *a = *a == 0 || b != 0; break;
    case PA_OP_POW: *a = pow(*a, b); break;
    case PA_OP_MIN: *a = b < *a ? b : *a; break;
    case PA_OP_MAX: *a = b > *a ? b : *a; break;
    default: break;
    }
  }
  return sp > 0 ? st[sp - 1] : 0;
}

double assert__eval_agg(const pa_prog_t *p, int k, const double *vals) {
  return assert__eval_code(p->acode + p->agg[k].start, p->agg[k].len, vals);
}

int assert__eval(const pa_prog_t *p, const double *vals) {
  double v = assert__eval_code(p->code, p->ncode, vals);
  /* NaN (0/0, log of a negative) is not a truth: the assertion fails. */
  return v == v && v != 0;
}
