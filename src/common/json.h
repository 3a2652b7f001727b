/*
 * JSON text for the files ballast writes (the profile's members written
 * through stdio streams, e.g. open_memstream).
 */
#ifndef BALLAST_COMMON_JSON_H
#define BALLAST_COMMON_JSON_H

#include <stdio.h>

/* Writes \a s as a JSON string literal: quotes, backslashes and control
 * bytes escaped; other bytes (UTF-8) as they are. */
void ballast__json_str(FILE *f, const char *s);

#endif
