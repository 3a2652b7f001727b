/* Task descriptions: the key, stage and parameters of a task, packed so a
 * destination process can define a task that moves to it.
 *
 * Format (native byte order, every field 8-byte aligned):
 *   magic "RTAD" | version, total bytes,
 *   stage, nprocs, est_work, state_size, ncomm,
 *   key (length word, bytes padded to 8),
 *   per partner: bytes, key (length word, bytes padded to 8).
 * Callbacks and user pointers are local to a process and never packed: a
 * task defined from a description inherits its ancestors' callbacks. */
#include "task/task_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

#define DESC_MAGIC ((uint64_t)0x52544144u << 32 | 1u) /* "RTAD", version 1 */

static size_t r8(size_t n) { return (n + 7) & ~(size_t)7; }
static size_t str_bytes(const char *s) { return 8 + r8(strlen(s)); }

int rta__task_desc_size(const rta_task_t *t, size_t *bytes) {
  if (!t || !bytes)
    return BALLAST_EINVAL;
  size_t n = 7 * 8 + str_bytes(t->key);
  for (int i = 0; i < t->params.ncomm; i++)
    n += 8 + str_bytes(t->params.comm[i].key);
  *bytes = n;
  return 0;
}

static unsigned char *put_word(unsigned char *p, const void *v) {
  memcpy(p, v, 8);
  return p + 8;
}

static unsigned char *put_string(unsigned char *p, const char *s) {
  uint64_t len = strlen(s);
  p = put_word(p, &len);
  memcpy(p, s, len);
  memset(p + len, 0, r8(len) - len);
  return p + r8(len);
}

int rta__task_desc_pack(const rta_task_t *t, void *buf, size_t len,
                        size_t *used) {
  size_t need;
  int rc = rta__task_desc_size(t, &need);
  if (rc)
    return rc;
  if (!buf || len < need)
    return BALLAST_ESIZE;
  unsigned char *p = buf;
  uint64_t magic = DESC_MAGIC, total = need, ss = t->params.state_size;
  int64_t stage = t->stage, nprocs = t->params.nprocs, ncomm = t->params.ncomm;
  p = put_word(p, &magic);
  p = put_word(p, &total);
  p = put_word(p, &stage);
  p = put_word(p, &nprocs);
  p = put_word(p, &t->params.est_work);
  p = put_word(p, &ss);
  p = put_word(p, &ncomm);
  p = put_string(p, t->key);
  for (int i = 0; i < t->params.ncomm; i++) {
    p = put_word(p, &t->params.comm[i].bytes);
    p = put_string(p, t->params.comm[i].key);
  }
  if (used)
    *used = need;
  return 0;
}

typedef struct {
  const unsigned char *p, *end;
  int bad;
} rd_t;

static void get_word(rd_t *r, void *v) {
  if (r->bad || r->end - r->p < 8) {
    r->bad = 1;
    memset(v, 0, 8);
    return;
  }
  memcpy(v, r->p, 8);
  r->p += 8;
}

/* Returns a malloc'ed copy of the next string, or NULL (r->bad set). */
static char *get_string(rd_t *r) {
  uint64_t len;
  get_word(r, &len);
  if (r->bad || len == 0 || len > RTA_KEY_MAX ||
      (size_t)(r->end - r->p) < r8(len)) {
    r->bad = 1;
    return NULL;
  }
  char *s = ballast__malloc(len + 1);
  if (!s) {
    r->bad = 1;
    return NULL;
  }
  memcpy(s, r->p, len);
  s[len] = 0;
  r->p += r8(len);
  if (strlen(s) != len) { /* an embedded NUL: corrupt */
    free(s);
    r->bad = 1;
    return NULL;
  }
  return s;
}

int rta__task_desc_unpack(const void *buf, size_t len, size_t *used,
                          rta_task_t **out) {
  if (!buf || !out)
    return BALLAST_EINVAL;
  *out = NULL;
  rd_t r = {buf, (const unsigned char *)buf + len, 0};
  uint64_t magic, total, ss;
  int64_t stage, nprocs, ncomm;
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  get_word(&r, &magic);
  get_word(&r, &total);
  if (r.bad || magic != DESC_MAGIC || total > len)
    return BALLAST_ESIZE;
  r.end = (const unsigned char *)buf + total;
  get_word(&r, &stage);
  get_word(&r, &nprocs);
  get_word(&r, &p.est_work);
  get_word(&r, &ss);
  get_word(&r, &ncomm);
  if (r.bad || nprocs < 1 || nprocs > INT32_MAX || ncomm < 0 ||
      (uint64_t)ncomm > total / 16)
    return BALLAST_ESIZE;
  p.nprocs = (int)nprocs;
  p.state_size = (size_t)ss;
  p.ncomm = (int)ncomm;
  char *key = get_string(&r);
  rta_comm_est_t *comm = ballast__calloc((size_t)(ncomm ? ncomm : 1), sizeof *comm);
  int rc = (r.bad || !comm) ? BALLAST_ESIZE : 0;
  for (int64_t i = 0; i < ncomm && !rc; i++) {
    get_word(&r, &comm[i].bytes);
    comm[i].key = get_string(&r);
    if (r.bad)
      rc = BALLAST_ESIZE;
  }
  if (!rc && r.p != r.end)
    rc = BALLAST_ESIZE;
  rta_task_t *parent = NULL;
  const char *name = key;
  if (!rc) {
    char *slash = strrchr(key, '/');
    if (slash) {
      *slash = 0;
      name = slash + 1;
      if (rta_task_find(key, &parent) != 0) {
        BALLAST_WARN("rta: an arriving task's parent \"%s\" is not defined here",
                     key);
        rc = BALLAST_ENOTFOUND;
      }
    }
  }
  if (!rc) {
    p.comm = comm;
    rc = rta__task_adopt(parent, name, &p, (int)stage, out);
  }
  if (!rc && used)
    *used = total;
  for (int64_t i = 0; comm && i < ncomm; i++)
    free((char *)comm[i].key);
  free(comm);
  free(key);
  return rc;
}
