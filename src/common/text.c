/* Text that comes from users (region names, environment values, the
 * command line) made safe to print: UTF-8 checked, control bytes escaped. */
#include <stdio.h>
#include <string.h>

#include "common/util.h"

int ballast__utf8_seq(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80)
    return 1;
  int n;
  unsigned cp, min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0; /* continuation byte, C0/C1 overlong lead, F5..FF */
  }
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0; /* also the terminating NUL: cut short */
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

int ballast__escape(const char *s, const char *extra, char *out, int outlen) {
  int o = 0;
  if (outlen <= 0)
    return 0;
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    char e[8];
    int n = ballast__utf8_seq(p), el;
    if (n > 1) {
      memcpy(e, p, (size_t)n);
      el = n;
    } else if (n == 0 || *p < 0x20 || *p == 0x7F) {
      const char *named = *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" : NULL;
      el = named ? (int)strlen(strcpy(e, named)) : snprintf(e, sizeof e, "\\x%02X", *p);
      n = 1;
    } else if (*p == '\\' || (extra && strchr(extra, *p))) {
      e[0] = '\\', e[1] = (char)*p;
      el = 2;
    } else {
      e[0] = (char)*p;
      el = 1;
    }
    if (o + el >= outlen)
      break;
    memcpy(out + o, e, (size_t)el);
    o += el;
    p += n;
  }
  out[o] = 0;
  return o;
}
