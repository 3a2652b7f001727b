/* A small, iterative XML reader for Cube4's anchor.xml (see cube_xml.h).
 * It accepts the subset Cube writers produce: a prolog (<?xml ...?>),
 * comments, CDATA, a DOCTYPE without an internal subset, elements with
 * quoted attributes, and the five predefined and numeric entities. Anything
 * else is refused with the line where it was found. */
#include "cube_xml.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p, *end;
  int line;
  char *err;
  size_t errlen;
} cx_in_t;

static int fail(cx_in_t *in, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(in->err, in->errlen, "anchor.xml line %d: %s", in->line, msg);
  return -1;
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_name(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
         c == ':' || (unsigned char)c >= 0x80;
}

static void skip_space(cx_in_t *in) {
  while (in->p < in->end && is_space(*in->p)) {
    if (*in->p == '\n') in->line++;
    in->p++;
  }
}

/* Skips up to and including the terminator; counts lines. */
static int skip_past(cx_in_t *in, const char *term, const char *what) {
  size_t tl = strlen(term);
  while (in->p + tl <= in->end) {
    if (memcmp(in->p, term, tl) == 0) {
      in->p += tl;
      return 0;
    }
    if (*in->p == '\n') in->line++;
    in->p++;
  }
  return fail(in, "unterminated %s", what);
}

/* Appends to a growing buffer. */
static int buf_add(char **b, size_t *len, size_t *cap, const char *s,
                   size_t n) {
  if (*len + n + 1 > *cap) {
    size_t nc = *cap ? *cap * 2 : 32;
    while (nc < *len + n + 1) nc *= 2;
    char *nb = realloc(*b, nc);
    if (!nb) return -1;
    *b = nb;
    *cap = nc;
  }
  memcpy(*b + *len, s, n);
  *len += n;
  (*b)[*len] = '\0';
  return 0;
}

static size_t utf8(unsigned long cp, char out[4]) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Decodes s[0..n) (entities) and appends it. */
static int decode_add(cx_in_t *in, char **b, size_t *len, size_t *cap,
                      const char *s, size_t n) {
  static const struct { const char *name; char c; } ents[] = {
    {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && s[j] != '&') j++;
    if (j > i && buf_add(b, len, cap, s + i, j - i)) return fail(in, "out of memory");
    if (j == n) break;
    const char *semi = memchr(s + j, ';', n - j);
    if (!semi || semi - (s + j) > 12) return fail(in, "unterminated entity");
    size_t en = (size_t)(semi - (s + j)) - 1;
    const char *e = s + j + 1;
    char out[4];
    size_t on = 0;
    if (en >= 2 && e[0] == '#') {
      char *endp;
      int hex = (e[1] == 'x');
      char tmp[16];
      memcpy(tmp, e + 1 + hex, en - 1 - hex);
      tmp[en - 1 - hex] = '\0';
      unsigned long cp = strtoul(tmp, &endp, hex ? 16 : 10);
      if (*endp || !tmp[0] || cp == 0 || cp > 0x10FFFF)
        return fail(in, "bad character reference");
      on = utf8(cp, out);
    } else {
      for (size_t k = 0; k < sizeof ents / sizeof ents[0]; k++)
        if (strlen(ents[k].name) == en && memcmp(ents[k].name, e, en) == 0) {
          out[0] = ents[k].c;
          on = 1;
        }
      if (!on) return fail(in, "unknown entity '&%.*s;'", (int)en, e);
    }
    if (buf_add(b, len, cap, out, on)) return fail(in, "out of memory");
    i = (size_t)(semi - s) + 1;
  }
  return 0;
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static int add_text(cx_in_t *in, cx_node_t *cur, size_t *cap, const char *s,
                    size_t n) {
  if (!cur) {
    for (size_t i = 0; i < n; i++)
      if (!is_space(s[i])) return fail(in, "text outside the document element");
    return 0;
  }
  return decode_add(in, &cur->text, &cur->textlen, cap, s, n);
}

/* Reads the attributes of a start tag up to '>' or "/>". */
static int read_attrs(cx_in_t *in, cx_node_t *n, int *empty) {
  int cap = 0;
  for (;;) {
    skip_space(in);
    if (in->p >= in->end) return fail(in, "unterminated start tag <%s", n->name);
    if (*in->p == '>') { in->p++; *empty = 0; return 0; }
    if (*in->p == '/' && in->p + 1 < in->end && in->p[1] == '>') {
      in->p += 2; *empty = 1; return 0;
    }
    const char *s = in->p;
    while (in->p < in->end && is_name(*in->p)) in->p++;
    if (in->p == s) return fail(in, "bad character in tag <%s", n->name);
    size_t nl = (size_t)(in->p - s);
    skip_space(in);
    if (in->p >= in->end || *in->p != '=')
      return fail(in, "attribute '%.*s' without a value", (int)nl, s);
    in->p++;
    skip_space(in);
    if (in->p >= in->end || (*in->p != '"' && *in->p != '\''))
      return fail(in, "attribute '%.*s' value not quoted", (int)nl, s);
    char q = *in->p++;
    const char *v = in->p;
    while (in->p < in->end && *in->p != q && *in->p != '<') {
      if (*in->p == '\n') in->line++;
      in->p++;
    }
    if (in->p >= in->end || *in->p != q)
      return fail(in, "unterminated value of attribute '%.*s'", (int)nl, s);
    if (n->nattr == cap) {
      cap = cap ? cap * 2 : 4;
      cx_attr_t *na = realloc(n->attr, (size_t)cap * sizeof *na);
      if (!na) return fail(in, "out of memory");
      n->attr = na;
    }
    cx_attr_t *a = &n->attr[n->nattr];
    a->name = dup_n(s, nl);
    a->value = NULL;
    size_t len = 0, vcap = 0;
    n->nattr++;
    if (!a->name) return fail(in, "out of memory");
    if (decode_add(in, &a->value, &len, &vcap, v, (size_t)(in->p - v))) return -1;
    if (!a->value && !(a->value = dup_n("", 0))) return fail(in, "out of memory");
    in->p++;
  }
}

static int start_tag(cx_in_t *in, cx_node_t **cur, cx_node_t **root,
                     size_t *textcap) {
  const char *s = in->p;
  while (in->p < in->end && is_name(*in->p)) in->p++;
  if (in->p == s) return fail(in, "bad character after '<'");
  if (!*cur && *root) return fail(in, "a second document element");
  cx_node_t *n = calloc(1, sizeof *n);
  if (!n || !(n->name = dup_n(s, (size_t)(in->p - s)))) {
    free(n);
    return fail(in, "out of memory");
  }
  n->line = in->line;
  n->parent = *cur;
  if (*cur) {
    if ((*cur)->last) (*cur)->last->next = n; else (*cur)->first = n;
    (*cur)->last = n;
  } else {
    *root = n;
  }
  int empty = 0;
  if (read_attrs(in, n, &empty)) return -1;
  if (!empty) {
    *cur = n;
    *textcap = 0;
  }
  return 0;
}

static int end_tag(cx_in_t *in, cx_node_t **cur, size_t *textcap) {
  const char *s = in->p;
  while (in->p < in->end && is_name(*in->p)) in->p++;
  size_t nl = (size_t)(in->p - s);
  skip_space(in);
  if (in->p >= in->end || *in->p != '>') return fail(in, "bad end tag");
  in->p++;
  if (!*cur) return fail(in, "end tag </%.*s> without a start", (int)nl, s);
  if (strlen((*cur)->name) != nl || memcmp((*cur)->name, s, nl) != 0)
    return fail(in, "end tag </%.*s> closes <%s> of line %d", (int)nl, s,
                (*cur)->name, (*cur)->line);
  *cur = (*cur)->parent;
  /* Text after a child goes on being appended to the parent's text. */
  *textcap = *cur ? (*cur)->textlen + 1 : 0;
  return 0;
}

static int markup(cx_in_t *in, cx_node_t **cur, cx_node_t **root,
                  size_t *textcap) {
  in->p++; /* '<' */
  if (in->p >= in->end) return fail(in, "document ends in '<'");
  if (*in->p == '?') return skip_past(in, "?>", "processing instruction");
  if (in->end - in->p >= 3 && memcmp(in->p, "!--", 3) == 0)
    return skip_past(in, "-->", "comment");
  if (in->end - in->p >= 8 && memcmp(in->p, "![CDATA[", 8) == 0) {
    in->p += 8;
    const char *s = in->p;
    if (skip_past(in, "]]>", "CDATA section")) return -1;
    if (!*cur) return fail(in, "CDATA outside the document element");
    if (buf_add(&(*cur)->text, &(*cur)->textlen, textcap, s,
                (size_t)(in->p - 3 - s)))
      return fail(in, "out of memory");
    return 0;
  }
  if (*in->p == '!') {
    if (memchr(in->p, '[', (size_t)(in->end - in->p)) &&
        (const char *)memchr(in->p, '[', (size_t)(in->end - in->p)) <
            (const char *)memchr(in->p, '>', (size_t)(in->end - in->p)))
      return fail(in, "a DTD internal subset is not supported");
    return skip_past(in, ">", "declaration");
  }
  if (*in->p == '/') {
    in->p++;
    return end_tag(in, cur, textcap);
  }
  return start_tag(in, cur, root, textcap);
}

int cx_parse(const char *buf, size_t len, cx_node_t **root, char *err,
             size_t errlen) {
  cx_in_t in = {buf, buf + len, 1, err, errlen};
  cx_node_t *cur = NULL;
  size_t textcap = 0;
  *root = NULL;
  if (memchr(buf, '\0', len)) {
    snprintf(err, errlen, "anchor.xml: contains a NUL byte");
    return -1;
  }
  while (in.p < in.end) {
    const char *lt = memchr(in.p, '<', (size_t)(in.end - in.p));
    const char *stop = lt ? lt : in.end;
    for (const char *q = in.p; q < stop; q++)
      if (*q == '\n') in.line++;
    if (stop > in.p && add_text(&in, cur, &textcap, in.p, (size_t)(stop - in.p)))
      goto bad;
    in.p = stop;
    if (!lt) break;
    if (markup(&in, &cur, root, &textcap)) goto bad;
  }
  if (cur) {
    fail(&in, "document ends inside <%s> of line %d", cur->name, cur->line);
    goto bad;
  }
  if (!*root) {
    fail(&in, "no document element");
    goto bad;
  }
  return 0;
bad:
  cx_free(*root);
  *root = NULL;
  return -1;
}

void cx_free(cx_node_t *n) {
  /* Iterative post-order: descend to a leaf, free it, move on. */
  while (n) {
    if (n->first) {
      cx_node_t *c = n->first;
      n->first = c->next;
      c->next = NULL;
      c->parent = n;
      n = c;
      continue;
    }
    cx_node_t *up = n->parent;
    for (int i = 0; i < n->nattr; i++) {
      free(n->attr[i].name);
      free(n->attr[i].value);
    }
    free(n->attr);
    free(n->name);
    free(n->text);
    free(n);
    n = up;
  }
}

const char *cx_attr(const cx_node_t *n, const char *name) {
  for (int i = 0; n && i < n->nattr; i++)
    if (strcmp(n->attr[i].name, name) == 0) return n->attr[i].value;
  return NULL;
}

cx_node_t *cx_child(const cx_node_t *n, const char *name) {
  for (cx_node_t *c = n ? n->first : NULL; c; c = c->next)
    if (strcmp(c->name, name) == 0) return c;
  return NULL;
}

const char *cx_child_text(const cx_node_t *n, const char *name) {
  cx_node_t *c = cx_child(n, name);
  if (!c) return NULL;
  return c->text ? c->text : "";
}

cx_node_t *cx_next(const cx_node_t *n, const cx_node_t *top) {
  if (n->first) return n->first;
  while (n && n != top) {
    if (n->next) return n->next;
    n = n->parent;
  }
  return NULL;
}
