/* The registry of assertions, in-code scopes, the check with its failure
 * actions, program variables and the configuration file.
 *
 * Assertions live in a table of fixed chunks, published by a counter, so a
 * check finds its assertion without a lock while another thread creates one.
 * Scopes are per thread: a stack of frames, each with the instant and the
 * activity snapshot taken at its entry (attach.c takes region frames on the
 * same stack). */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert/assert_internal.h"
#include "assert/assert_hooks.h"
#include "common/common_internal.h"

#define CHUNK 256
#define NCHUNK 256
static pa_assert_t *chunks[NCHUNK];
static int nassert; /* published with release ordering */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static pia_assert_failure_fn fail_fn;
static void *fail_user;
static int remap_pending, remap_armed;

enum { ACT_COUNT, ACT_WARN, ACT_ABORT, ACT_EXIT };
static int action = -1;

static int failure_action(void) {
  int a = __atomic_load_n(&action, __ATOMIC_ACQUIRE);
  if (a >= 0)
    return a;
  const char *e = getenv("BALLAST_ASSERT_ACTION");
  a = ACT_COUNT;
  if (e && *e) {
    if (!strcmp(e, "warn"))
      a = ACT_WARN;
    else if (!strcmp(e, "abort"))
      a = ACT_ABORT;
    else if (!strcmp(e, "exit"))
      a = ACT_EXIT;
    else if (strcmp(e, "count"))
      BALLAST_WARN("assert: BALLAST_ASSERT_ACTION=%s is not one of count, warn, abort, "
                   "exit; failures are counted", e);
  }
  __atomic_store_n(&action, a, __ATOMIC_RELEASE);
  return a;
}

int assert__action_exit(void) { return failure_action() == ACT_EXIT; }

int assert__count(void) { return __atomic_load_n(&nassert, __ATOMIC_ACQUIRE); }

pa_assert_t *assert__get(int id) {
  if (id < 0 || id >= assert__count())
    return NULL;
  return &chunks[id / CHUNK][id % CHUNK];
}

int assert__world(int *rank, int *size) {
  static int r = -1, s = -1;
  if (__atomic_load_n(&s, __ATOMIC_ACQUIRE) < 0) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) {
      *rank = 0;
      *size = 1;
      return BALLAST_ESTATE;
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    int sz;
    PMPI_Comm_size(MPI_COMM_WORLD, &sz);
    __atomic_store_n(&s, sz, __ATOMIC_RELEASE);
  }
  *rank = r;
  *size = s;
  return 0;
}

/* ---- variables ------------------------------------------------------------ */

#define MAX_VARS 256
typedef struct {
  char name[64];
  int type;
  const void *addr; /* NULL until registered */
} var_t;
static var_t vars[MAX_VARS];
static int nvars;

static int valid_name(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_') || strlen(s) >= 64)
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return 0;
  return 1;
}

int assert__var_find_or_add(const char *name) {
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < nvars && strcmp(vars[i].name, name))
    i++;
  if (i == nvars) {
    if (nvars == MAX_VARS) {
      pthread_mutex_unlock(&lock);
      return BALLAST_ERANGE;
    }
    snprintf(vars[i].name, sizeof vars[i].name, "%s", name);
    nvars++;
  }
  pthread_mutex_unlock(&lock);
  return i;
}

int assert__var_read(int i, double *v) {
  const void *a = __atomic_load_n(&vars[i].addr, __ATOMIC_ACQUIRE);
  if (!a)
    return BALLAST_ESTATE;
  switch (vars[i].type) {
  case PIA_VAR_INT: *v = *(const volatile int *)a; break;
  case PIA_VAR_LONG: *v = (double)*(const volatile long *)a; break;
  default: *v = *(const volatile double *)a; break;
  }
  return 0;
}

const char *assert__var_name(int i) { return vars[i].name; }

void assert__var_list(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nvars && used + 1 < len; i++)
    if (vars[i].addr)
      used += (size_t)snprintf(buf + used, len - used, "%s$%s", used ? ", " : "",
                               vars[i].name);
  pthread_mutex_unlock(&lock);
  if (!used)
    snprintf(buf, len, "none is registered (pia_assert_var_register)");
}

BALLAST_API int pia_assert_var_register(const char *name, pia_var_type_t type,
                                        const void *addr) {
  if (!valid_name(name) || !addr || (unsigned)type > PIA_VAR_DOUBLE)
    return BALLAST_EINVAL;
  int i = assert__var_find_or_add(name);
  if (i < 0)
    return i;
  vars[i].type = type;
  __atomic_store_n(&vars[i].addr, addr, __ATOMIC_RELEASE);
  return 0;
}

/* ---- configuration file (BALLAST_ASSERT_CONFIG) ---------------------------- */

typedef struct {
  char name[64];
  double v;
} conf_t;
static conf_t *conf;
static int nconf, conf_loaded, conf_err;

/* Lines "name = number"; '#' starts a comment. Called with the lock held. */
static void conf_load(void) {
  conf_loaded = 1;
  const char *path = getenv("BALLAST_ASSERT_CONFIG");
  if (!path || !*path)
    return;
  FILE *f = fopen(path, "r");
  if (!f) {
    BALLAST_WARN("assert: cannot open BALLAST_ASSERT_CONFIG=%s", path);
    conf_err = BALLAST_EIO;
    return;
  }
  char line[512];
  for (int ln = 1; fgets(line, sizeof line, f); ln++) {
    char *h = strchr(line, '#');
    if (h)
      *h = 0;
    char name[64], rest[2];
    double v;
    int n = sscanf(line, " %63[A-Za-z0-9_] = %lf %1s", name, &v, rest);
    if (n == 2) {
      conf_t *c = ballast__realloc(conf, (size_t)(nconf + 1) * sizeof *conf);
      if (!c) {
        conf_err = BALLAST_ENOMEM;
        break;
      }
      conf = c;
      snprintf(conf[nconf].name, sizeof conf[nconf].name, "%s", name);
      conf[nconf++].v = v;
    } else if (strspn(line, " \t\r\n") != strlen(line)) {
      BALLAST_WARN("assert: %s:%d: expected 'name = number'; line skipped", path, ln);
    }
  }
  fclose(f);
}

int assert__conf_get(const char *name, double *v, char *msg, size_t len) {
  pthread_mutex_lock(&lock);
  if (!conf_loaded)
    conf_load();
  for (int i = nconf - 1; i >= 0; i--) /* the last definition wins */
    if (!strcmp(conf[i].name, name)) {
      *v = conf[i].v;
      pthread_mutex_unlock(&lock);
      return 0;
    }
  size_t used = (size_t)snprintf(msg, len, "unknown configuration value '_%s'; ", name);
  if (!getenv("BALLAST_ASSERT_CONFIG"))
    snprintf(msg + used, len > used ? len - used : 0, "BALLAST_ASSERT_CONFIG is not set");
  else if (!nconf)
    snprintf(msg + used, len > used ? len - used : 0, "%s defines none",
             getenv("BALLAST_ASSERT_CONFIG"));
  else
    for (int i = 0; i < nconf && used + 1 < len; i++)
      used += (size_t)snprintf(msg + used, len - used, "%s_%s", i ? ", " : "valid: ",
                               conf[i].name);
  pthread_mutex_unlock(&lock);
  return BALLAST_ENOTFOUND;
}

/* ---- creation ------------------------------------------------------------- */

BALLAST_API void pia_assert_options_init(pia_assert_options_t *o) {
  if (o)
    memset(o, 0, sizeof *o);
}

BALLAST_API int pia_assert_parse_check(const char *expr, size_t len, char *msg) {
  pa_prog_t p;
  int rc = assert__compile(expr, &p, msg, len);
  assert__prog_free(&p);
  return rc;
}

static void assert_free(pa_assert_t *a) {
  free(a->text);
  free(a->file);
  free(a->region);
  free(a->first_vals);
  assert__prog_free(&a->prog);
}

int assert__create(const pia_assert_options_t *o, char *msg, size_t len) {
  if (!o || !o->expr || (o->region && !*o->region))
    return BALLAST_EINVAL;
  int rc0;
  pa_assert_t a = {.flags = o->flags, .line = o->line};
  a.kind = !o->region ? PA_KIND_SCOPE
           : !strcmp(o->region, PIA_ASSERT_RUN) ? PA_KIND_RUN : PA_KIND_REGION;
  if (o->flags & ~(PIA_ASSERT_REMAP | PIA_ASSERT_GOOD)) {
    snprintf(msg, len, "unknown flags 0x%x", (unsigned)o->flags);
    return BALLAST_EINVAL;
  }
  if ((o->flags & PIA_ASSERT_GOOD) && a.kind != PA_KIND_REGION) {
    snprintf(msg, len, "'good' applies to a region's repetitions, not to %s",
             a.kind == PA_KIND_RUN ? "the whole run" : "an in-code scope");
    return BALLAST_EINVAL;
  }
  if ((o->flags & PIA_ASSERT_GOOD) && (rc0 = mon_region_repeat(o->region)) < 0) {
    snprintf(msg, len, "cannot mark region '%s' repeated", o->region);
    return rc0;
  }
  int rc = assert__compile(o->expr, &a.prog, msg, len);
  if (rc < 0)
    return rc;
  /* The text as the report shows it: without the blanks around it. */
  const char *t = o->expr;
  while (isspace((unsigned char)*t))
    t++;
  size_t tn = strlen(t);
  while (tn && isspace((unsigned char)t[tn - 1]))
    tn--;
  if ((a.text = ballast__malloc(tn + 1)) != NULL) {
    memcpy(a.text, t, tn);
    a.text[tn] = 0;
  }
  a.file = o->file ? ballast__strdup(o->file) : NULL;
  a.region = o->region ? ballast__strdup(o->region) : NULL;
  a.first_vals = ballast__calloc((size_t)a.prog.nin + 1, sizeof(double));
  if (!a.text || (o->file && !a.file) || (o->region && !a.region) || !a.first_vals) {
    assert_free(&a);
    return BALLAST_ENOMEM;
  }
  pthread_mutex_lock(&lock);
  int id = nassert;
  if (id / CHUNK >= NCHUNK) {
    pthread_mutex_unlock(&lock);
    assert_free(&a);
    snprintf(msg, len, "more than %d assertions", CHUNK * NCHUNK);
    return BALLAST_ERANGE;
  }
  if (!chunks[id / CHUNK] &&
      !(chunks[id / CHUNK] = ballast__calloc(CHUNK, sizeof(pa_assert_t)))) {
    pthread_mutex_unlock(&lock);
    assert_free(&a);
    return BALLAST_ENOMEM;
  }
  a.id = id;
  chunks[id / CHUNK][id % CHUNK] = a;
  if (a.flags & PIA_ASSERT_REMAP)
    remap_armed = 1;
  __atomic_store_n(&nassert, id + 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
  failure_action();
  if (a.kind == PA_KIND_REGION)
    assert__region_added();
  assert__attach_need();
  return id;
}

BALLAST_API int pia_assert_create_ex(const pia_assert_options_t *o, int *id) {
  if (!id)
    return BALLAST_EINVAL;
  char msg[1024] = "";
  int rc = assert__create(o, msg, sizeof msg);
  if (rc < 0) {
    if (msg[0] && o->file)
      BALLAST_WARN("assert: %s:%d: %s", o->file, o->line, msg);
    else if (msg[0])
      BALLAST_WARN("assert: %s", msg);
    return rc;
  }
  *id = rc;
  return 0;
}

BALLAST_API int pia_assert_create(const char *expr, int *id) {
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.expr = expr;
  return pia_assert_create_ex(&o, id);
}

BALLAST_API int pia_assert_count(void) { return assert__count(); }

BALLAST_API const char *pia_assert_text(int id) {
  pa_assert_t *a = assert__get(id);
  return a ? a->text : NULL;
}

BALLAST_API int pia_assert_result(int id, pia_assert_result_t *out) {
  if (!out)
    return BALLAST_EINVAL;
  pa_assert_t *a = assert__get(id);
  if (!a)
    return BALLAST_ENOTFOUND;
  out->checks = __atomic_load_n(&a->checks, __ATOMIC_RELAXED);
  out->passes = __atomic_load_n(&a->passes, __ATOMIC_RELAXED);
  out->first_fail = __atomic_load_n(&a->first_fail, __ATOMIC_RELAXED);
  out->errors = __atomic_load_n(&a->errors, __ATOMIC_RELAXED);
  return 0;
}

BALLAST_API void pia_assert_on_failure(pia_assert_failure_fn fn, void *user) {
  pthread_mutex_lock(&lock);
  fail_fn = fn;
  fail_user = user;
  pthread_mutex_unlock(&lock);
}

/* ---- the check ------------------------------------------------------------- */

/* Cross-rank aggregates: every rank evaluates each sub-program and one
 * reduction combines them all: buf[0] holds how many entries follow that
 * take the maximum (the maxima, and the minima negated); the rest are summed
 * (the averages). One user-defined operation does both, so a check costs one
 * MPI_Allreduce whatever its aggregates. A rank that could not evaluate
 * still takes part, with NaN, so no rank waits forever. */
static void max_then_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  const double *a = in;
  double *b = inout;
  int nm = (int)a[0];
  for (int i = 1; i < *len; i++)
    b[i] = i <= nm ? (a[i] > b[i] || a[i] != a[i] ? a[i] : b[i]) : b[i] + a[i];
}

static MPI_Op agg_op = MPI_OP_NULL;

static int agg_op_get(MPI_Op *op) {
  pthread_mutex_lock(&lock);
  int rc = 0;
  if (agg_op == MPI_OP_NULL && MPI_Op_create(max_then_sum, 1, &agg_op) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  *op = agg_op;
  pthread_mutex_unlock(&lock);
  return rc;
}

void assert__mpi_teardown(void) {
  pthread_mutex_lock(&lock);
  if (agg_op != MPI_OP_NULL)
    MPI_Op_free(&agg_op);
  agg_op = MPI_OP_NULL;
  pthread_mutex_unlock(&lock);
}

static int reduce_aggs(const pa_prog_t *p, double *vals, int local_ok) {
  double buf[PA_MAX_AGGS + 1];
  int nm = 0;
  for (int k = 0; k < p->nagg; k++)
    nm += p->agg[k].op != PA_AGG_AVG;
  buf[0] = nm;
  int im = 1, is = 1 + nm;
  for (int k = 0; k < p->nagg; k++) {
    double v = local_ok ? assert__eval_agg(p, k, vals) : NAN;
    if (p->agg[k].op == PA_AGG_AVG)
      buf[is++] = v;
    else
      buf[im++] = p->agg[k].op == PA_AGG_MIN ? -v : v;
  }
  int rank, size;
  assert__world(&rank, &size);
  MPI_Op op;
  int rc = agg_op_get(&op);
  ballast__lib_begin();
  if (!rc && MPI_Allreduce(MPI_IN_PLACE, buf, 1 + p->nagg, MPI_DOUBLE, op, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    rc = BALLAST_EMPI;
  ballast__lib_end();
  im = 1;
  is = 1 + nm;
  for (int i = 0; i < p->nin; i++)
    if (p->in[i].kind == PA_IN_AGG) {
      int k = p->in[i].agg;
      vals[i] = p->agg[k].op == PA_AGG_AVG ? buf[is++] / size
                : p->agg[k].op == PA_AGG_MIN ? -buf[im++] : buf[im++];
    }
  return rc;
}

static void describe(const pa_assert_t *a, const double *vals, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < a->prog.nin && used + 1 < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s = %.6g", i ? ", " : "",
                             a->prog.in[i].name, vals[i]);
}

void assert__source(const pa_assert_t *a, char *buf, size_t len) {
  if (a->file)
    snprintf(buf, len, "%s:%d", a->file, a->line);
  else if (a->region)
    snprintf(buf, len, a->kind == PA_KIND_RUN ? "run" : "region %s", a->region);
  else
    snprintf(buf, len, "code");
}

static void failed(pa_assert_t *a, long long inst, const double *vals) {
  long long zero = 0;
  int first = __atomic_compare_exchange_n(&a->first_fail, &zero, inst, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED);
  if (first)
    memcpy(a->first_vals, vals, (size_t)a->prog.nin * sizeof *vals);
  if (a->flags & PIA_ASSERT_REMAP)
    __atomic_store_n(&remap_pending, 1, __ATOMIC_RELEASE);
  int act = failure_action();
  if (first && (act == ACT_WARN || act == ACT_ABORT)) {
    char src[300], v[1024];
    assert__source(a, src, sizeof src);
    describe(a, vals, v, sizeof v);
    BALLAST_WARN("assert: %s: '%s' failed (instance %lld): %s", src, a->text, inst, v);
    if (act == ACT_ABORT)
      MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pthread_mutex_lock(&lock);
  pia_assert_failure_fn fn = fail_fn;
  void *user = fail_user;
  pthread_mutex_unlock(&lock);
  if (fn) {
    const char *names[PA_MAX_INPUTS];
    int n = a->prog.nin;
    for (int i = 0; i < n; i++)
      names[i] = a->prog.in[i].name;
    fn(a->id, a->text, inst, n, names, vals, user);
  }
}

int assert__check(pa_assert_t *a, const pa_delta_t *d) {
  const pa_prog_t *p = &a->prog;
  double vals[PA_MAX_INPUTS];
  int bad = -1;
  int rc = assert__inputs(p, d, vals, &bad);
  if (p->nagg) {
    int r2 = reduce_aggs(p, vals, rc == 0);
    if (!rc)
      rc = r2;
  }
  if (rc < 0) {
    if (__atomic_fetch_add(&a->errors, 1, __ATOMIC_RELAXED) == 0) {
      char list[512];
      assert__var_list(list, sizeof list);
      if (bad >= 0)
        BALLAST_WARN("assert: '%s' reads $%s, which is not registered; registered: %s",
                     a->text, assert__var_name(bad), list);
      else
        BALLAST_WARN("assert: '%s': %s", a->text, ballast_strerror(rc));
    }
    return rc;
  }
  long long inst = __atomic_add_fetch(&a->checks, 1, __ATOMIC_RELAXED);
  if (assert__eval(p, vals)) {
    __atomic_add_fetch(&a->passes, 1, __ATOMIC_RELAXED);
    return 1;
  }
  failed(a, inst, vals);
  return 0;
}

int assert__remap_agree(MPI_Comm comm) {
  if (!__atomic_load_n(&remap_armed, __ATOMIC_ACQUIRE))
    return 0;
  int mine = __atomic_exchange_n(&remap_pending, 0, __ATOMIC_ACQ_REL), any = 0;
  ballast__lib_begin();
  int rc = MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  ballast__lib_end();
  return rc == MPI_SUCCESS ? any : BALLAST_EMPI;
}

void assert__registry_teardown(void) {
  pthread_mutex_lock(&lock);
  int n = nassert;
  __atomic_store_n(&nassert, 0, __ATOMIC_RELEASE);
  for (int i = 0; i < n; i++)
    assert_free(&chunks[i / CHUNK][i % CHUNK]);
  for (int c = 0; c < NCHUNK; c++) {
    free(chunks[c]);
    chunks[c] = NULL;
  }
  free(conf);
  conf = NULL;
  nconf = conf_loaded = 0;
  pthread_mutex_unlock(&lock);
}
