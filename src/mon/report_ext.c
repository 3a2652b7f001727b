/* Extra sections of the end-of-run report and the profile, registered by
 * other modules (rta's load balancing). mon calls them without knowing what
 * they report: data flows one way, from the module to mon's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/common.h>

#include "mon/mon_internal.h"

#define MAX_SECTIONS 8

static mon__section_t sections[MAX_SECTIONS];
static int nsections;

int mon__report_add_section(const mon__section_t *s) {
  if (!s || !s->name)
    return BALLAST_EINVAL;
  for (int i = 0; i < nsections; i++)
    if (!strcmp(sections[i].name, s->name)) {
      sections[i] = *s;
      return 0;
    }
  if (nsections == MAX_SECTIONS)
    return BALLAST_ENOMEM;
  sections[nsections++] = *s;
  return 0;
}

void mon__report_sections_print(FILE *f) {
  for (int i = 0; i < nsections; i++)
    if (sections[i].report)
      sections[i].report(f, sections[i].user);
}

void mon__report_sections_json(FILE *f) {
  for (int i = 0; i < nsections; i++) {
    if (!sections[i].json)
      continue;
    char *v = sections[i].json(sections[i].user);
    if (v)
      fprintf(f, ",\"%s\":%s", sections[i].name, v);
    free(v);
  }
}

char *mon__report_sections_rank_json(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = NULL;
  for (int i = 0; i < nsections; i++) {
    char *v = sections[i].rank_json ? sections[i].rank_json(sections[i].user) : NULL;
    if (v && (f || (f = open_memstream(&buf, &len))))
      fprintf(f, ",\"%s\":%s", sections[i].name, v);
    free(v);
  }
  if (f && fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
