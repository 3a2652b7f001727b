/* The assertion language: a lexer and a recursive-descent parser that emit a
 * postfix program (assert_internal.h). Names are resolved here, once, so a
 * check never looks anything up: metrics become sums of activity terms,
 * configuration values become constants, variables and aggregates become
 * inputs. Every error names the column and shows a caret. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "assert/assert_internal.h"
#include "common/common_internal.h"

enum { T_END, T_NUM, T_NAME, T_VAR, T_OP, T_LP, T_RP, T_COMMA, T_BAD };

typedef struct {
  const char *src;
  size_t pos;        /* where the current token starts */
  size_t next;       /* just past it */
  int tok;
  double num;
  char text[64];     /* T_NAME / T_VAR / T_OP spelling */
  int depth;         /* parenthesis and call nesting */
  int in_agg;        /* inside max_ranks() and its siblings */
  int sp, maxsp;     /* simulated stack depth of the emitted code */
  pa_prog_t *p;
  int cap_code, cap_acode, cap_in, cap_agg, cap_acts;
  int err;
  char *msg;
  size_t len;
} parser_t;

#define MAX_DEPTH 48
#define MAX_CODE 4096

static void fail(parser_t *ps, int code, size_t col, const char *fmt, ...) {
  if (ps->err)
    return;
  ps->err = code;
  if (!ps->msg || !ps->len)
    return;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* The caret line: the expression (tabs kept so the caret lines up). */
  char caret[256];
  size_t n = col < sizeof caret - 2 ? col : sizeof caret - 2;
  for (size_t i = 0; i < n; i++)
    caret[i] = ps->src[i] == '\t' ? '\t' : ' ';
  caret[n] = '^';
  caret[n + 1] = 0;
  snprintf(ps->msg, ps->len, "column %zu: %s\n  %.200s\n  %s", col + 1, what, ps->src,
           caret);
}

static int is_name0(int c) { return isalpha(c) || c == '_'; }
static int is_name(int c) { return isalnum(c) || c == '_'; }

static void lex(parser_t *ps) {
  const char *s = ps->src;
  size_t i = ps->next;
  while (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')
    i++;
  ps->pos = i;
  ps->text[0] = 0;
  if (!s[i]) {
    ps->tok = T_END;
    ps->next = i;
    return;
  }
  unsigned char c = (unsigned char)s[i];
  if (isdigit(c) || (c == '.' && isdigit((unsigned char)s[i + 1]))) {
    char *end;
    ps->num = strtod(s + i, &end);
    ps->tok = T_NUM;
    ps->next = (size_t)(end - s);
    return;
  }
  if (is_name0(c) || (c == '$' && is_name0((unsigned char)s[i + 1]))) {
    size_t j = i + (c == '$');
    size_t k = j;
    while (is_name((unsigned char)s[k]))
      k++;
    size_t n = k - j;
    ps->tok = c == '$' ? T_VAR : T_NAME;
    ps->next = k;
    if (n >= sizeof ps->text) {
      ps->tok = T_BAD;
      fail(ps, BALLAST_EPARSE, i, "name longer than %zu characters", sizeof ps->text - 1);
      return;
    }
    memcpy(ps->text, s + j, n);
    ps->text[n] = 0;
    return;
  }
  static const char *ops[] = {"->", "<=", ">=", "==", "!=", "&&", "||", "<", ">",
                              "&",  "|",  "!",  "+",  "-",  "*",  "/"};
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
    size_t n = strlen(ops[o]);
    if (!strncmp(s + i, ops[o], n)) {
      ps->tok = T_OP;
      memcpy(ps->text, ops[o], n + 1);
      ps->next = i + n;
      return;
    }
  }
  ps->next = i + 1;
  ps->tok = c == '(' ? T_LP : c == ')' ? T_RP : c == ',' ? T_COMMA : T_BAD;
  if (ps->tok == T_BAD)
    fail(ps, BALLAST_EPARSE, i, "unexpected character '%c'", isprint(c) ? c : '?');
}

static int is_op(const parser_t *ps, const char *op) {
  return ps->tok == T_OP && !strcmp(ps->text, op);
}

/* ---- emitting --------------------------------------------------------------- */

static int grow(parser_t *ps, void **arr, int *cap, int need, size_t size) {
  if (need <= *cap)
    return 0;
  int n = *cap ? *cap * 2 : 16;
  while (n < need)
    n *= 2;
  void *q = ballast__realloc(*arr, (size_t)n * size);
  if (!q) {
    fail(ps, BALLAST_ENOMEM, ps->pos, "out of memory");
    return -1;
  }
  *arr = q;
  *cap = n;
  return 0;
}

/* Stack effect of each operator: what it pops less one (it pushes one). */
static int pops(int op) {
  if (op == PA_OP_NUM || op == PA_OP_IN)
    return 0;
  if (op == PA_OP_NEG || op == PA_OP_NOT || (op >= PA_OP_EXP && op <= PA_OP_ABS))
    return 1;
  return 2;
}

static void emit(parser_t *ps, int op, int arg, double num) {
  if (ps->err)
    return;
  pa_prog_t *p = ps->p;
  if (p->ncode >= MAX_CODE) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expression too long (over %d operations)", MAX_CODE);
    return;
  }
  if (grow(ps, (void **)&p->code, &ps->cap_code, p->ncode + 1, sizeof *p->code))
    return;
  p->code[p->ncode++] = (pa_ins_t){op, arg, num};
  /* Constant folding: an operator whose operands are all constants (units,
   * _config values) becomes one constant, so "10 ms" costs one push. The
   * operands of a postfix operator are the instructions just before it. */
  int k = pops(op);
  if (op != PA_OP_NUM && op != PA_OP_IN && p->ncode > k && p->code[p->ncode - 2].op == PA_OP_NUM &&
      (k == 1 || p->code[p->ncode - 3].op == PA_OP_NUM)) {
    int at = p->ncode - 1 - k;
    double v = assert__eval_code(p->code + at, k + 1, NULL);
    p->code[at] = (pa_ins_t){PA_OP_NUM, 0, v};
    p->ncode = at + 1;
  }
  ps->sp += 1 - pops(op);
  if (ps->sp > ps->maxsp)
    ps->maxsp = ps->sp;
  if (ps->maxsp > PA_MAX_STACK)
    fail(ps, BALLAST_EPARSE, ps->pos, "expression too deep (evaluation needs over %d values)",
         PA_MAX_STACK);
}

static int act_slot(parser_t *ps, int act) {
  pa_prog_t *p = ps->p;
  for (int i = 0; i < p->nact; i++)
    if (p->acts[i] == act)
      return i;
  if (p->nact >= PA_MAX_ACTS) {
    fail(ps, BALLAST_EPARSE, ps->pos, "more than %d activities in one expression", PA_MAX_ACTS);
    return -1;
  }
  if (grow(ps, (void **)&p->acts, &ps->cap_acts, p->nact + 1, sizeof *p->acts))
    return -1;
  p->acts[p->nact] = act;
  return p->nact++;
}

/* The input called \a name, added when new (inputs are shared by name). */
static int input(parser_t *ps, const pa_input_t *in) {
  pa_prog_t *p = ps->p;
  for (int i = 0; i < p->nin; i++)
    if (p->in[i].kind != PA_IN_AGG && !strcmp(p->in[i].name, in->name))
      return i;
  if (p->nin >= PA_MAX_INPUTS) {
    fail(ps, BALLAST_EPARSE, ps->pos, "more than %d distinct names in one expression",
         PA_MAX_INPUTS);
    return -1;
  }
  if (grow(ps, (void **)&p->in, &ps->cap_in, p->nin + 1, sizeof *p->in))
    return -1;
  p->in[p->nin] = *in;
  return p->nin++;
}

/* ---- names ---------------------------------------------------------------- */

/* A metric: a sum of (activity, field, sign) terms, or wall/cpu time. */
typedef struct {
  const char *name;
  int kind;
  int field;
  const char *plus, *minus; /* space-separated activity names */
} metric_t;

#define WAITS "MPI_Wait MPI_Waitall MPI_Waitany MPI_Waitsome"
static const metric_t metrics[] = {
    {"WallTime", PA_IN_WALL, 0, NULL, NULL},
    {"CPUTime", PA_IN_CPU, 0, NULL, NULL},
    {"MPITime", PA_IN_ACT, PA_F_TIME, "MPI_ALL", NULL},
    {"MPIPointToPointTime", PA_IN_ACT, PA_F_TIME, "MPI_P2P", NULL},
    {"MPICollectiveTime", PA_IN_ACT, PA_F_TIME, "MPI_COLL", NULL},
    {"MPIWaitTime", PA_IN_ACT, PA_F_TIME, WAITS, NULL},
    {"MPITransferTime", PA_IN_ACT, PA_F_TIME, "MPI_P2P MPI_COLL MPI_RMA MPI_IO",
     WAITS " MPI_Probe MPI_Iprobe MPI_Barrier"},
    {"MPICalls", PA_IN_ACT, PA_F_CALLS, "MPI_ALL", NULL},
    {"MPIBytes", PA_IN_ACT, PA_F_BYTES, "MPI_ALL", NULL},
};
#define NMETRICS (sizeof metrics / sizeof *metrics)

static const struct { const char *name; double scale; } units[] = {
    {"seconds", 1}, {"s", 1}, {"milliseconds", 1e-3}, {"ms", 1e-3},
    {"microseconds", 1e-6}, {"us", 1e-6}, {"KiB", 1024.0}, {"MiB", 1048576.0}};

static const struct { const char *name; int op, nargs; } funcs[] = {
    {"exp", PA_OP_EXP, 1}, {"log", PA_OP_LOG, 1}, {"sqrt", PA_OP_SQRT, 1},
    {"abs", PA_OP_ABS, 1}, {"pow", PA_OP_POW, 2}, {"min", PA_OP_MIN, 2},
    {"max", PA_OP_MAX, 2}};

static const char *aggs[] = {"max_ranks", "min_ranks", "avg_ranks"};
static const char *act_funcs[] = {"time", "calls", "bytes"};

#define VALID_NAMES                                                            \
  "WallTime, CPUTime, MPITime, MPIPointToPointTime, MPICollectiveTime, "       \
  "MPIWaitTime, MPITransferTime, MPICalls, MPIBytes, nprocs, rank, "           \
  "time(A), calls(A), bytes(A), mpit(V), exp, log, sqrt, abs, pow, min, max, "          \
  "max_ranks, min_ranks, avg_ranks, $variable, _config"

static int add_terms(parser_t *ps, pa_input_t *in, const char *list, int field, int sign) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    int act = pia_activity_find(t);
    if (act < 0) {
      fail(ps, BALLAST_ENOTFOUND, ps->pos, "activity %s is not monitored in this build", t);
      return -1;
    }
    int slot = act_slot(ps, act);
    if (slot < 0 || in->nterm >= PA_MAX_TERMS)
      return -1;
    in->term[in->nterm++] = (pa_term_t){slot, field, sign};
  }
  return 0;
}

static void emit_input(parser_t *ps, const pa_input_t *in) {
  int k = input(ps, in);
  if (k >= 0)
    emit(ps, PA_OP_IN, k, 0);
}

static void metric(parser_t *ps, const metric_t *m) {
  pa_input_t in = {.kind = m->kind};
  if (m->kind == PA_IN_CPU)
    ps->p->uses_cpu = 1;
  snprintf(in.name, sizeof in.name, "%s", m->name);
  if (m->plus && add_terms(ps, &in, m->plus, m->field, 1))
    return;
  if (m->minus && add_terms(ps, &in, m->minus, m->field, -1))
    return;
  emit_input(ps, &in);
}

/* A list of activity names sharing the first characters of \a bad. */
static void similar_acts(const char *bad, char *out, size_t len) {
  size_t used = (size_t)snprintf(out, len, "the groups " PIA_GROUP_P2P ", " PIA_GROUP_COLL
                                 ", " PIA_GROUP_RMA ", " PIA_GROUP_IO ", " PIA_GROUP_ALL
                                 " and the monitored MPI calls");
  /* Names sharing "MPI_" and the first letter after it. */
  size_t pre = strlen(bad) < 5 ? strlen(bad) : 5;
  int n = pia_activity_count(), shown = 0;
  for (int a = 0; a < n && shown < 12 && used + 2 < len; a++) {
    const char *nm = pia_activity_name(a);
    if (nm && !strncasecmp(nm, bad, pre)) {
      used += (size_t)snprintf(out + used, len - used, "%s%s", shown ? ", " : " such as ", nm);
      shown++;
    }
  }
}

static void expr(parser_t *ps);

/* time(A), calls(A), bytes(A): the name token is consumed, '(' is next. */
static void act_func(parser_t *ps, int field) {
  size_t at = ps->pos;
  lex(ps);
  if (ps->tok != T_NAME) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expected an MPI call or group name, e.g. MPI_Send");
    return;
  }
  int act = pia_activity_find(ps->text);
  if (act < 0) {
    char list[512];
    similar_acts(ps->text, list, sizeof list);
    fail(ps, BALLAST_ENOTFOUND, ps->pos, "unknown activity '%s'; valid: %s", ps->text, list);
    return;
  }
  pa_input_t in = {.kind = PA_IN_ACT};
  snprintf(in.name, sizeof in.name, "%s(%s)", act_funcs[field], ps->text);
  int slot = act_slot(ps, act);
  if (slot < 0)
    return;
  in.term[in.nterm++] = (pa_term_t){slot, field, 1};
  lex(ps);
  if (ps->tok != T_RP) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expected ')' closing %s( at column %zu", act_funcs[field], at + 1);
    return;
  }
  lex(ps);
  emit_input(ps, &in);
}

/* max_ranks(e) and siblings: e's code moves to the aggregate area. */
static void agg_func(parser_t *ps, int op, size_t at) {
  if (ps->in_agg) {
    fail(ps, BALLAST_EPARSE, at, "%s cannot appear inside another *_ranks()", aggs[op]);
    return;
  }
  pa_prog_t *p = ps->p;
  if (p->nagg >= PA_MAX_AGGS) {
    fail(ps, BALLAST_EPARSE, at, "more than %d *_ranks() in one expression", PA_MAX_AGGS);
    return;
  }
  int start = p->ncode, sp = ps->sp;
  ps->in_agg = 1;
  lex(ps);
  expr(ps);
  ps->in_agg = 0;
  if (ps->err)
    return;
  if (ps->tok != T_RP) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expected ')' closing %s( at column %zu", aggs[op],
         at + 1);
    return;
  }
  size_t end = ps->next; /* named by its text: "max_ranks(WallTime)" */
  lex(ps);
  int n = p->ncode - start;
  if (grow(ps, (void **)&p->acode, &ps->cap_acode, p->nacode + n, sizeof *p->acode) ||
      grow(ps, (void **)&p->agg, &ps->cap_agg, p->nagg + 1, sizeof *p->agg))
    return;
  memcpy(p->acode + p->nacode, p->code + start, (size_t)n * sizeof *p->code);
  p->agg[p->nagg] = (pa_agg_t){op, p->nacode, n};
  p->nacode += n;
  p->ncode = start;
  ps->sp = sp;
  pa_input_t in = {.kind = PA_IN_AGG, .agg = p->nagg++};
  snprintf(in.name, sizeof in.name, "%.*s", (int)(end - at), ps->src + at);
  int k = input(ps, &in);
  if (k >= 0)
    emit(ps, PA_OP_IN, k, 0);
}

static void call(parser_t *ps, int fi) {
  size_t at = ps->pos;
  lex(ps);
  for (int a = 0; a < funcs[fi].nargs && !ps->err; a++) {
    if (a > 0) {
      if (ps->tok != T_COMMA) {
        fail(ps, BALLAST_EPARSE, ps->pos, "%s takes %d arguments: expected ','",
             funcs[fi].name, funcs[fi].nargs);
        return;
      }
      lex(ps);
    }
    expr(ps);
  }
  if (ps->err)
    return;
  if (ps->tok != T_RP) {
    if (ps->tok == T_COMMA)
      fail(ps, BALLAST_EPARSE, ps->pos, "%s takes %d argument(s)", funcs[fi].name,
           funcs[fi].nargs);
    else
      fail(ps, BALLAST_EPARSE, ps->pos, "expected ')' closing %s( at column %zu",
           funcs[fi].name, at + 1);
    return;
  }
  lex(ps);
  emit(ps, funcs[fi].op, 0, 0);
}

/* A name followed by '(' (the current token is the name). */
/* mpit(NAME): an MPI_T variable ballast reads (BALLAST_MPIT), its value at
 * the check; the name token is consumed, '(' is next. */
static void mpit_func(parser_t *ps, size_t at) {
  lex(ps);
  if (ps->tok != T_NAME) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expected an MPI_T variable's name");
    return;
  }
  int v = pia_mpit_find(ps->text);
  if (v < 0) {
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < pia_mpit_count() && used + 2 < sizeof list; i++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                               pia_mpit_name(i));
    fail(ps, BALLAST_ENOTFOUND, ps->pos, "MPI_T variable '%s' is not read in this run "
         "(BALLAST_MPIT selects them); read: %s", ps->text, used ? list : "none");
    return;
  }
  pa_input_t in = {.kind = PA_IN_MPIT, .var = v};
  snprintf(in.name, sizeof in.name, "mpit(%s)", ps->text);
  lex(ps);
  if (ps->tok != T_RP) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expected ')' closing mpit( at column %zu", at + 1);
    return;
  }
  lex(ps);
  emit_input(ps, &in);
}

static void named_call(parser_t *ps) {
  char name[64];
  memcpy(name, ps->text, sizeof name);
  size_t at = ps->pos;
  lex(ps); /* '(' */
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, act_funcs[i])) {
      act_func(ps, i);
      return;
    }
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, aggs[i])) {
      agg_func(ps, i, at);
      return;
    }
  for (size_t i = 0; i < sizeof funcs / sizeof *funcs; i++)
    if (!strcmp(name, funcs[i].name)) {
      call(ps, (int)i);
      return;
    }
  if (!strcmp(name, "mpit")) {
    mpit_func(ps, at);
    return;
  }
  fail(ps, BALLAST_ENOTFOUND, at, "unknown function '%s'; valid: time, calls, bytes, mpit, "
       "exp, log, sqrt, abs, pow, min, max, max_ranks, min_ranks, avg_ranks", name);
}

static void config(parser_t *ps) {
  char m[400];
  double v;
  if (assert__conf_get(ps->text + 1, &v, m, sizeof m) < 0) {
    fail(ps, BALLAST_ENOTFOUND, ps->pos, "%s", m);
    return;
  }
  lex(ps);
  emit(ps, PA_OP_NUM, 0, v);
}

static void name(parser_t *ps) {
  if (ps->src[ps->next + strspn(ps->src + ps->next, " \t")] == '(') {
    named_call(ps);
    return;
  }
  if (ps->text[0] == '_') {
    config(ps);
    return;
  }
  for (size_t i = 0; i < NMETRICS; i++)
    if (!strcmp(ps->text, metrics[i].name)) {
      lex(ps);
      metric(ps, &metrics[i]);
      return;
    }
  if (!strcmp(ps->text, "nprocs") || !strcmp(ps->text, "rank")) {
    pa_input_t in = {.kind = ps->text[0] == 'n' ? PA_IN_NPROCS : PA_IN_RANK};
    snprintf(in.name, sizeof in.name, "%s", ps->text);
    lex(ps);
    emit_input(ps, &in);
    return;
  }
  fail(ps, BALLAST_ENOTFOUND, ps->pos, "unknown name '%s'; valid: " VALID_NAMES, ps->text);
}

static void primary(parser_t *ps) {
  switch (ps->tok) {
  case T_NUM:
    emit(ps, PA_OP_NUM, 0, ps->num);
    lex(ps);
    return;
  case T_VAR: {
    int v = assert__var_find_or_add(ps->text);
    if (v < 0) {
      fail(ps, v, ps->pos, "cannot record variable $%s", ps->text);
      return;
    }
    pa_input_t in = {.kind = PA_IN_VAR, .var = v};
    snprintf(in.name, sizeof in.name, "$%s", ps->text);
    lex(ps);
    emit_input(ps, &in);
    return;
  }
  case T_NAME:
    name(ps);
    return;
  case T_LP: {
    size_t at = ps->pos;
    lex(ps);
    expr(ps);
    if (!ps->err && ps->tok != T_RP)
      fail(ps, BALLAST_EPARSE, ps->pos, "expected ')' closing '(' at column %zu", at + 1);
    lex(ps);
    return;
  }
  case T_END:
    fail(ps, BALLAST_EPARSE, ps->pos, "unexpected end: expected a number, name or '('");
    return;
  default:
    fail(ps, BALLAST_EPARSE, ps->pos, "expected a number, name or '(' here");
  }
}

static void postfix(parser_t *ps) {
  primary(ps);
  if (ps->err || ps->tok != T_NAME)
    return;
  for (size_t u = 0; u < sizeof units / sizeof *units; u++)
    if (!strcmp(ps->text, units[u].name)) {
      emit(ps, PA_OP_NUM, 0, units[u].scale);
      emit(ps, PA_OP_MUL, 0, 0);
      lex(ps);
      return;
    }
}

static void unary(parser_t *ps) {
  if (ps->err)
    return;
  if (++ps->depth > MAX_DEPTH) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expression nested more than %d deep", MAX_DEPTH);
    return;
  }
  if (is_op(ps, "-") || is_op(ps, "!")) {
    int op = ps->text[0] == '-' ? PA_OP_NEG : PA_OP_NOT;
    lex(ps);
    unary(ps);
    emit(ps, op, 0, 0);
  } else {
    postfix(ps);
  }
  ps->depth--;
}

typedef struct { const char *tok; int op; } binop_t;

static int match(parser_t *ps, const binop_t *ops, int n) {
  for (int i = 0; i < n; i++)
    if (is_op(ps, ops[i].tok))
      return ops[i].op;
  return -1;
}

/* The binary operators by level, loosest first; each level's operands are
 * the next level's expressions (left associative), comparisons do not
 * chain. */
static const binop_t or_ops[] = {{"|", PA_OP_OR}, {"||", PA_OP_OR}};
static const binop_t and_ops[] = {{"&", PA_OP_AND}, {"&&", PA_OP_AND}};
static const binop_t cmp_ops[] = {{"<", PA_OP_LT},   {"<=", PA_OP_LE}, {">", PA_OP_GT},
                                  {">=", PA_OP_GE}, {"==", PA_OP_EQ}, {"!=", PA_OP_NE}};
static const binop_t sum_ops[] = {{"+", PA_OP_ADD}, {"-", PA_OP_SUB}};
static const binop_t prod_ops[] = {{"*", PA_OP_MUL}, {"/", PA_OP_DIV}};
static const struct {
  const binop_t *ops;
  int n, chains;
} levels[] = {{or_ops, 2, 1}, {and_ops, 2, 1}, {cmp_ops, 6, 0}, {sum_ops, 2, 1},
              {prod_ops, 2, 1}};
#define NLEVELS (int)(sizeof levels / sizeof *levels)

static void binary(parser_t *ps, int level) {
  if (level == NLEVELS) {
    unary(ps);
    return;
  }
  binary(ps, level + 1);
  for (int op; !ps->err && (op = match(ps, levels[level].ops, levels[level].n)) >= 0;) {
    lex(ps);
    binary(ps, level + 1);
    emit(ps, op, 0, 0);
    if (!levels[level].chains) {
      if (!ps->err && match(ps, levels[level].ops, levels[level].n) >= 0)
        fail(ps, BALLAST_EPARSE, ps->pos, "comparisons do not chain: write (a < b) & (b < c)");
      return;
    }
  }
}

static void expr(parser_t *ps) {
  if (ps->err)
    return;
  if (++ps->depth > MAX_DEPTH) {
    fail(ps, BALLAST_EPARSE, ps->pos, "expression nested more than %d deep", MAX_DEPTH);
    return;
  }
  binary(ps, 0);
  if (!ps->err && is_op(ps, "->")) {
    lex(ps);
    expr(ps); /* right associative: a -> b -> c is a -> (b -> c) */
    emit(ps, PA_OP_IMP, 0, 0);
  }
  ps->depth--;
}

void assert__prog_free(pa_prog_t *p) {
  if (!p)
    return;
  free(p->code);
  free(p->acode);
  free(p->in);
  free(p->agg);
  free(p->acts);
  memset(p, 0, sizeof *p);
}

int assert__compile(const char *src, pa_prog_t *p, char *msg, size_t len) {
  if (msg && len)
    msg[0] = 0;
  memset(p, 0, sizeof *p);
  if (!src)
    return BALLAST_EINVAL;
  parser_t ps = {.src = src, .p = p, .msg = msg, .len = len};
  lex(&ps);
  if (ps.tok == T_END)
    fail(&ps, BALLAST_EPARSE, ps.pos, "empty expression");
  expr(&ps);
  if (!ps.err && ps.tok != T_END)
    fail(&ps, BALLAST_EPARSE, ps.pos, ps.tok == T_RP ? "unmatched ')'"
         : "expected an operator or the end of the expression here");
  if (ps.err) {
    assert__prog_free(p);
    return ps.err;
  }
  return 0;
}
