/*
 * What mon offers the layers above pia (the task runtime and load balancing):
 * whether monitoring is on, and extra sections of the end-of-run report. They
 * read performance data through pia, never through mon's tables; this header
 * is the whole of mon they may include (tools/checks/layers.py checks it).
 * The library's own MPI traffic is bracketed in common (ballast__lib_begin).
 */
#ifndef BALLAST_MON_HOOKS_H
#define BALLAST_MON_HOOKS_H

#include <stdio.h>

/** Non-zero once mon__init ran and monitoring is on (BALLAST_MONITOR!=0). */
int mon__active(void);

/* ---- extra report sections (report_ext.c) -----------------------------------
 * Another module (rta's load balancing) adds its own lines to the end-of-run
 * report and one member to the profile, without mon knowing what they say.
 */

typedef struct {
  const char *name;                    /* profile member name; unique (same name: replaced) */
  void (*report)(FILE *f, void *user); /* rank 0, inside the report; lines start with "# " */
  char *(*json)(void *user);           /* rank 0: a malloc'ed JSON value, or NULL */
  void *user;
  /* Every rank, NULL or a malloc'ed JSON value: the member \a name of that
   * rank's part of the profile ("ranks_data"). May be left NULL. */
  char *(*rank_json)(void *user);
} mon__section_t;

/** Adds (or replaces, by name) a section. 0; BALLAST_EINVAL; BALLAST_ENOMEM when full. */
int mon__report_add_section(const mon__section_t *s);

#endif
