/*
 * Configuration files: LAMMPS data files (atom_style atomic) written and
 * read, and extended XYZ frames for viewers (OVITO, VMD, ASE) written and
 * read back.
 *
 * Ids: ballast-md's particle id is the lattice site index (from 0, sparse
 * for the droplet and the cluster); the file holds id + 1 because LAMMPS ids
 * start at 1. Numbers are printed with %.17g, which strtod reads back to the
 * same double, so a restart from a data file continues from exactly the
 * state that was written.
 *
 * Writing gathers every particle on rank 0 (7 doubles each; ids are below
 * 2^53, exact as doubles) and sorts them by id, so the file does not depend
 * on the rank count or the owner map. Reading: every rank parses the whole
 * file and keeps the particles of its own blocks, so every rank reaches the
 * same verdict on a bad file without communication.
 */
#include "md.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define REC 7 /* id, x, y, z, vx, vy, vz */
#define MAXTOK 16

static int cmp_rec(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Collective: every particle as REC doubles sorted by id on rank 0 (*out,
 * *n); NULL elsewhere. Returns 0 or BALLAST_ENOMEM / BALLAST_EMPI on every
 * rank. */
static int gather_sorted(const md_sim_t *s, double **out, long *n) {
  int mine = 0;
  for (int k = 0; k < s->nmine; k++) mine += s->blocks[s->mine[k]].n;
  double *loc = malloc(sizeof(double) * REC * (size_t)(mine ? mine : 1));
  int bad = loc == NULL, j = 0;
  for (int k = 0; !bad && k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++, j++) {
      double r[REC] = {(double)b->id[i], b->x[i], b->y[i], b->z[i], b->vx[i], b->vy[i], b->vz[i]};
      memcpy(loc + (size_t)j * REC, r, sizeof r);
    }
  }
  int cnt = bad ? 0 : mine * REC, *cnts = NULL, *displs = NULL;
  double *all = NULL;
  long total = 0;
  if (s->rank == 0) {
    cnts = malloc(sizeof(int) * (size_t)s->size);
    displs = malloc(sizeof(int) * (size_t)s->size);
    bad |= !cnts || !displs;
  }
  int anybad = bad;
  if (MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->comm) != MPI_SUCCESS) anybad = 2;
  if (!anybad && MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, s->comm) != MPI_SUCCESS)
    anybad = 2;
  if (!anybad && s->rank == 0) {
    for (int r = 0; r < s->size; r++) {
      displs[r] = (int)total;
      total += cnts[r];
    }
    all = malloc(sizeof(double) * (size_t)(total ? total : 1));
    bad = all == NULL;
  }
  if (!anybad && MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->comm) != MPI_SUCCESS)
    anybad = 2;
  if (!anybad && MPI_Gatherv(loc, cnt, MPI_DOUBLE, all, cnts, displs, MPI_DOUBLE, 0,
                             s->comm) != MPI_SUCCESS)
    anybad = 2;
  free(loc);
  free(cnts);
  free(displs);
  if (anybad) {
    free(all);
    return anybad == 2 ? BALLAST_EMPI : BALLAST_ENOMEM;
  }
  if (s->rank == 0) qsort(all, (size_t)(total / REC), sizeof(double) * REC, cmp_rec);
  *out = all;
  *n = total / REC;
  return 0;
}

static void put_data(FILE *f, const md_sim_t *s, const double *a, long n) {
  fprintf(f, "LAMMPS data file from ballast-md (atom_style atomic, units lj, "
             "%s boundaries)\n\n%ld atoms\n1 atom types\n\n", s->periodic ? "periodic" : "wall",
          n);
  static const char *ax[MD_DIM] = {"x", "y", "z"};
  for (int d = 0; d < MD_DIM; d++)
    fprintf(f, "0 %.17g %slo %shi\n", s->L[d], ax[d], ax[d]);
  fprintf(f, "\nMasses\n\n1 1\n\nAtoms # atomic\n\n");
  for (long i = 0; i < n; i++) {
    const double *r = a + i * REC;
    fprintf(f, "%.0f 1 %.17g %.17g %.17g 0 0 0\n", r[0] + 1, r[1], r[2], r[3]);
  }
  fprintf(f, "\nVelocities\n\n");
  for (long i = 0; i < n; i++) {
    const double *r = a + i * REC;
    fprintf(f, "%.0f %.17g %.17g %.17g\n", r[0] + 1, r[4], r[5], r[6]);
  }
}

static void put_xyz(FILE *f, const md_sim_t *s, const double *a, long n) {
  fprintf(f, "%ld\nLattice=\"%.17g 0 0 0 %.17g 0 0 0 %.17g\" "
             "Properties=species:S:1:id:I:1:pos:R:3:velo:R:3 pbc=\"%s\"\n",
          n, s->L[0], s->L[1], s->L[2], s->periodic ? "T T T" : "F F F");
  for (long i = 0; i < n; i++) {
    const double *r = a + i * REC;
    fprintf(f, "Ar %.0f %.17g %.17g %.17g %.17g %.17g %.17g\n", r[0] + 1, r[1], r[2], r[3],
            r[4], r[5], r[6]);
  }
}

/* Collective: gathers and writes with put(); the verdict is rank 0's. */
static int write_config(const md_sim_t *s, const char *path, int xyz, char *err,
                        size_t len) {
  double *a = NULL;
  long n = 0;
  int rc = gather_sorted(s, &a, &n), bad = 0;
  if (rc) return md_errf(err, len, "%s: gathering the particles failed: %s", path,
                      ballast_strerror(rc));
  if (s->rank == 0) {
    FILE *f = fopen(path, "w");
    if (!f) {
      bad = 1;
      md_errf(err, len, "%s: cannot open for writing: %s", path, strerror(errno));
    } else {
      if (xyz) put_xyz(f, s, a, n);
      else put_data(f, s, a, n);
      int werr = ferror(f);
      if (fclose(f) || werr) {
        bad = 1;
        md_errf(err, len, "%s: write error: %s", path, strerror(errno));
      }
    }
  }
  free(a);
  MPI_Bcast(&bad, 1, MPI_INT, 0, s->comm);
  if (bad && s->rank != 0) md_errf(err, len, "%s: rank 0 could not write the file", path);
  return bad ? -1 : 0;
}

int md_write_data(const md_sim_t *s, const char *path, char *err, size_t len) {
  return write_config(s, path, 0, err, len);
}

int md_write_xyz(const md_sim_t *s, const char *path, char *err, size_t len) {
  return write_config(s, path, 1, err, len);
}

/* ---- reading ---- */

typedef struct {
  FILE *f;
  const char *path;
  long line;
  char buf[4096];
  char *tok[MAXTOK];
  int ntok;
  char hint[64];       /* first word of the line's comment, "" if none */
  char *err;
  size_t len;
} rd_t;

static int rfail(rd_t *r, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(r->err, r->len, "%s:%ld: %s", r->path, r->line, msg);
  return -1;
}

/* Next line split into tokens (at most MAXTOK); with comments, the part
 * after '#' is dropped unless keep_comment. Returns 1, 0 at end of file or
 * -1 (line too long). */
static int next_line(rd_t *r, int keep_comment) {
  if (!fgets(r->buf, sizeof r->buf, r->f)) return 0;
  r->line++;
  size_t n = strlen(r->buf);
  if (n == sizeof r->buf - 1 && r->buf[n - 1] != '\n')
    return rfail(r, "line longer than %zu characters", sizeof r->buf - 2);
  r->hint[0] = '\0';
  if (!keep_comment) {
    char *h = strchr(r->buf, '#');
    if (h) {
      *h = '\0';
      (void)sscanf(h + 1, "%63s", r->hint);
    }
  }
  r->ntok = 0;
  for (char *p = strtok(r->buf, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
    if (r->ntok == MAXTOK) return rfail(r, "more than %d fields", MAXTOK);
    r->tok[r->ntok++] = p;
  }
  return 1;
}

/* Next non-blank line (comments dropped); 0 at end of file. */
static int next_content(rd_t *r) {
  int k;
  while ((k = next_line(r, 0)) == 1 && r->ntok == 0) {}
  return k;
}

static int num(rd_t *r, int i, double *out) {
  char *end;
  errno = 0;
  double v = strtod(r->tok[i], &end);
  if (errno || *end != '\0' || !isfinite(v))
    return rfail(r, "field %d '%s' is not a number", i + 1, r->tok[i]);
  *out = v;
  return 0;
}

static int integer(rd_t *r, int i, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(r->tok[i], &end, 10);
  if (errno || *end != '\0')
    return rfail(r, "field %d '%s' is not an integer", i + 1, r->tok[i]);
  if (v < lo || v > hi)
    return rfail(r, "field %d: %lld is out of range [%lld, %lld]", i + 1, v, lo, hi);
  *out = v;
  return 0;
}

static int is_word(const rd_t *r, int from, const char *w1, const char *w2) {
  return r->ntok == from + (w2 ? 2 : 1) && !strcmp(r->tok[from], w1) &&
         (!w2 || !strcmp(r->tok[from + 1], w2));
}

typedef struct {
  long long natoms, ntypes;
  int have_box[MD_DIM];
  double lo[MD_DIM], hi[MD_DIM];
} header_t;

/* Header lines up to the first section keyword (left in r). */
static int read_header(rd_t *r, header_t *h) {
  static const char *lohi[MD_DIM][2] = {{"xlo", "xhi"}, {"ylo", "yhi"}, {"zlo", "zhi"}};
  int k;
  if (next_line(r, 1) != 1) {
    r->line = 1;
    return rfail(r, "empty file (a LAMMPS data file starts with a title line)");
  }
  h->natoms = h->ntypes = -1;
  while ((k = next_content(r)) == 1) {
    if (!isdigit((unsigned char)r->tok[0][0]) && r->tok[0][0] != '-' &&
        r->tok[0][0] != '+' && r->tok[0][0] != '.')
      return 0; /* a section keyword */
    long long v;
    if (is_word(r, 1, "atoms", NULL)) {
      if (integer(r, 0, 1, 100000000LL, &h->natoms)) return -1;
    } else if (is_word(r, 1, "atom", "types")) {
      if (integer(r, 0, 1, 1000, &h->ntypes)) return -1;
    } else if (r->ntok == 4 && (!strcmp(r->tok[2], "xlo") || !strcmp(r->tok[2], "ylo") ||
                                !strcmp(r->tok[2], "zlo"))) {
      int d = r->tok[2][0] - 'x';
      if (strcmp(r->tok[3], lohi[d][1]))
        return rfail(r, "'%s' must be followed by '%s'", lohi[d][0], lohi[d][1]);
      if (num(r, 0, &h->lo[d]) || num(r, 1, &h->hi[d])) return -1;
      if (!(h->hi[d] > h->lo[d])) return rfail(r, "%s >= %s", lohi[d][0], lohi[d][1]);
      h->have_box[d] = 1;
    } else if (r->ntok == 6 && !strcmp(r->tok[3], "xy")) {
      return rfail(r, "triclinic boxes are not supported (ballast-md's box is orthogonal)");
    } else if (r->ntok >= 2 && integer(r, 0, 0, 0, &v) == 0) {
      continue; /* "0 bonds", "0 bond types", ...: nothing of the kind */
    } else {
      return rfail(r, "unsupported header line (ballast-md reads atom_style atomic: "
                      "atoms, atom types, xlo xhi, ylo yhi, zlo zhi)");
    }
  }
  if (k < 0) return -1;
  return rfail(r, "no Atoms section");
}

typedef struct {
  long long id;
  long idx;
  long line;  /* of the atom in the Atoms section */
} idx_t;

static int cmp_idx(const void *a, const void *b) {
  long long x = ((const idx_t *)a)->id, y = ((const idx_t *)b)->id;
  return (x > y) - (x < y);
}

/* Sorts ix by id; an id given twice is an error at its second line. */
static int sort_unique(rd_t *r, const md_config_t *c, idx_t *ix) {
  qsort(ix, (size_t)c->n, sizeof *ix, cmp_idx);
  for (long i = 1; i < c->n; i++)
    if (ix[i].id == ix[i - 1].id) {
      long a = ix[i - 1].line, b = ix[i].line;
      r->line = a > b ? a : b;
      return rfail(r, "atom id %lld appears twice (first on line %ld)", ix[i].id,
                   a < b ? a : b);
    }
  return 0;
}

/* The count lines of a section, each handed to row(). */
typedef int (*row_fn)(rd_t *r, md_config_t *c, const header_t *h, long i, idx_t *ix);

static int section(rd_t *r, md_config_t *c, const header_t *h, long count, idx_t *ix,
                   const char *name, row_fn row) {
  for (long i = 0; i < count; i++) {
    int k = next_content(r);
    if (k < 0) return -1;
    if (k == 0) return rfail(r, "end of file in the %s section: %ld of %ld lines read", name,
                             i, count);
    if (row(r, c, h, i, ix)) return -1;
  }
  return 0;
}

static int row_mass(rd_t *r, md_config_t *c, const header_t *h, long i, idx_t *ix) {
  (void)c; (void)i; (void)ix;
  long long t;
  double m;
  if (r->ntok != 2) return rfail(r, "a Masses line is 'type mass'");
  if (integer(r, 0, 1, h->ntypes, &t) || num(r, 1, &m)) return -1;
  if (m != 1.0) return rfail(r, "mass %g of type %lld: ballast-md's particles have mass 1",
                             m, t);
  return 0;
}

static int row_pair(rd_t *r, md_config_t *c, const header_t *h, long i, idx_t *ix) {
  (void)c; (void)i; (void)ix;
  long long t;
  double eps, sig;
  if (r->ntok < 3) return rfail(r, "a Pair Coeffs line is 'type epsilon sigma'");
  if (integer(r, 0, 1, h->ntypes, &t) || num(r, 1, &eps) || num(r, 2, &sig)) return -1;
  if (eps != 1.0 || sig != 1.0)
    return rfail(r, "type %lld has epsilon %g, sigma %g: ballast-md has one species with "
                    "epsilon = sigma = 1", t, eps, sig);
  return 0;
}

static int wrap(rd_t *r, const md_config_t *c, const header_t *h, int d, double x,
                long long img, double *out) {
  double L = c->L[d], u = x - h->lo[d];
  if (img) u += (double)img * L;
  if (u < 0 || u > L) {
    if (!c->periodic)
      return rfail(r, "coordinate %d (%.17g) is outside the box [%.17g, %.17g] and the "
                      "boundaries are walls", d + 1, x, h->lo[d], h->hi[d]);
    u -= floor(u / L) * L;
    if (u >= L) u = 0;
  }
  *out = u;
  return 0;
}

static int row_atom(rd_t *r, md_config_t *c, const header_t *h, long i, idx_t *ix) {
  long long id, t, img[MD_DIM] = {0, 0, 0};
  double x[MD_DIM];
  if (r->ntok != 5 && r->ntok != 8)
    return rfail(r, "an Atoms line (atomic) is 'id type x y z [ix iy iz]', not %d fields",
                 r->ntok);
  if (integer(r, 0, 1, (1LL << 52), &id) || integer(r, 1, 1, h->ntypes, &t)) return -1;
  for (int d = 0; d < MD_DIM; d++)
    if (num(r, 2 + d, &x[d]) ||
        (r->ntok == 8 && integer(r, 5 + d, -1000000, 1000000, &img[d])))
      return -1;
  double *q = c->r + (size_t)i * 6;
  for (int d = 0; d < MD_DIM; d++)
    if (wrap(r, c, h, d, x[d], img[d], &q[d])) return -1;
  c->id[i] = id - 1;
  ix[i].id = id;
  ix[i].idx = i;
  ix[i].line = r->line;
  return 0;
}

static int row_velocity(rd_t *r, md_config_t *c, const header_t *h, long i, idx_t *ix) {
  (void)h; (void)i;
  long long id;
  if (r->ntok != 4) return rfail(r, "a Velocities line is 'id vx vy vz', not %d fields",
                                 r->ntok);
  if (integer(r, 0, 1, (1LL << 52), &id)) return -1;
  idx_t key = {id, 0, 0}, *hit = bsearch(&key, ix, (size_t)c->n, sizeof *ix, cmp_idx);
  if (!hit) return rfail(r, "velocity of atom %lld, which the Atoms section does not have", id);
  if (hit->idx < 0) return rfail(r, "second velocity of atom %lld", id);
  double *q = c->r + (size_t)hit->idx * 6 + 3;
  for (int d = 0; d < MD_DIM; d++)
    if (num(r, 1 + d, &q[d])) return -1;
  hit->idx = -1 - hit->idx; /* seen */
  return 0;
}

static int read_sections(rd_t *r, md_config_t *c, const header_t *h, idx_t *ix) {
  int atoms = 0, vel = 0;
  for (;;) {
    /* r holds a section keyword line (comments dropped) */
    if (is_word(r, 0, "Masses", NULL)) {
      if (section(r, c, h, h->ntypes, ix, "Masses", row_mass)) return -1;
    } else if (is_word(r, 0, "Pair", "Coeffs")) {
      if (section(r, c, h, h->ntypes, ix, "Pair Coeffs", row_pair)) return -1;
    } else if (is_word(r, 0, "Atoms", NULL)) {
      if (atoms++) return rfail(r, "second Atoms section");
      /* LAMMPS writes the style as a comment: "Atoms # atomic" */
      if (r->hint[0] && strcmp(r->hint, "atomic"))
        return rfail(r, "Atoms section of style '%s': ballast-md reads atom_style atomic",
                     r->hint);
      if (section(r, c, h, c->n, ix, "Atoms", row_atom)) return -1;
      if (sort_unique(r, c, ix)) return -1;
    } else if (is_word(r, 0, "Velocities", NULL)) {
      if (!atoms) return rfail(r, "Velocities before Atoms");
      if (vel++) return rfail(r, "second Velocities section");
      if (section(r, c, h, c->n, ix, "Velocities", row_velocity)) return -1;
    } else {
      return rfail(r, "unsupported section '%s' (ballast-md reads Masses, Pair Coeffs, "
                      "Atoms and Velocities)", r->tok[0]);
    }
    int k = next_content(r);
    if (k < 0) return -1;
    if (k == 0) break;
  }
  if (!atoms) return rfail(r, "no Atoms section");
  return 0;
}

static int reader_open(rd_t *r, md_config_t *c, header_t *h, const char *path,
                       int periodic, char *err, size_t len) {
  memset(c, 0, sizeof *c);
  memset(h, 0, sizeof *h);
  memset(r, 0, sizeof *r);
  c->periodic = periodic;
  r->path = path;
  r->err = err;
  r->len = len;
  r->f = fopen(path, "r");
  if (!r->f) return md_errf(err, len, "%s: cannot open: %s", path, strerror(errno));
  return 0;
}

/* Closes the file; on failure (rc) leaves c empty. Returns rc. */
static int reader_close(rd_t *r, md_config_t *c, idx_t *ix, int rc) {
  fclose(r->f);
  free(ix);
  if (rc) md_config_free(c);
  return rc;
}

static int alloc_config(md_config_t *c, long n, idx_t **ix, const char *path, char *err,
                        size_t len) {
  c->n = n;
  c->id = malloc(sizeof(int64_t) * (size_t)n);
  c->r = calloc((size_t)n * 6, sizeof(double));
  *ix = malloc(sizeof(idx_t) * (size_t)n);
  if (!c->id || !c->r || !*ix)
    return md_errf(err, len, "%s: out of memory for %ld atoms", path, n);
  return 0;
}

int md_read_data(const char *path, int periodic, md_config_t *c, char *err, size_t len) {
  rd_t r;
  header_t h;
  idx_t *ix = NULL;
  if (reader_open(&r, c, &h, path, periodic, err, len)) return -1;
  int rc = read_header(&r, &h);
  if (!rc) {
    if (h.natoms < 1) rc = rfail(&r, "the header gives no 'N atoms' line");
    else if (h.ntypes < 1) rc = rfail(&r, "the header gives no 'N atom types' line");
    for (int d = 0; !rc && d < MD_DIM; d++)
      if (!h.have_box[d]) rc = rfail(&r, "the header gives no '%clo %chi' line", 'x' + d,
                                     'x' + d);
  }
  if (!rc) {
    for (int d = 0; d < MD_DIM; d++) c->L[d] = h.hi[d] - h.lo[d];
    rc = alloc_config(c, (long)h.natoms, &ix, path, err, len);
  }
  if (!rc) rc = read_sections(&r, c, &h, ix);
  return reader_close(&r, c, ix, rc);
}

/* The XYZ comment line: the diagonal of Lattice="..." and our Properties. */
static int xyz_comment(rd_t *r, header_t *h) {
  static const char props[] = "Properties=species:S:1:id:I:1:pos:R:3:velo:R:3";
  const char *lat = strstr(r->buf, "Lattice=\"");
  double m[9];
  if (!lat || sscanf(lat + 9, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", &m[0], &m[1], &m[2],
                     &m[3], &m[4], &m[5], &m[6], &m[7], &m[8]) != 9)
    return rfail(r, "no Lattice=\"ax ay az bx by bz cx cy cz\" (9 numbers)");
  for (int i = 0; i < 9; i++)
    if ((i % 4 != 0 && m[i] != 0) || (i % 4 == 0 && !(m[i] > 0 && isfinite(m[i]))))
      return rfail(r, "Lattice is not a diagonal box with positive lengths");
  const char *pr = strstr(r->buf, "Properties=");
  size_t n = sizeof props - 1;
  if (!pr || strncmp(pr, props, n) || !(pr[n] == '\0' || isspace((unsigned char)pr[n])))
    return rfail(r, "ballast-md reads the extended XYZ it writes: %s", props);
  for (int d = 0; d < MD_DIM; d++) {
    h->lo[d] = 0;
    h->hi[d] = m[4 * d];
  }
  return 0;
}

static int row_xyz(rd_t *r, md_config_t *c, const header_t *h, long i, idx_t *ix) {
  long long id;
  double x[MD_DIM];
  if (r->ntok != 8) return rfail(r, "an XYZ line is 'species id x y z vx vy vz', not %d "
                                    "fields", r->ntok);
  if (integer(r, 1, 1, (1LL << 52), &id)) return -1;
  double *q = c->r + (size_t)i * 6;
  for (int d = 0; d < MD_DIM; d++)
    if (num(r, 2 + d, &x[d]) || num(r, 5 + d, &q[3 + d]) || wrap(r, c, h, d, x[d], 0, &q[d]))
      return -1;
  c->id[i] = id - 1;
  ix[i] = (idx_t){id, i, r->line};
  return 0;
}

int md_read_xyz(const char *path, int periodic, md_config_t *c, char *err, size_t len) {
  rd_t r;
  header_t h;
  idx_t *ix = NULL;
  if (reader_open(&r, c, &h, path, periodic, err, len)) return -1;
  long long n = 0;
  int rc = next_line(&r, 0);
  if (rc == 0) {
    r.line = 1;
    rc = rfail(&r, "empty file (an XYZ frame starts with the atom count)");
  } else if (rc == 1) {
    rc = r.ntok == 1 ? integer(&r, 0, 1, 100000000LL, &n)
                     : rfail(&r, "the first line is the atom count");
  }
  if (!rc) {
    /* the comment line whole: Lattice="..." holds spaces */
    r.line++;
    if (!fgets(r.buf, sizeof r.buf, r.f)) rc = rfail(&r, "no comment line");
    else rc = xyz_comment(&r, &h);
  }
  if (!rc) {
    for (int d = 0; d < MD_DIM; d++) c->L[d] = h.hi[d];
    rc = alloc_config(c, (long)n, &ix, path, err, len);
  }
  if (!rc) rc = section(&r, c, &h, c->n, ix, "XYZ", row_xyz);
  if (!rc) rc = sort_unique(&r, c, ix);
  return reader_close(&r, c, ix, rc);
}

void md_config_free(md_config_t *c) {
  free(c->id);
  free(c->r);
  c->id = NULL;
  c->r = NULL;
  c->n = 0;
}

int md_config_place(md_sim_t *s, const md_config_t *c, char *err, size_t len) {
  for (long i = 0; i < c->n; i++) {
    const double *q = c->r + (size_t)i * 6;
    int b = md_block_of_pos(s, q[0], q[1], q[2]);
    if (s->owner[b] != s->rank) continue;
    double r9[9] = {q[0], q[1], q[2], q[3], q[4], q[5], 0, 0, 0};
    if (md_block_push(&s->blocks[b], r9, c->id[i]))
      return md_errf(err, len, "out of memory placing the particles");
  }
  s->natoms = c->n;
  return 0;
}
