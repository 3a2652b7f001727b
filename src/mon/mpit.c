/*
 * MPI's own performance variables (MPI_T pvars), read at region boundaries.
 *
 * BALLAST_MPIT=pattern[,pattern] (or mon_mpit_select()) names variables by
 * shell pattern (fnmatch). At MPI_Init ballast starts MPI_T, one session and
 * one handle per selected variable that this run offers (bound to
 * MPI_COMM_WORLD where the variable is bound to a communicator; a variable
 * with several values, per peer, is summed), starts the handles that are not
 * continuous, and then reads every selected variable when a region begins
 * and ends on the thread that called MPI_Init. Per region it keeps, for each
 * variable, the sum of its changes over the instances (what a counter means)
 * and the largest value read at their boundaries (what a level means, e.g. a
 * queue's length); a repeated region's repetitions keep the change too.
 * Names that match nothing valid get one line on rank 0 listing what is valid.
 *
 * MPI_T is finalised before PMPI_Finalize (mon__mpit_finalize): Open MPI
 * 4.1.4 crashes in MPI_T_finalize after MPI_Finalize (its issue 11485).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "common/common_internal.h"
#include "common/env.h"
#include "common/json.h"
#include "mon/mon_core.h"

typedef struct {
  char name[128];
  int index, cls, count;
  MPI_Datatype dt;
  MPI_T_pvar_handle h;
} var_t;

static var_t vars[MON_MPIT_MAX];
int mon__mpit_n; /* selected and valid; read by the region hot path */
static int mpit_on;
static MPI_T_pvar_session session;
static char *patterns; /* mon_mpit_select()'s, before MPI_Init */
static void *rbuf;     /* read buffer: the largest count x 8 bytes */
static int rbuf_elems;

/* Doubles other threads read whole (relaxed atomics). */
static double ldd(const double *p) {
  double v;
  __atomic_load(p, &v, __ATOMIC_RELAXED);
  return v;
}
static void std_(double *p, double v) { __atomic_store(p, &v, __ATOMIC_RELAXED); }

/* Per region: for each variable {sum of changes, max at boundaries}. */
static double *acc[MON__MAX_CHUNKS];
/* Thread 0's region stack: the values read at each open region's begin. */
static double *stack;
static int stack_cap;
/* The change over the instance that just ended (for its repetition). */
double mon__mpit_last[MON_MPIT_MAX];

int mon_mpit_select(const char *list) {
  if (!list || !*list)
    return BALLAST_EINVAL;
  if (MON__LD(&mon__state) != MON__OFF || mon__cfg.t_init)
    return BALLAST_ESTATE;
  char *c = ballast__strdup(list);
  if (!c)
    return BALLAST_ENOMEM;
  free(patterns);
  patterns = c;
  return 0;
}

static int matches(const char *list, const char *name) {
  const char *p = list;
  char pat[256];
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > 0 && len < sizeof pat) {
      memcpy(pat, p, len);
      pat[len] = 0;
      if (fnmatch(pat, name, 0) == 0)
        return 1;
    }
    p += len + (e ? 1 : 0);
  }
  return 0;
}

static int type_size(MPI_Datatype dt) {
  if (dt == MPI_INT || dt == MPI_UNSIGNED)
    return 4;
  if (dt == MPI_LONG || dt == MPI_UNSIGNED_LONG || dt == MPI_LONG_LONG ||
      dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_DOUBLE || dt == MPI_COUNT)
    return 8;
  return 0;
}

/* Open MPI 4.1.4 registers the variables of MTL components (mtl_psm2_*)
 * even when the ob1 PML was selected instead, and allocating a handle for
 * them crashes inside the unused library: with ob1 in use they are not
 * valid in this run. */
static int ob1_in_use;

static int info(int i, char *name, int *cls, int *bind, int *cont, MPI_Datatype *dt) {
  char desc[8];
  int nl = 128, dl = sizeof desc, verb, ro, atom;
  MPI_T_enum en;
  if (MPI_T_pvar_get_info(i, name, &nl, &verb, cls, dt, &en, desc, &dl, bind, &ro, cont,
                          &atom) != MPI_SUCCESS)
    return 0; /* not valid in this run (Open MPI lists some twice) */
  if (ob1_in_use && !strncmp(name, "mtl_", 4))
    return 0;
  return (*bind == MPI_T_BIND_NO_OBJECT || *bind == MPI_T_BIND_MPI_COMM) && type_size(*dt);
}

/* Variable i: listed in valid when it can be read; 1 when it is selected
 * and now has a handle (only selected variables get one). */
static int try_var(int i, const char *list, char *valid, size_t vcap) {
  char name[128];
  int cls, bind, cont;
  MPI_Datatype dt;
  if (!info(i, name, &cls, &bind, &cont, &dt))
    return 0;
  size_t used = strlen(valid);
  if (used + strlen(name) + 3 < vcap && !strstr(valid, name))
    snprintf(valid + used, vcap - used, "%s%s", used ? ", " : "", name);
  int want = matches(list, name) && mon__mpit_n < MON_MPIT_MAX;
  for (int k = 0; want && k < mon__mpit_n; k++)
    want = strcmp(vars[k].name, name) != 0;
  if (!want)
    return 0;
  MPI_T_pvar_handle h;
  int count = 0;
  MPI_Comm world = MPI_COMM_WORLD;
  void *obj = bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL;
  if (MPI_T_pvar_handle_alloc(session, i, obj, &h, &count) != MPI_SUCCESS)
    return 0;
  if (count < 1 || (!cont && MPI_T_pvar_start(session, h) != MPI_SUCCESS)) {
    MPI_T_pvar_handle_free(session, &h);
    return 0;
  }
  var_t *v = &vars[mon__mpit_n];
  snprintf(v->name, sizeof v->name, "%s", name);
  v->index = i;
  v->cls = cls;
  v->count = count;
  v->dt = dt;
  v->h = h;
  if (count > rbuf_elems)
    rbuf_elems = count;
  return 1;
}

void mon__mpit_sections(void);

void mon__mpit_init(void) {
  const char *list = patterns ? patterns : ballast__env_string("BALLAST_MPIT");
  if (!list)
    return;
  int prov, rank = 0, n = 0, up = 0;
  PMPI_Initialized(&up);
  if (!up)
    return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS) {
    if (rank == 0)
      BALLAST_WARN("mon: BALLAST_MPIT: this MPI library has no MPI_T interface");
    return;
  }
  mpit_on = 1;
  if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS ||
      MPI_T_pvar_get_num(&n) != MPI_SUCCESS) {
    if (rank == 0)
      BALLAST_WARN("mon: BALLAST_MPIT: MPI_T offers no performance variables");
    return;
  }
  char valid[2048] = "";
  for (int i = 0; i < n && !ob1_in_use; i++) {
    char name[128];
    int nl = sizeof name, verb, cls, bind, ro, cont, atom, dl = 0;
    MPI_Datatype dt;
    MPI_T_enum en;
    ob1_in_use = MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, NULL, &dl, &bind,
                                     &ro, &cont, &atom) == MPI_SUCCESS &&
                 !strncmp(name, "pml_ob1_", 8);
  }
  for (int i = 0; i < n; i++)
    mon__mpit_n += try_var(i, list, valid, sizeof valid);
  rbuf = calloc((size_t)(rbuf_elems > 0 ? rbuf_elems : 1), 8);
  if (!rbuf)
    mon__mpit_n = 0;
  if (rank == 0 && mon__mpit_n == 0)
    BALLAST_WARN("mon: BALLAST_MPIT=%s selects no performance variable valid in this run; "
                 "valid: %s", list, valid[0] ? valid : "none");
  else if (rank == 0)
    BALLAST_INFO("mon: BALLAST_MPIT: %d variable(s) read at region boundaries", mon__mpit_n);
  mon__mpit_sections();
}

/* Reads every selected variable into out (per-peer values summed). */
void mon__mpit_read(double *out) {
  for (int i = 0; i < mon__mpit_n; i++) {
    var_t *v = &vars[i];
    double s = 0;
    if (MPI_T_pvar_read(session, v->h, rbuf) == MPI_SUCCESS) {
      for (int k = 0; k < v->count; k++) {
        if (v->dt == MPI_UNSIGNED)
          s += ((const unsigned *)rbuf)[k];
        else if (v->dt == MPI_INT)
          s += ((const int *)rbuf)[k];
        else if (v->dt == MPI_DOUBLE)
          s += ((const double *)rbuf)[k];
        else if (v->dt == MPI_UNSIGNED_LONG || v->dt == MPI_UNSIGNED_LONG_LONG)
          s += (double)((const unsigned long long *)rbuf)[k];
        else
          s += (double)((const long long *)rbuf)[k];
      }
    }
    out[i] = s;
  }
}

/* A region begins at depth d (thread 0). */
void mon__mpit_push(int depth) {
  int n = mon__mpit_n;
  if (depth >= stack_cap) {
    int ncap = stack_cap ? 2 * stack_cap : 64;
    while (ncap <= depth)
      ncap *= 2;
    double *ns = realloc(stack, (size_t)ncap * (size_t)n * sizeof *ns);
    if (!ns)
      return; /* this instance's change is lost; counted as none */
    stack = ns;
    stack_cap = ncap;
  }
  mon__mpit_read(stack + (size_t)depth * (size_t)n);
}

static double *acc_of(int id) {
  int c = id >> MON__CHUNK_BITS;
  if (!acc[c]) {
    double *chunk = calloc((size_t)MON__CHUNK * 2 * (size_t)mon__mpit_n, sizeof *chunk);
    if (!chunk)
      return NULL;
    MON__STREL(&acc[c], chunk);
  }
  return acc[c] + (size_t)(id & (MON__CHUNK - 1)) * 2 * (size_t)mon__mpit_n;
}

/* Region id ends at depth d (the depth it was pushed at; thread 0). */
void mon__mpit_pop(int id, int depth) {
  int n = mon__mpit_n;
  double now[MON_MPIT_MAX];
  mon__mpit_read(now);
  const double *b = depth < stack_cap ? stack + (size_t)depth * (size_t)n : now;
  double *a = acc_of(id);
  for (int i = 0; i < n; i++) {
    mon__mpit_last[i] = now[i] - b[i];
    if (!a)
      continue;
    std_(&a[2 * i], ldd(&a[2 * i]) + mon__mpit_last[i]);
    double m = b[i] > now[i] ? b[i] : now[i];
    if (m > ldd(&a[2 * i + 1]))
      std_(&a[2 * i + 1], m);
  }
}

int mon__mpit_region(int id, int var, double *delta, double *max) {
  if (var < 0 || var >= mon__mpit_n)
    return BALLAST_ENOTFOUND;
  *delta = *max = 0;
  const double *chunk = MON__LDACQ(&acc[id >> MON__CHUNK_BITS]);
  if (chunk) {
    const double *a = chunk + (size_t)(id & (MON__CHUNK - 1)) * 2 * (size_t)mon__mpit_n;
    *delta = ldd(&a[2 * var]);
    *max = ldd(&a[2 * var + 1]);
  }
  return 0;
}

int mon__mpit_count(void) { return mon__mpit_n; }

int mon__mpit_read_one(int var, double *value) {
  if (var < 0 || var >= mon__mpit_n)
    return BALLAST_ENOTFOUND;
  mon__tls_t *t = mon__tl_self;
  /* Until MPI_T is finalised inside MPI_Finalize: the whole run's
   * assertions read it there. */
  if (!mpit_on || !t || t->index != 0)
    return BALLAST_ESTATE;
  double all[MON_MPIT_MAX];
  mon__mpit_read(all);
  *value = all[var];
  return 0;
}

/* The tools interface's api->mpit_region. */
int mon__tool_mpit_region(int region, int var, const char **name, double *delta,
                          double *max) {
  if (region < 0 || region >= mon__region_count() || var < 0 || var >= mon__mpit_n)
    return BALLAST_ENOTFOUND;
  *name = vars[var].name;
  return mon__mpit_region(region, var, delta, max);
}

const char *mon__mpit_name(int var) {
  return var >= 0 && var < mon__mpit_n ? vars[var].name : NULL;
}

int mon__mpit_class(int var) { return var >= 0 && var < mon__mpit_n ? vars[var].cls : -1; }

/* Before PMPI_Finalize. */
void mon__mpit_finalize(void) {
  if (!mpit_on)
    return;
  /* The figures stay readable (acc); no region begins or ends any more. */
  int n = mon__mpit_n;
  for (int i = 0; i < n; i++)
    MPI_T_pvar_handle_free(session, &vars[i].h);
  if (session != MPI_T_PVAR_SESSION_NULL)
    MPI_T_pvar_session_free(&session);
  MPI_T_finalize();
  mpit_on = 0;
}

void mon__mpit_free(void) {
  for (int c = 0; c < MON__MAX_CHUNKS; c++) {
    free(acc[c]);
    acc[c] = NULL;
  }
  free(stack);
  stack = NULL;
  stack_cap = 0;
  free(rbuf);
  rbuf = NULL;
  rbuf_elems = 0;
  mon__mpit_n = 0;
  mon__region_extras_update();
  free(patterns);
  patterns = NULL;
}

/* ---- the report and the profile ------------------------------------------------------ */

static void section_report(FILE *f, void *user) {
  (void)user;
  int n = mon__mpit_n;
  if (!n || mon__cfg.report != MON__REPORT_FULL)
    return;
  fprintf(f, "#\n# MPI_T variables per region (rank 0): change over the instances / "
             "largest at their boundaries\n");
  int nr = mon__region_count();
  for (int id = 0; id < nr; id++) {
    const double *chunk = MON__LDACQ(&acc[id >> MON__CHUNK_BITS]);
    if (!chunk)
      continue;
    const double *a = chunk + (size_t)(id & (MON__CHUNK - 1)) * 2 * (size_t)n;
    for (int i = 0; i < n; i++)
      if (ldd(&a[2 * i]) != 0 || ldd(&a[2 * i + 1]) != 0)
        fprintf(f, "# %-30s %-36s %14.6g %14.6g\n", mon__region_name(id), vars[i].name,
                ldd(&a[2 * i]), ldd(&a[2 * i + 1]));
  }
}

static char *section_json(void *user) {
  (void)user;
  ballast__text_t t;
  FILE *f = ballast__text_open(&t);
  if (!f)
    return NULL;
  fputc('[', f);
  for (int i = 0; i < mon__mpit_n; i++)
    fprintf(f, "%s{\"name\":\"%s\",\"class\":%d}", i ? "," : "", vars[i].name, vars[i].cls);
  fputc(']', f);
  return ballast__text_close(&t);
}

/* This rank: {"region id": [[change, largest], ...per variable], ...}. */
static char *section_rank_json(void *user) {
  (void)user;
  int n = mon__mpit_n;
  if (!n)
    return NULL;
  ballast__text_t t;
  FILE *f = ballast__text_open(&t);
  if (!f)
    return NULL;
  fputc('{', f);
  int nr = mon__region_count(), k = 0;
  for (int id = 0; id < nr; id++) {
    const double *chunk = MON__LDACQ(&acc[id >> MON__CHUNK_BITS]);
    if (!chunk)
      continue;
    const double *a = chunk + (size_t)(id & (MON__CHUNK - 1)) * 2 * (size_t)n;
    fprintf(f, "%s\"%d\":[", k++ ? "," : "", id);
    for (int i = 0; i < n; i++)
      fprintf(f, "%s[%.17g,%.17g]", i ? "," : "", ldd(&a[2 * i]), ldd(&a[2 * i + 1]));
    fputc(']', f);
  }
  fputc('}', f);
  return ballast__text_close(&t);
}

void mon__mpit_sections(void) {
  if (!mon__mpit_n)
    return;
  mon__section_t s = {.name = "mpit", .report = section_report, .json = section_json,
                      .rank_json = section_rank_json};
  mon__report_add_section(&s);
}
