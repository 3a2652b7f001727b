/*
 * Every BALLAST_* environment variable, read through one parser.
 *
 * The variables are rows of one table (env.c), each with its kind and
 * bounds; the readers below look their variable up there, so a value means
 * the same thing and a bad one gets the same message wherever it is read.
 * A value that cannot be used (trailing junk, out of range, not one of the
 * choices) is ignored and named in one warning per variable per process,
 * printed on rank 0 only (or by every process outside MPI), since every rank
 * sees the same environment and takes the same decision.
 *
 * Adding a variable: one row in env.c's table (name, kind, bounds or
 * choices, the module that reads it) and one row in the README's table. A
 * module whose variables share a prefix and are validated by the module
 * itself may add one BALLAST__ENV_FAMILY row for the prefix instead; the
 * unknown-variable check (ballast__env_check) then leaves the family alone.
 */
#ifndef BALLAST_ENV_H
#define BALLAST_ENV_H

typedef enum {
  BALLAST__ENV_BOOL,   /* 1/0, on/off, yes/no, true/false, any case */
  BALLAST__ENV_INT,    /* decimal integer within [lo, hi] */
  BALLAST__ENV_DOUBLE, /* finite number within [lo, hi] (lo excluded if lo_open) */
  BALLAST__ENV_ENUM,   /* one of the comma-separated choices, any case */
  BALLAST__ENV_STRING, /* any non-empty text; its reader checks the grammar */
  BALLAST__ENV_FAMILY  /* a prefix: the variables that start with it */
} ballast__env_kind_t;

typedef struct {
  const char *name;
  ballast__env_kind_t kind;
  double lo, hi;       /* INT, DOUBLE: bounds, inclusive */
  int lo_open;         /* DOUBLE: lo itself is excluded */
  const char *choices; /* ENUM: "none,terse,full" */
  const char *owner;   /* the module that reads it (for the docs) */
} ballast__env_t;

/* Each reader returns 0 when the variable is unset or empty (*out
 * untouched), 1 when it holds a valid value (stored in *out), and
 * BALLAST_EINVAL when it holds a bad one (*out untouched, warned once). */
int ballast__env_bool(const char *name, int *out);
int ballast__env_int(const char *name, int *out);
int ballast__env_double(const char *name, double *out);
/** *out: the index of the value among the row's choices. */
int ballast__env_enum(const char *name, int *out);
/** The value, or NULL when unset or empty. */
const char *ballast__env_string(const char *name);

/**
 * Checks the whole environment once per process: every variable of the
 * table that holds a bad value, and every BALLAST_* variable that is in no
 * row (a typo), gets one warning on rank 0. Called at MPI_Init by mon; safe
 * to call again (it does nothing).
 */
void ballast__env_check(void);

/** Parses \a s as variable \a name would be (no warning). 1 when valid, with
 *  the number (INT, DOUBLE, BOOL) or choice index (ENUM) in *num; 0 when not,
 *  with the reason in \a why (\a whylen bytes). Unit tests use it. */
int ballast__env_parse(const char *name, const char *s, double *num, char *why,
                       int whylen);

/** BALLAST_VERBOSE without logging (the log itself reads it): the level, or
 *  BALLAST_LOG_WARN when unset or bad. */
int ballast__env_verbosity(void);

#endif
