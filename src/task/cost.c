/* The cost model: per-task moving averages of the time per step, fed from
 * PIA's interval data, and the bytes sent to each rank per step.
 *
 * Every task is clocked as a mon region named by its key. The first time a
 * task's region is entered under a given parent region, that region id is
 * tracked in one PIA interval; rta_step() reads the change of each task's
 * regions since the previous step and sets the mark again. */
#include "task/task_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/pia.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"

#define DEFAULT_WINDOW 10
#define DEFAULT_MIN_STEPS 3

static rta_cost_config_t config = {DEFAULT_WINDOW, DEFAULT_MIN_STEPS};
static pia_interval_t *interval;
static long long steps;         /* rta_step() calls */
static double *base_bytes;      /* partner volume (world ranks) at the baseline */
static int base_n;              /* entries of base_bytes */
static long long base_step = -1; /* steps at the baseline; -1: none taken */
static long long begins;        /* tasks entered under monitoring */
static long long begins_at_step = -1; /* begins when rta_step() last closed a step */

/* ---- per-task window ---------------------------------------------------- */

/* Room for a window of \a cap samples, zeroed: the room the record has
 * for one (a record carved from a slab: an arrival) unless the ring is
 * there already, else an allocation; NULL without memory. */
double *task__ring_alloc(rta_task_t *t, int cap) {
  task__cold_t *cold = t->cold;
  if (cold->ring_room && cap <= cold->ring_cap && cold->cost.ring != cold->ring_room) {
    memset(cold->ring_room, 0, (size_t)cap * sizeof *cold->ring_room);
    return cold->ring_room;
  }
  return ballast__calloc((size_t)cap, sizeof(double));
}

/* Frees a ring of \a t unless it lies in the record. */
void task__ring_free(rta_task_t *t, double *r) {
  if (r != t->cold->ring_room)
    free(r);
}

void task__cost_clear(rta_task_t *t) {
  task__cost_t *c = &t->cold->cost;
  task__ring_free(t, c->ring);
  free(c->regions);
  memset(c, 0, sizeof *c);
}

static void push_sample(rta_task_t *t, double v) {
  task__cost_t *c = task__cost_of(t);
  if (!c->ring || c->cap != config.window) {
    double *r = task__ring_alloc(t, config.window);
    if (!r)
      return; /* out of memory: this sample is lost, the window keeps going */
    /* Keep the most recent samples that fit the (new) window, oldest first. */
    int keep = c->n < config.window ? c->n : config.window;
    for (int i = 0; i < keep; i++)
      r[i] = c->ring[(c->head - keep + i + c->cap) % c->cap];
    task__ring_free(t, c->ring);
    c->ring = r;
    c->cap = config.window;
    c->n = keep;
    c->head = keep % c->cap;
  }
  c->ring[c->head] = v;
  c->head = (c->head + 1) % c->cap;
  if (c->n < c->cap)
    c->n++;
  c->total++;
  c->last = v;
  c->last_step = steps;
}

void task__cost_on_begin(rta_task_t *t) {
  begins++;
  int id = pia_region_current();
  if (id <= PIA_REGION_MAIN)
    return; /* a task's region is never the whole program: monitoring is off */
  task__cost_t *c = task__cost_of(t);
  for (int i = 0; i < c->nregions; i++)
    if (c->regions[i] == id)
      return;
  if (!interval && pia_interval_create(&interval) != 0)
    return;
  if (c->nregions == c->capregions) {
    int cap = c->capregions ? 2 * c->capregions : 2;
    int *r = ballast__realloc(c->regions, (size_t)cap * sizeof *r);
    if (!r)
      return;
    c->regions = r;
    c->capregions = cap;
  }
  if (pia_interval_track_region(interval, id) == 0)
    c->regions[c->nregions++] = id;
}

/* ---- configuration --------------------------------------------------------- */

int rta_cost_config_set(const rta_cost_config_t *cfg) {
  if (!cfg || cfg->window < 1 || cfg->min_steps < 1 ||
      cfg->min_steps > cfg->window) {
    BALLAST_WARN("rta: cost config: window %d, min_steps %d (need 1 <= "
                 "min_steps <= window)", cfg ? cfg->window : 0,
                 cfg ? cfg->min_steps : 0);
    return BALLAST_EINVAL;
  }
  config = *cfg;
  return 0;
}

int rta_cost_config_get(rta_cost_config_t *cfg) {
  if (!cfg)
    return BALLAST_EINVAL;
  *cfg = config;
  return 0;
}

int rta_cost_set_window(int n) {
  rta_cost_config_t c = config;
  c.window = n;
  if (c.min_steps > n)
    c.min_steps = n;
  return rta_cost_config_set(&c);
}

int task__cost_min_steps(void) { return config.min_steps; }

int task__cost_reset_config(void) {
  pia_interval_destroy(interval);
  interval = NULL;
  config.window = DEFAULT_WINDOW;
  config.min_steps = DEFAULT_MIN_STEPS;
  steps = 0;
  begins = 0;
  begins_at_step = -1;
  free(base_bytes);
  base_bytes = NULL;
  base_n = 0;
  base_step = -1;
  return 0;
}

/* ---- steps ---------------------------------------------------------------- */

long long rta_steps(void) { return steps; }

int rta_step(void) {
  int rc0 = ballast__need_mpi("rta_step");
  if (rc0)
    return rc0;
  if (task__open_depth() > 0) {
    BALLAST_WARN("rta: rta_step with task \"%s\" still open",
                 rta_task_key(rta_task_current()));
    return BALLAST_ESTATE;
  }
  steps++;
  if (!mon__active())
    return BALLAST_EDISABLED; /* monitoring off: estimates serve */
  begins_at_step = begins;
  if (!interval)
    return 0; /* no task has run under monitoring yet */
  for (rta_task_t *t = task__first(); t; t = task__next(t)) {
    if (!t->cold_held)
      continue; /* no regions tracked: nothing measured */
    const task__cost_t *c = &t->cold->cost;
    long long count = 0;
    double work = 0;
    for (int i = 0; i < c->nregions; i++) {
      pia_regdata_t d;
      if (pia_interval_region_data(interval, c->regions[i], &d) == 0) {
        count += d.count64;
        /* The task's own work: wall time outside MPI, but never more than
         * the CPU time the thread got (when mon records it). On a shared or
         * oversubscribed core a preemption of a few ms inflates the wall
         * time of whichever task it hits; the CPU clock does not see it. The
         * CPU time alone would count MPI's busy polling, hence the minimum. */
        double w = d.wtime - d.mtime;
        if (d.cputime > 0 && d.cputime < w)
          w = d.cputime;
        work += w;
      }
    }
    if (count > 0)
      push_sample(t, work > 0 ? work : 0);
  }
  return pia_interval_mark(interval);
}

int task__cost_step_closed(void) { return begins_at_step == begins; }

long long task__cost_sample_step(const rta_task_t *t) {
  if (!t->cold_held)
    return -1;
  return t->cold->cost.total ? t->cold->cost.last_step : -1;
}

int rta_task_cost(const rta_task_t *t, rta_task_cost_t *out) {
  if (!t || !out)
    return BALLAST_EINVAL;
  static const task__cost_t none;
  const task__cost_t *c = t->cold_held ? &t->cold->cost : &none;
  memset(out, 0, sizeof *out);
  out->est_work = t->params.est_work;
  out->nsteps = c->n < config.window ? c->n : config.window;
  out->total_steps = c->total;
  out->last_time = c->last;
  if (out->nsteps > 0) {
    /* The window may have just shrunk: average the most recent samples. */
    double s = 0;
    for (int i = 0; i < out->nsteps; i++)
      s += c->ring[(c->head - 1 - i + 2 * c->cap) % c->cap];
    out->avg_time = s / out->nsteps;
  }
  out->measured = out->nsteps >= config.min_steps;
  return 0;
}

/* ---- bytes per rank --------------------------------------------------------- */

static int read_volumes(double **vols, int *n) {
  int w;
  *vols = NULL;
  *n = 0;
  ballast__lib_begin();
  int mrc = MPI_Comm_size(MPI_COMM_WORLD, &w);
  ballast__lib_end();
  if (mrc != MPI_SUCCESS)
    return BALLAST_EMPI;
  pia_partnerdata_t *pd = ballast__calloc((size_t)w, sizeof *pd);
  double *v = ballast__calloc((size_t)w, sizeof *v);
  if (!pd || !v) {
    free(pd);
    free(v);
    return BALLAST_ENOMEM;
  }
  int rc = pia_partner_volumes(w, PIA_REGION_ALL, pd);
  for (int i = 0; i < w && !rc; i++)
    v[i] = (double)pd[i].nbytes;
  free(pd);
  if (rc) {
    free(v);
    return rc;
  }
  *vols = v;
  *n = w;
  return 0;
}

int task__cost_partner_rebase(MPI_Comm comm) {
  (void)comm;
  double *v;
  int n;
  int rc = read_volumes(&v, &n);
  if (rc)
    return rc;
  free(base_bytes);
  base_bytes = v;
  base_n = n;
  base_step = steps;
  return 0;
}

int task__cost_partner_bytes(MPI_Comm comm, double *out, long long *nsteps) {
  int size;
  *nsteps = 0;
  ballast__lib_begin();
  int mrc = MPI_Comm_size(comm, &size);
  ballast__lib_end();
  if (mrc != MPI_SUCCESS)
    return BALLAST_EMPI;
  memset(out, 0, (size_t)size * sizeof *out);
  long long since = steps - (base_step < 0 ? 0 : base_step);
  if (since <= 0)
    return 0;
  double *v;
  int n;
  int rc = read_volumes(&v, &n);
  if (rc)
    return rc; /* monitoring off: nothing measured */
  MPI_Group g, wg;
  int *ranks = ballast__malloc((size_t)size * sizeof *ranks);
  int *world = ballast__malloc((size_t)size * sizeof *world);
  if (!ranks || !world) {
    free(ranks);
    free(world);
    free(v);
    return BALLAST_ENOMEM;
  }
  for (int r = 0; r < size; r++)
    ranks[r] = r;
  ballast__lib_begin();
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_translate_ranks(g, size, ranks, wg, world);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  ballast__lib_end();
  for (int r = 0; r < size; r++) {
    int w = world[r];
    if (w < 0 || w >= n)
      continue;
    double b = v[w] - (base_bytes && w < base_n ? base_bytes[w] : 0);
    out[r] = b > 0 ? b / (double)since : 0;
  }
  *nsteps = since;
  free(ranks);
  free(world);
  free(v);
  return 0;
}
