/* Registered arrays: registration, packed sizes, pack and unpack.
 *
 * Packed form of a task's arrays (all words 8 bytes, native byte order: a
 * move stays within one job on one kind of machine):
 *   count of arrays
 *   per array: header of TASK__ARRAY_HDR_BYTES =
 *     magic | kind, element id (ballast type) or element size (MPI type),
 *     ndims, payload bytes, dims[RTA_MAX_DIMS]
 *   then the payload, padded to 8 bytes.
 */
#include "task/task_internal.h"

#include <complex.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

#define ARRAY_MAGIC 0x52544141u /* "RTAA" */


size_t rta_elem_size(rta_elem_t e) {
  static const size_t sizes[RTA_ELEM_END_] = {
      [RTA_BYTE] = 1,
      [RTA_CHAR] = sizeof(char),
      [RTA_INT8] = 1,
      [RTA_UINT8] = 1,
      [RTA_INT16] = 2,
      [RTA_UINT16] = 2,
      [RTA_INT32] = 4,
      [RTA_UINT32] = 4,
      [RTA_INT64] = 8,
      [RTA_UINT64] = 8,
      [RTA_INT] = sizeof(int),
      [RTA_LONG] = sizeof(long),
      [RTA_FLOAT] = sizeof(float),
      [RTA_DOUBLE] = sizeof(double),
      [RTA_COMPLEX_FLOAT] = sizeof(float _Complex),
      [RTA_COMPLEX_DOUBLE] = sizeof(double _Complex),
  };
  return ((int)e > 0 && e < RTA_ELEM_END_) ? sizes[e] : 0;
}

/* MPI_Pack counts are ints: large arrays are packed in chunks. */
#define CHUNK ((int64_t)1 << 30)

/* Packed payload bytes of count elements of the array's type. */
static int payload_bytes(const task__array_t *a, size_t *out) {
  if (a->type.kind == RTA_TYPE_ELEM) {
    *out = (size_t)a->count * a->elem_bytes;
    return 0;
  }
  size_t total = 0;
  for (int64_t done = 0; done < a->count; done += CHUNK) {
    int64_t n = a->count - done < CHUNK ? a->count - done : CHUNK;
    int sz = 0;
    ballast__lib_begin();
    int mrc = MPI_Pack_size((int)n, a->type.u.mpi, MPI_COMM_SELF, &sz);
    ballast__lib_end();
    if (mrc != MPI_SUCCESS)
      return BALLAST_EMPI;
    if (total > SIZE_MAX - (size_t)sz)
      return BALLAST_EOVERFLOW;
    total += (size_t)sz;
  }
  *out = total;
  return 0;
}

int task__array_packed_size(const task__array_t *a, size_t *bytes) {
  size_t p;
  int rc = payload_bytes(a, &p);
  if (rc)
    return rc;
  if (p > SIZE_MAX - TASK__ARRAY_HDR_BYTES - 8)
    return BALLAST_EOVERFLOW;
  *bytes = TASK__ARRAY_HDR_BYTES + ballast__round8(p);
  return 0;
}

int rta_task_arrays_packed_size(const rta_task_t *t, size_t *bytes) {
  if (!t || !bytes)
    return BALLAST_EINVAL;
  size_t total = 8;
  for (const task__array_t *a = t->arrays; a; a = a->next) {
    size_t b;
    int rc = task__array_packed_size(a, &b);
    if (rc)
      return rc;
    if (total > SIZE_MAX - b)
      return BALLAST_EOVERFLOW;
    total += b;
  }
  *bytes = total;
  return 0;
}

/* Sets count, elem_bytes and mem_bytes from type and dims. */
static int size_array(task__array_t *a) {
  int64_t count = 1;
  for (int d = 0; d < a->ndims; d++) {
    if (a->dims[d] < 0)
      return BALLAST_EINVAL;
    if (a->dims[d] > 0 && count > INT64_MAX / a->dims[d])
      return BALLAST_EOVERFLOW;
    count *= a->dims[d];
  }
  a->count = count;
  if (a->type.kind == RTA_TYPE_ELEM) {
    a->elem_bytes = rta_elem_size(a->type.u.elem);
    if (count > 0 && (uint64_t)count > SIZE_MAX / a->elem_bytes)
      return BALLAST_EOVERFLOW;
    a->mem_bytes = (size_t)count * a->elem_bytes;
    return 0;
  }
  int sz;
  MPI_Aint lb, extent, tlb, textent;
  ballast__lib_begin();
  int bad = MPI_Type_size(a->type.u.mpi, &sz) != MPI_SUCCESS ||
            MPI_Type_get_extent(a->type.u.mpi, &lb, &extent) != MPI_SUCCESS ||
            MPI_Type_get_true_extent(a->type.u.mpi, &tlb, &textent) != MPI_SUCCESS;
  ballast__lib_end();
  if (bad)
    return BALLAST_EMPI;
  if (tlb < 0 || extent < 0)
    return BALLAST_ENOTSUP;
  a->elem_bytes = (size_t)sz;
  if (count == 0) {
    a->mem_bytes = 0;
    return 0;
  }
  /* Elements start every extent bytes; the last one reaches tlb + textent. */
  if ((uint64_t)(count - 1) > (SIZE_MAX - (size_t)(tlb + textent)) /
                                  (extent > 0 ? (size_t)extent : 1))
    return BALLAST_EOVERFLOW;
  a->mem_bytes = (size_t)(count - 1) * (size_t)extent + (size_t)(tlb + textent);
  return 0;
}

static void free_array_record(rta_task_t *t, task__array_t *a) {
  if (a->slot == &a->own)
    free(a->own); /* rta's own array: nobody else frees it */
  if (a->type.kind == RTA_TYPE_MPI && a->type.u.mpi != MPI_DATATYPE_NULL) {
    int fin = 0;
    ballast__lib_begin();
    MPI_Finalized(&fin);
    if (!fin)
      MPI_Type_free(&a->type.u.mpi);
    ballast__lib_end();
  }
  if (a == &t->array0)
    t->array0_used = 0;
  else
    free(a);
}

/* rta_task_array_register; with array NULL and owned set, the array is rta's
 * own (slot = &own, see task__arrays_own). */
static int add_array(rta_task_t *t, void **array, int owned, rta_type_t type,
                     int ndims, const int64_t *dims) {
  if (!t || (!array && !owned) || !dims || ndims < 1 || ndims > RTA_MAX_DIMS) {
    BALLAST_WARN("rta: task_array_register on \"%s\": NULL argument or ndims %d "
                 "outside 1..%d", t ? t->key : "(NULL task)", ndims, RTA_MAX_DIMS);
    return BALLAST_EINVAL;
  }
  if (type.kind == RTA_TYPE_ELEM ? rta_elem_size(type.u.elem) == 0
                                 : (type.kind != RTA_TYPE_MPI ||
                                    type.u.mpi == MPI_DATATYPE_NULL)) {
    BALLAST_WARN("rta: task_array_register on \"%s\": invalid element type", t->key);
    return BALLAST_EINVAL;
  }
  for (task__array_t *a = t->arrays; a && array; a = a->next)
    if (a->slot == array) {
      BALLAST_WARN("rta: task_array_register on \"%s\": array already registered",
                   t->key);
      return BALLAST_EEXIST;
    }
  task__array_t *a = &t->array0;
  if (!t->array0_used) {
    memset(a, 0, sizeof *a);
    t->array0_used = 1;
  } else if (!(a = ballast__calloc(1, sizeof *a))) {
    return BALLAST_ENOMEM;
  }
  a->slot = owned ? &a->own : array;
  array = a->slot;
  a->ndims = ndims;
  memcpy(a->dims, dims, (size_t)ndims * sizeof *dims);
  a->type.kind = type.kind;
  if (type.kind == RTA_TYPE_ELEM)
    a->type.u.elem = type.u.elem;
  else {
    ballast__lib_begin();
    int mrc = MPI_Type_dup(type.u.mpi, &a->type.u.mpi);
    ballast__lib_end();
    if (mrc != MPI_SUCCESS) {
      free(a);
      return BALLAST_EMPI;
    }
  }
  int rc = size_array(a);
  if (!rc) {
    size_t b;
    rc = task__array_packed_size(a, &b);
  }
  /* A NULL array of some elements would fail every later move that packs it
   * (as a failed pack, far from the cause): refuse it here. Arrays an
   * arriving task registers in its unpack callback receive what arrives and
   * may be NULL. */
  if (!rc && !*array && a->mem_bytes > 0 && !t->arriving) {
    BALLAST_WARN("rta: task_array_register on \"%s\": array %d is NULL but its dims "
                 "give %zu bytes", t->key, t->narrays, a->mem_bytes);
    free_array_record(t, a);
    return BALLAST_EINVAL;
  }
  if (rc) {
    BALLAST_WARN("rta: task_array_register on \"%s\": %s", t->key,
                 ballast_strerror(rc));
    free_array_record(t, a);
    return rc;
  }
  task__array_t **tail = &t->arrays;
  while (*tail)
    tail = &(*tail)->next;
  *tail = a;
  t->narrays++;
  return 0;
}

int rta_task_array_register(rta_task_t *t, void **array, rta_type_t type, int ndims,
                       const int64_t *dims) {
  return add_array(t, array, 0, type, ndims, dims);
}

int task__arrays_own(rta_task_t *t, const void *buf, size_t len, int lead,
                     int elem, int ndims, const int64_t *dims) {
  t->arriving = 1; /* NULL until what arrives is stored */
  int rc = 0;
  if (!buf) {
    rc = add_array(t, NULL, 1, rta_type_elem((rta_elem_t)elem), ndims, dims);
    t->arriving = 0;
    return rc;
  }
  const unsigned char *p = buf, *end = p + len;
  uint64_t n = 0;
  if (len >= 8)
    memcpy(&n, p, 8);
  p += 8;
  for (uint64_t i = 0; !rc && i < n; i++) {
    uint64_t hdr[4 + RTA_MAX_DIMS];
    if (len < 8 || (size_t)(end - p) < sizeof hdr) {
      rc = BALLAST_ESIZE;
      break;
    }
    memcpy(hdr, p, sizeof hdr);
    p += sizeof hdr;
    if (hdr[0] >> 32 != ARRAY_MAGIC || hdr[2] < 1 || hdr[2] > RTA_MAX_DIMS) {
      rc = BALLAST_ESIZE;
      break;
    }
    if ((hdr[0] & 0xffffffffu) != RTA_TYPE_ELEM) {
      BALLAST_WARN("rta: task \"%s\" arrives with array %llu of an MPI datatype "
                   "and no unpack callback registered its receiver (only the "
                   "application can rebuild the datatype)", t->key,
                   (unsigned long long)i);
      rc = BALLAST_ECALLBACK;
      break;
    }
    int64_t d[RTA_MAX_DIMS];
    for (uint64_t k = 0; k < hdr[2]; k++)
      d[k] = (int64_t)hdr[4 + k];
    rc = add_array(t, NULL, 1, rta_type_elem((rta_elem_t)hdr[1]), (int)hdr[2], d);
    /* The payload follows, unless it travelled on its own (the lead). */
    if (i != (uint64_t)lead) {
      size_t pay = ballast__round8((size_t)hdr[3]);
      if ((size_t)(end - p) < pay)
        rc = BALLAST_ESIZE;
      else
        p += pay;
    }
  }
  t->arriving = 0;
  if (rc)
    task__arrays_clear(t);
  return rc;
}

int rta_task_array(const rta_task_t *t, int i, void ***slot) {
  if (!t || !slot || i < 0)
    return BALLAST_EINVAL;
  *slot = NULL;
  const task__array_t *a = t->arrays;
  for (int k = 0; a && k < i; k++)
    a = a->next;
  if (!a)
    return BALLAST_ENOTFOUND;
  *slot = a->slot;
  return 0;
}

int rta_task_array_unregister(rta_task_t *t, void **array) {
  if (!t || !array)
    return BALLAST_EINVAL;
  for (task__array_t **p = &t->arrays; *p; p = &(*p)->next)
    if ((*p)->slot == array) {
      task__array_t *a = *p;
      *p = a->next;
      free_array_record(t, a);
      t->narrays--;
      return 0;
    }
  return BALLAST_ENOTFOUND;
}

int rta_task_narrays(const rta_task_t *t) { return t ? t->narrays : BALLAST_EINVAL; }

void task__arrays_clear(rta_task_t *t) {
  task__array_t *a = t->arrays;
  while (a) {
    task__array_t *n = a->next;
    free_array_record(t, a);
    a = n;
  }
  t->arrays = NULL;
  t->narrays = 0;
}

/* ---- pack / unpack -------------------------------------------------------- */

static uint64_t type_word(const task__array_t *a) {
  return a->type.kind == RTA_TYPE_ELEM ? (uint64_t)a->type.u.elem
                                       : (uint64_t)a->elem_bytes;
}

int task__arrays_lead(const rta_task_t *t, size_t *bytes) {
  int lead = -1, i = 0;
  size_t best = 0;
  for (const task__array_t *a = t->arrays; a; a = a->next, i++)
    if (a->type.kind == RTA_TYPE_ELEM && *a->slot && a->mem_bytes > best) {
      best = a->mem_bytes;
      lead = i;
    }
  if (bytes)
    *bytes = best;
  return lead;
}

int task__arrays_packed_size_lead(const rta_task_t *t, int lead, size_t *bytes) {
  int rc = rta_task_arrays_packed_size(t, bytes);
  if (rc || lead < 0)
    return rc;
  int i = 0;
  for (const task__array_t *a = t->arrays; a; a = a->next, i++)
    if (i == lead) {
      if (a->type.kind != RTA_TYPE_ELEM)
        return BALLAST_EINVAL;
      *bytes -= ballast__round8(a->mem_bytes);
      return 0;
    }
  return BALLAST_EINVAL;
}

/* The payload of an array of an MPI datatype, packed in chunks of at most
 * CHUNK elements (MPI's counts are ints). MPI_Pack is the library's own MPI
 * use, bracketed like its traffic. */
static int pack_mpi(const task__array_t *a, unsigned char *dst) {
  int rc = 0;
  MPI_Aint extent, lb;
  ballast__lib_begin();
  MPI_Type_get_extent(a->type.u.mpi, &lb, &extent);
  size_t off = 0;
  for (int64_t done = 0; done < a->count && !rc; done += CHUNK) {
    int64_t k = a->count - done < CHUNK ? a->count - done : CHUNK;
    int sz, pos = 0;
    MPI_Pack_size((int)k, a->type.u.mpi, MPI_COMM_SELF, &sz);
    if (MPI_Pack((char *)*a->slot + done * extent, (int)k, a->type.u.mpi, dst + off,
                 sz, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
    off += (size_t)sz;
  }
  ballast__lib_end();
  return rc;
}

/* The inverse of pack_mpi: \a count elements of \a type from \a src into \a dst. */
static int unpack_mpi(MPI_Datatype type, int64_t count, const unsigned char *src,
                      void *dst) {
  int rc = 0;
  MPI_Aint extent, lb;
  ballast__lib_begin();
  MPI_Type_get_extent(type, &lb, &extent);
  size_t off = 0;
  for (int64_t done = 0; done < count && !rc; done += CHUNK) {
    int64_t k = count - done < CHUNK ? count - done : CHUNK;
    int sz, pos = 0;
    MPI_Pack_size((int)k, type, MPI_COMM_SELF, &sz);
    if (MPI_Unpack(src + off, sz, &pos, (char *)dst + done * extent, (int)k, type,
                   MPI_COMM_SELF) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
    off += (size_t)sz;
  }
  ballast__lib_end();
  return rc;
}

int task__arrays_pack(const rta_task_t *t, void *buf, size_t len, size_t *used) {
  return task__arrays_pack_lead(t, -1, buf, len, used);
}

int task__arrays_pack_lead(const rta_task_t *t, int lead, void *buf, size_t len,
                           size_t *used) {
  size_t need;
  int rc = task__arrays_packed_size_lead(t, lead, &need);
  if (rc)
    return rc;
  if (!buf || len < need)
    return BALLAST_ESIZE;
  unsigned char *p = buf;
  uint64_t n = (uint64_t)t->narrays;
  memcpy(p, &n, 8);
  p += 8;
  int idx = 0;
  for (const task__array_t *a = t->arrays; a; a = a->next, idx++) {
    size_t pay;
    if ((rc = payload_bytes(a, &pay)))
      return rc;
    uint64_t hdr[4 + RTA_MAX_DIMS] = {0};
    hdr[0] = ((uint64_t)ARRAY_MAGIC << 32) | (uint64_t)a->type.kind;
    hdr[1] = type_word(a);
    hdr[2] = (uint64_t)a->ndims;
    hdr[3] = pay;
    for (int d = 0; d < a->ndims; d++)
      hdr[4 + d] = (uint64_t)a->dims[d];
    memcpy(p, hdr, sizeof hdr);
    p += sizeof hdr;
    if (pay > 0 && !*a->slot)
      return BALLAST_EINVAL; /* registered but never allocated */
    if (idx == lead)
      continue; /* its payload travels on its own */
    if (a->type.kind == RTA_TYPE_ELEM) {
      if (pay)
        memcpy(p, *a->slot, pay);
    } else if ((rc = pack_mpi(a, p))) {
      return rc;
    }
    memset(p + pay, 0, ballast__round8(pay) - pay);
    p += ballast__round8(pay);
  }
  if (used)
    *used = (size_t)(p - (unsigned char *)buf);
  return 0;
}

int task__arrays_unpack(rta_task_t *t, const void *buf, size_t len,
                        size_t *used) {
  return task__arrays_unpack_lead(t, buf, len, used, -1, NULL, 0);
}

int task__arrays_unpack_lead(rta_task_t *t, const void *buf, size_t len,
                             size_t *used, int lead, void *lead_mem,
                             size_t lead_bytes) {
  if (!t || (!buf && len) || (lead >= 0 && !lead_mem && lead_bytes))
    return BALLAST_EINVAL;
  const unsigned char *p = buf, *end = p + len;
  uint64_t n;
  if (len < 8)
    return BALLAST_ESIZE;
  memcpy(&n, p, 8);
  p += 8;
  if (n != (uint64_t)t->narrays) {
    BALLAST_WARN("rta: unpack \"%s\": %llu arrays packed, %d registered", t->key,
                 (unsigned long long)n, t->narrays);
    return BALLAST_ESIZE;
  }
  if (lead >= 0 && (uint64_t)lead >= n)
    return BALLAST_ESIZE;
  /* Pass 1 fills new buffers; pass 2 swaps them in. Nothing the application
   * sees changes unless every array unpacks. */
  void **fresh = ballast__calloc(n ? n : 1, sizeof *fresh);
  task__array_t *shape = ballast__calloc(n ? n : 1, sizeof *shape);
  int rc = (!fresh || !shape) ? BALLAST_ENOMEM : 0;
  uint64_t i = 0;
  for (task__array_t *a = t->arrays; a && !rc; a = a->next, i++) {
    uint64_t hdr[4 + RTA_MAX_DIMS];
    if ((size_t)(end - p) < sizeof hdr) {
      rc = BALLAST_ESIZE;
      break;
    }
    memcpy(hdr, p, sizeof hdr);
    p += sizeof hdr;
    shape[i] = *a;
    shape[i].ndims = (int)hdr[2];
    if (hdr[0] != (((uint64_t)ARRAY_MAGIC << 32) | (uint64_t)a->type.kind) ||
        hdr[1] != type_word(a) || hdr[2] < 1 || hdr[2] > RTA_MAX_DIMS) {
      rc = BALLAST_ESIZE;
      break;
    }
    for (int d = 0; d < shape[i].ndims; d++)
      shape[i].dims[d] = (int64_t)hdr[4 + d];
    size_t pay;
    if ((rc = size_array(&shape[i])) || (rc = payload_bytes(&shape[i], &pay)))
      break;
    if (i == (uint64_t)lead) {
      /* The payload arrived on its own, in memory the array adopts. */
      if (a->type.kind != RTA_TYPE_ELEM || pay != hdr[3] || pay != lead_bytes) {
        rc = BALLAST_ESIZE;
        break;
      }
      fresh[i] = lead_mem;
      continue;
    }
    if (pay != hdr[3] || (size_t)(end - p) < ballast__round8(pay)) {
      rc = BALLAST_ESIZE;
      break;
    }
    fresh[i] = rta_array_alloc(shape[i].mem_bytes);
    if (!fresh[i]) {
      rc = BALLAST_ENOMEM;
      break;
    }
    if (a->type.kind == RTA_TYPE_ELEM) {
      if (pay)
        memcpy(fresh[i], p, pay);
    } else {
      rc = unpack_mpi(a->type.u.mpi, shape[i].count, p, fresh[i]);
    }
    p += ballast__round8(pay);
  }
  if (rc) {
    if (rc == BALLAST_ESIZE)
      BALLAST_WARN("rta: unpack \"%s\": array %llu does not match its "
                   "registration or the buffer is short", t->key,
                   (unsigned long long)i);
    for (uint64_t j = 0; fresh && j < n; j++)
      if (j != (uint64_t)lead)
        free(fresh[j]);
  } else {
    i = 0;
    for (task__array_t *a = t->arrays; a; a = a->next, i++) {
      if (*a->slot != fresh[i])
        free(*a->slot);
      *a->slot = fresh[i];
      a->ndims = shape[i].ndims;
      memcpy(a->dims, shape[i].dims, sizeof a->dims);
      a->count = shape[i].count;
      a->mem_bytes = shape[i].mem_bytes;
    }
    if (used)
      *used = (size_t)(p - (const unsigned char *)buf);
  }
  free(fresh);
  free(shape);
  return rc;
}
