/* PIA: region queries (lookup by name, by path, navigation, data). Every call
 * is one or a few O(1) reads of mon's region tree. */
#include <string.h>

#include "pia/pia_internal.h"

BALLAST_API int pia_region_count(void) { return mon__region_count(); }

BALLAST_API pia_regid_t pia_region_find(const char *name) {
  if (!name || !name[0])
    return BALLAST_EINVAL;
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  int id = pia__region_find(name);
  return id >= 0 ? id : BALLAST_ENOTFOUND;
}

BALLAST_API pia_regid_t pia_region_find_child(pia_regid_t parent,
                                              const char *name) {
  if (!name || !name[0])
    return BALLAST_EINVAL;
  int rc = pia__check_region(parent);
  if (rc < 0)
    return rc;
  int id = mon__region_find_child(parent, name);
  return id >= 0 ? id : BALLAST_ENOTFOUND;
}

/* Syntax first, so that a malformed path is EINVAL / ENAMETOOLONG whatever
 * regions exist: no empty component, none longer than MON__NAME_MAX. */
static int path_check(const char *path) {
  size_t len = 0;
  for (const char *c = path;; c++) {
    if (*c == '/' || !*c) {
      if (len == 0)
        return BALLAST_EINVAL;
      if (len > MON__NAME_MAX)
        return BALLAST_ENAMETOOLONG;
      if (!*c)
        return 0;
      len = 0;
    } else {
      len++;
    }
  }
}

BALLAST_API pia_regid_t pia_region_find_by_path(const char *path) {
  if (!path)
    return BALLAST_EINVAL;
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  if (*path == '/')
    path++;
  if (!*path) /* region 0, which does not exist before MPI_Init or when off */
    return pia__check_region(PIA_REGION_MAIN) < 0 ? BALLAST_ENOTFOUND
                                                  : PIA_REGION_MAIN;
  int rc = path_check(path);
  if (rc < 0)
    return rc;
  int id = PIA_REGION_MAIN;
  char comp[MON__NAME_MAX + 1];
  for (;;) {
    const char *slash = strchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : strlen(path);
    memcpy(comp, path, len);
    comp[len] = '\0';
    id = mon__region_find_child(id, comp);
    if (id < 0)
      return BALLAST_ENOTFOUND;
    if (!slash)
      break;
    path = slash + 1;
  }
  return id;
}

BALLAST_API int pia_region_data(pia_regid_t id, pia_regdata_t *data) {
  if (!data)
    return BALLAST_EINVAL;
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  mon__regstats_t s;
  rc = mon__region_read(id, &s);
  if (rc < 0)
    return rc;
  pia__regdata_fill(data, id, &s);
  return 0;
}

BALLAST_API pia_regid_t pia_region_current(void) {
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  return mon__region_current();
}

/* mon answers "none" (root's parent, no child, last sibling) with a negative
 * value; PIA documents BALLAST_ENOTFOUND for all of them. */
BALLAST_API pia_regid_t pia_region_parent(pia_regid_t id) {
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  int p = mon__region_parent(id);
  return p >= 0 ? p : BALLAST_ENOTFOUND;
}

BALLAST_API pia_regid_t pia_region_child(pia_regid_t id) {
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  int c = mon__region_first_child(id);
  return c >= 0 ? c : BALLAST_ENOTFOUND;
}

BALLAST_API pia_regid_t pia_region_next(pia_regid_t id) {
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  int s = mon__region_next_sibling(id);
  return s >= 0 ? s : BALLAST_ENOTFOUND;
}
