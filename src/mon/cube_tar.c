/*
 * The pieces of a Cube4 archive that do not depend on the run (cube.c
 * writes the archive): POSIX ustar member headers, a growing text buffer
 * for anchor.xml with XML escaping, and the metric index member.
 *
 * A ustar header is one 512-byte block: name (100), mode (8), uid (8),
 * gid (8), size (12), mtime (12), checksum (8), type flag (1), link name
 * (100), magic "ustar\0" (6), version "00" (2), user and group names (32
 * each), device numbers (8 each), name prefix (155), padding (12). Numbers
 * are octal text ending in NUL; a size of 8 GiB or more does not fit 11
 * octal digits and is written in base 256 (first byte 0x80, then the value
 * big-endian), the GNU extension that Python's tarfile and GNU tar read.
 * The checksum is the sum of the header's bytes with its own field taken
 * as eight spaces, written as six octal digits, NUL, space.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/util.h"
#include "mon/mon_core.h"

static void octal(char *field, size_t width, uint64_t v) {
  /* width - 1 digits and the NUL */
  snprintf(field, width, "%0*llo", (int)(width - 1), (unsigned long long)v);
}

int mon__tar_header(unsigned char hdr[512], const char *name, uint64_t size,
                    uint64_t mtime) {
  size_t nlen = strlen(name);
  if (nlen == 0 || nlen > 99)
    return BALLAST_EINVAL;
  memset(hdr, 0, 512);
  memcpy(hdr, name, nlen);
  char *h = (char *)hdr;
  octal(h + 100, 8, 0644);
  octal(h + 108, 8, 0);
  octal(h + 116, 8, 0);
  if (size < (1ull << 33)) {
    octal(h + 124, 12, size);
  } else {
    hdr[124] = 0x80;
    for (int i = 0; i < 8; i++)
      hdr[135 - i] = (unsigned char)(size >> (8 * i));
  }
  octal(h + 136, 12, mtime & 077777777777ull);
  h[156] = '0';
  memcpy(h + 257, "ustar", 6);
  memcpy(h + 263, "00", 2);
  memcpy(h + 265, "ballast", 7);
  memcpy(h + 297, "ballast", 7);
  memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++)
    sum += hdr[i];
  snprintf(h + 148, 7, "%06o", sum & 0777777u);
  h[154] = 0;
  h[155] = ' ';
  return 0;
}

uint64_t mon__tar_padded(uint64_t size) { return (size + 511) & ~(uint64_t)511; }

/* ---- text buffer ------------------------------------------------------------- */

void mon__xb_put(mon__xb_t *b, const char *p, size_t n) {
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 65536;
    while (b->len + n + 1 > cap)
      cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->oom = 1;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = 0;
}

void mon__xb_printf(mon__xb_t *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp) {
    b->oom = 1; /* only short formats are used */
    return;
  }
  mon__xb_put(b, tmp, (size_t)n);
}

/* XML character data or an attribute value: the five markup characters as
 * entities, control bytes that XML 1.0 forbids and bytes that are not
 * well-formed UTF-8 as U+FFFD, so any region name gives a valid file. */
void mon__xb_xml(mon__xb_t *b, const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  while (p < end) {
    unsigned char c = *p;
    int n = c ? ballast__utf8_seq(p) : 0;
    if (n > 1 && p + n <= end) {
      mon__xb_put(b, (const char *)p, (size_t)n);
      p += n;
      continue;
    }
    p++;
    switch (c) {
    case '&': mon__xb_put(b, "&amp;", 5); break;
    case '<': mon__xb_put(b, "&lt;", 4); break;
    case '>': mon__xb_put(b, "&gt;", 4); break;
    case '"': mon__xb_put(b, "&quot;", 6); break;
    case '\'': mon__xb_put(b, "&apos;", 6); break;
    default:
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c >= 0x80)
        mon__xb_put(b, "\xef\xbf\xbd", 3);
      else
        mon__xb_put(b, (const char *)&c, 1);
    }
  }
}

/* ---- metric index -------------------------------------------------------------- */

size_t mon__cube_index(unsigned char out[MON__CUBE_INDEX_SIZE]) {
  /* "CUBEX.INDEX", the endianness probe uint32 1, version uint16 0 and the
   * dense format (3), all in the writer's byte order, which is little
   * endian: cube.c writes every number little endian. */
  memcpy(out, "CUBEX.INDEX", 11);
  const unsigned char rest[7] = {1, 0, 0, 0, 0, 0, 3};
  memcpy(out + 11, rest, sizeof rest);
  return MON__CUBE_INDEX_SIZE;
}
