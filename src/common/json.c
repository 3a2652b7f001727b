/* JSON text for the files ballast writes (json.h). */
#include "common/json.h"

#include <stdlib.h>

void ballast__json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

FILE *ballast__text_open(ballast__text_t *t) {
  t->buf = NULL;
  t->len = 0;
  return t->f = open_memstream(&t->buf, &t->len);
}

char *ballast__text_close(ballast__text_t *t) {
  /* open_memstream sets buf at fclose */
  if (fclose(t->f) != 0) {
    free(t->buf);
    return NULL;
  }
  return t->buf;
}
