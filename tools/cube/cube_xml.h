/* A small XML reader for Cube4's anchor.xml: elements, attributes and text,
 * no DTD, no namespaces. Iterative (a linear call tree nests as deep as it
 * is long), so depth costs heap, never stack. Part of ballast-cube
 * (tools/cube), not of the library. */
#ifndef BALLAST_CUBE_XML_H
#define BALLAST_CUBE_XML_H

#include <stddef.h>

typedef struct cx_attr {
  char *name;
  char *value;
} cx_attr_t;

typedef struct cx_node {
  char *name;
  int nattr;
  cx_attr_t *attr;
  char *text;               /* character data directly inside, or "" */
  size_t textlen;
  struct cx_node *parent;
  struct cx_node *first;    /* first child element */
  struct cx_node *last;
  struct cx_node *next;     /* next sibling element */
  int line;                 /* line of the start tag, for messages */
  long user;                /* free for the caller (0 after parsing) */
} cx_node_t;

/* Parses buf[0..len) into a tree of elements; *root receives the document
 * element (the caller frees it with cx_free()). 0, or -1 with a message
 * naming the line and the problem in err. */
int cx_parse(const char *buf, size_t len, cx_node_t **root, char *err,
             size_t errlen);

/* Frees a tree (iteratively). NULL does nothing. */
void cx_free(cx_node_t *n);

/* The value of attribute name, or NULL. */
const char *cx_attr(const cx_node_t *n, const char *name);

/* The first child element called name, or NULL. */
cx_node_t *cx_child(const cx_node_t *n, const char *name);

/* The element after n in document order within the subtree of top, or
 * NULL at its end (an iterative pre-order walk). */
cx_node_t *cx_next(const cx_node_t *n, const cx_node_t *top);

/* The text of the first child element called name, or NULL. */
const char *cx_child_text(const cx_node_t *n, const char *name);

#endif
