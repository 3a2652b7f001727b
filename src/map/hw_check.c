/* Checks a node description before hwloc sees it.
 *
 * hwloc 2.9 trusts its XML: an object with a cpuset but no complete_cpuset
 * (or no complete_nodeset) crashes it, lstopo included. And a synthetic
 * string such as "core:20000" is accepted and takes minutes to load (the
 * time grows with the square of a level's width). So ballast reads the XML's
 * object tags itself and bounds the size of a synthetic node first, naming
 * the file and line, or the string, of the problem. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

/* A topology file longer than this is not one node's description. */
#define XML_MAX_BYTES (64L << 20)

/* The four sets hwloc 2 expects together on every object that has one
 * (I/O and Misc objects have none). */
static const char *const xml_sets[4] = {"cpuset", "complete_cpuset",
                                        "nodeset", "complete_nodeset"};

static int xml_fail(const char *path, const char *buf, const char *at,
                    const char *fmt, const char *arg) {
  int line = 1;
  for (const char *p = buf; p < at; p++)
    line += *p == '\n';
  char m[160];
  snprintf(m, sizeof m, fmt, arg);
  BALLAST_WARN("the XML topology '%s' is refused before hwloc reads it: line "
               "%d: %s", path, line, m);
  return BALLAST_EHWLOC;
}

/* The attributes of the object tag at \a p (just after "<object"): which of
 * the four sets it has, in \a has; a pointer past the tag, or NULL when the
 * tag is malformed. */
static const char *xml_tag(const char *p, int has[4]) {
  memset(has, 0, 4 * sizeof *has);
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      p++;
    if (*p == '>' || (p[0] == '/' && p[1] == '>'))
      return p + 1;
    const char *name = p;
    while (*p && !strchr(" \t\r\n=/>", *p))
      p++;
    size_t nlen = (size_t)(p - name);
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      p++;
    if (nlen == 0 || *p++ != '=')
      return NULL;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      p++;
    char q = *p++;
    if (q != '"' && q != '\'')
      return NULL;
    const char *end = strchr(p, q);
    if (!end)
      return NULL;
    for (int k = 0; k < 4; k++)
      if (strlen(xml_sets[k]) == nlen && !strncmp(name, xml_sets[k], nlen))
        has[k] = 1;
    p = end + 1;
  }
}

/* Every object tag: all four sets or none, and the first (the root) all. */
static int xml_scan(const char *path, const char *buf) {
  int first = 1;
  for (const char *p = buf; (p = strchr(p, '<')) != NULL;) {
    if (!strncmp(p, "<!--", 4)) {
      const char *e = strstr(p + 4, "-->");
      if (!e)
        return xml_fail(path, buf, p, "%s", "a comment that does not end");
      p = e + 3;
      continue;
    }
    if (strncmp(p, "<object", 7) || !strchr(" \t\r\n/>", p[7])) {
      p++;
      continue;
    }
    int has[4];
    const char *e = xml_tag(p + 7, has);
    if (!e)
      return xml_fail(path, buf, p, "%s", "a malformed <object> tag");
    int n = has[0] + has[1] + has[2] + has[3];
    for (int k = 0; k < 4; k++)
      if ((n > 0 || first) && !has[k])
        return xml_fail(path, buf, p, "an <object> without the attribute "
                        "'%s' (hwloc 2 needs cpuset, complete_cpuset, "
                        "nodeset and complete_nodeset together)", xml_sets[k]);
    first = 0;
    p = e;
  }
  if (first)
    return xml_fail(path, buf, buf + strlen(buf), "%s", "no <object> at all");
  return 0;
}

int map__hw_check_xml(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    BALLAST_WARN("cannot open the XML topology '%s'", path);
    return BALLAST_EHWLOC;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size > XML_MAX_BYTES) {
    fclose(f);
    BALLAST_WARN("the XML topology '%s' is not a regular file of at most %ld "
                 "MiB", path, XML_MAX_BYTES >> 20);
    return BALLAST_EHWLOC;
  }
  size_t n = (size_t)st.st_size;
  char *buf = ballast__malloc(n + 1);
  if (!buf) {
    fclose(f);
    return BALLAST_ENOMEM;
  }
  size_t got = fread(buf, 1, n, f);
  fclose(f);
  buf[got] = 0;
  int rc = strlen(buf) != got
               ? xml_fail(path, buf, buf + strlen(buf), "%s", "a NUL byte")
               : xml_scan(path, buf);
  free(buf);
  return rc;
}

int map__hw_check_synthetic(const char *desc) {
  /* The product of the arities: "type:N" or "N" words; what is inside
   * parentheses (attributes) and brackets (memory children) has none. A
   * word is read as strtoul reads it ("0x10" is 16, "-1" huge). */
  int64_t pus = 1;
  int depth = 0;
  for (const char *p = desc; *p;) {
    if (*p == '(' || *p == '[') {
      depth++;
      p++;
      continue;
    }
    if ((*p == ')' || *p == ']') && depth > 0) {
      depth--;
      p++;
      continue;
    }
    if (depth > 0 || isspace((unsigned char)*p)) {
      p++;
      continue;
    }
    const char *w = p;
    while (*p && !isspace((unsigned char)*p) && *p != '(' && *p != '[')
      p++;
    const char *num = w;
    for (const char *q = w; q < p; q++)
      if (*q == ':')
        num = q + 1;
    char word[64];
    size_t n = (size_t)(p - num) < sizeof word - 1 ? (size_t)(p - num)
                                                   : sizeof word - 1;
    memcpy(word, num, n);
    word[n] = 0;
    /* The larger of the decimal and the C reading ("048576" is 4 in base
     * 0, 48576 in base 10): whichever hwloc uses is bounded. */
    errno = 0;
    char *end, *end10;
    unsigned long long a = strtoull(word, &end, 0);
    unsigned long long a10 = strtoull(word, &end10, 10);
    if (a10 > a) {
      a = a10;
      end = end10;
    }
    if (end != word && (errno == ERANGE || a > MAP__HW_MAX_PUS))
      pus = MAP__HW_MAX_PUS + 1;
    else if (end != word && a > 0)
      pus *= (int64_t)a;
    if (pus > MAP__HW_MAX_PUS) {
      BALLAST_WARN("the synthetic topology '%s' has more than %d processing "
                   "units: a node that large is refused (hwloc would take "
                   "minutes to build it)", desc, MAP__HW_MAX_PUS);
      return BALLAST_ERANGE;
    }
  }
  return 0;
}
