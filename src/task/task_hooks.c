/* What load balancing needs from the task tree beyond the public API
 * (task_hooks.h): the cost window of a moving task, and its registered
 * arrays when they are adopted, handed back or freed wholesale. Reads and
 * writes the records of task.c, cost.c and task_array.c. */
#include "task/task_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

/* The views task_hooks.h's inline prefetch reads through. */
_Static_assert(offsetof(struct rta_task, arrays) == offsetof(task__view_t, arrays),
               "struct rta_task must begin with its array list");
_Static_assert(offsetof(struct rta_task, key) == offsetof(task__view_t, key),
               "struct rta_task must have its key second");
_Static_assert(offsetof(task__array_t, slot) == offsetof(task__array_view_t, slot),
               "task__array_t must begin with the application's pointer");
_Static_assert(sizeof(struct rta_task) <= TASK__RECORD_BYTES,
               "a task record's hot part outgrew TASK__RECORD_BYTES");

int task__cost_export(const rta_task_t *t, double *out, int max,
                      long long *total) {
  *total = 0;
  if (!t->cold_held) /* no window: its cold part is not read */
    return 0;
  const task__cost_t *c = &t->cold->cost;
  int n = c->ring ? c->n : 0;
  if (n > max)
    n = max;
  for (int i = 0; i < n; i++)
    out[i] = c->ring[(c->head - n + i + c->cap) % c->cap];
  *total = c->total;
  return n;
}

int task__cost_restore(rta_task_t *t, const double *s, int n,
                       long long total) {
  rta_cost_config_t cfg;
  rta_cost_config_get(&cfg);
  if (n <= 0)
    return 0;
  task__cost_t *c = task__cost_of(t);
  if (n > cfg.window) {
    s += n - cfg.window;
    n = cfg.window;
  }
  /* An arrival's record has room for it (task.c's slabs). */
  double *r = task__ring_alloc(t, cfg.window);
  if (!r)
    return BALLAST_ENOMEM;
  memcpy(r, s, (size_t)n * sizeof *r);
  task__ring_free(t, c->ring);
  c->ring = r;
  c->cap = cfg.window;
  c->n = n;
  c->head = n % cfg.window;
  c->total = total > n ? total : n;
  c->last = s[n - 1];
  return 0;
}

void **task__single_array(const rta_task_t *t, int *elem, size_t *bytes) {
  if (t->narrays != 1 || t->arrays->type.kind != RTA_TYPE_ELEM)
    return NULL;
  *elem = (int)t->arrays->type.u.elem;
  *bytes = t->arrays->mem_bytes;
  return t->arrays->slot;
}

int task__array_shape(const rta_task_t *t, int *ndims, int64_t *dims) {
  if (t->narrays < 1)
    return BALLAST_ENOTFOUND;
  *ndims = t->arrays->ndims;
  memcpy(dims, t->arrays->dims, sizeof t->arrays->dims);
  return 0;
}

int task__adopt_array(rta_task_t *t, int elem, int ndims,
                      const int64_t *dims, void *mem, size_t bytes) {
  if (t->narrays != 1 || t->arrays->type.kind != RTA_TYPE_ELEM ||
      (int)t->arrays->type.u.elem != elem || ndims < 1 ||
      ndims > RTA_MAX_DIMS) {
    BALLAST_WARN("rta: task \"%s\" arrived as one array of element type %d; "
                 "its unpack callback registered %d array(s) that do not match",
                 t->key, elem, t->narrays);
    return BALLAST_ESIZE;
  }
  task__array_t *a = t->arrays;
  int64_t count = 1;
  for (int d = 0; d < ndims; d++)
    count *= dims[d];
  if ((size_t)count * a->elem_bytes != bytes) {
    BALLAST_WARN("rta: task \"%s\": %zu bytes arrived for an array of %lld "
                 "elements of %zu bytes", t->key, bytes, (long long)count,
                 a->elem_bytes);
    return BALLAST_ESIZE;
  }
  free(*a->slot);
  *a->slot = mem;
  a->ndims = ndims;
  memset(a->dims, 0, sizeof a->dims);
  memcpy(a->dims, dims, (size_t)ndims * sizeof *dims);
  a->count = count;
  a->mem_bytes = bytes;
  return 0;
}

void task__free_arrays(rta_task_t *t) {
  for (task__array_t *a = t->arrays; a; a = a->next) {
    free(*a->slot);
    *a->slot = NULL;
  }
}

void task__give_arrays(rta_task_t *t,
                       void (*give)(void *arg, void *mem, size_t bytes),
                           void *arg) {
  for (task__array_t *a = t->arrays; a; a = a->next)
    if (a->type.kind == RTA_TYPE_ELEM && *a->slot) {
      give(arg, *a->slot, a->mem_bytes);
      *a->slot = NULL;
    }
  task__free_arrays(t);
}

void task__arriving(rta_task_t *t, int on) { t->arriving = (unsigned char)(on != 0); }

int rta_task_array_dims(const rta_task_t *t, void **array, int64_t *dims) {
  if (!t || !array || !dims)
    return BALLAST_EINVAL;
  for (const task__array_t *a = t->arrays; a; a = a->next)
    if (a->slot == array) {
      memcpy(dims, a->dims, (size_t)a->ndims * sizeof *dims);
      return a->ndims;
    }
  return BALLAST_ENOTFOUND;
}
