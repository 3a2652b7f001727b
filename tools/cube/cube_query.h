/* ballast-cube's query language (tools/cube): one query per line, run on
 * every rank of the server (each rank parses the same line), results printed
 * by rank 0. See README.md, "ballast-cube", for the language. */
#ifndef BALLAST_CUBE_QUERY_H
#define BALLAST_CUBE_QUERY_H

#include <stdio.h>

#include "cube_server.h"

/* Runs one query line on every rank (collective over a's communicator; b
 * may be NULL: no diff). Rank 0 prints the results to out. 0, 1 for a
 * query refused or failed (its "error" line printed), or a negative
 * BALLAST_E* code for a failure that ends the session. */
int query_run(srv_t *a, srv_t *b, const char *line, FILE *out);

#endif
