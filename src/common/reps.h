/*
 * Repetitions classified online: each repetition of something repeated (a
 * time step, a repeated region, a benchmark's operation) is labelled first,
 * warm-up, outlier or good as it happens, by the rules of the published
 * method (runtime-variability, section 4.5):
 *
 *  - first: repetition 0, always; it takes no part in what follows (cold
 *    caches make it unlike both the warm-up and the rest);
 *  - warm-up: the repetitions before the warm-up end w, the first w >=
 *    min_warmup (10) where the cumulative minimum of repetitions 1..w drops
 *    by more than drop (10%) of the median of repetitions 1..w-1;
 *  - outlier: after the warm-up, a repetition of at least outlier (2) times
 *    the running median of the repetitions after the warm-up;
 *  - good: the others.
 *
 * Online, the end of a warm-up is only known when the cliff comes. What the
 * classifier decides, and when:
 *  - repetitions 1 .. settle-1 (default 20) without such a cliff are
 *    labelled warm-up, provisionally: ballast__reps_warming() says 1;
 *  - a cliff at w (min_warmup <= w < settle) ends the warm-up there: rep w
 *    and later are judged good or outlier;
 *  - no cliff by repetition settle: the classifier decides there was no
 *    warm-up (warm_end 1). The provisional repetitions that were not
 *    outliers against the running median then join the good statistics
 *    (they were good after all), and warming() says 0 from then on;
 *  - a cliff found later, up to repetition max_warmup (default 1000; 0
 *    never), means the warm-up was longer than settle: warm_end moves to it,
 *    the good statistics and the outlier median restart there (labels given
 *    before stay as given: a label is never taken back).
 * A constant series has no cliff: no warm-up, every repetition good.
 *
 * The running medians are P-square estimates (Jain and Chlamtac 1985: five
 * markers, exact for the first five values), O(1) in time and memory. The
 * outlier median is the one of the repetitions after the warm-up once it has
 * five of them; before that, the median of all repetitions (during a
 * warm-up that median is high, so fewer outliers are called, never more).
 *
 * Pure: no MPI, no clock, no allocation (a ballast__reps_t lives wherever
 * its owner puts it), O(1) time per repetition; not thread safe (one owner).
 * Values may be any unit (seconds, bytes, counts); negative or non-finite
 * values are refused.
 */
#ifndef BALLAST_REPS_H
#define BALLAST_REPS_H

/* A repetition's label. */
typedef enum {
  BALLAST__REP_FIRST = 0,
  BALLAST__REP_WARMUP = 1,
  BALLAST__REP_OUTLIER = 2,
  BALLAST__REP_GOOD = 3
} ballast__rep_label_t;

/* "first", "warmup", "outlier", "good"; "unknown" for anything else. */
const char *ballast__rep_label_name(int label);

/* The classifier's rules. Fill with ballast__reps_params_init. */
typedef struct {
  int min_warmup;   /* the earliest warm-up end (published: 10), >= 2 */
  double drop;      /* cumulative-minimum drop, fraction of the median (0.10), > 0 */
  double outlier;   /* outlier at this times the running median (2.0), > 1 */
  int settle;       /* no cliff by this repetition: no warm-up (20), > min_warmup */
  int max_warmup;   /* later cliffs accepted up to here (1000); 0: none */
} ballast__reps_params_t;

void ballast__reps_params_init(ballast__reps_params_t *p);

/* A running median (P-square, 5 markers). */
typedef struct {
  double q[5];      /* marker heights (the first values while n < 5) */
  double pos[5];    /* marker positions (1-based) */
  double want[5];   /* desired positions */
  long long n;
} ballast__p2_t;

void ballast__p2_init(ballast__p2_t *m);
void ballast__p2_add(ballast__p2_t *m, double x);
/* The estimate: exact below five values; 0 with none. */
double ballast__p2_median(const ballast__p2_t *m);

/* Count, sum, extremes, mean and variance (Welford) and a running median. */
typedef struct {
  long long n;
  double sum, min, max, mean, m2;
  ballast__p2_t med;
} ballast__reps_stats_t;

void ballast__reps_stats_init(ballast__reps_stats_t *s);
void ballast__reps_stats_add(ballast__reps_stats_t *s, double x);
/* Sample variance (0 below two values). */
double ballast__reps_stats_var(const ballast__reps_stats_t *s);
/* Adds \a b into \a a. Counts, sums, extremes, mean and variance are exact;
 * the median becomes a's when a has at least as many values, else b's
 * (medians do not merge). */
void ballast__reps_stats_merge(ballast__reps_stats_t *a, const ballast__reps_stats_t *b);

/* The classifier of one series. */
typedef struct {
  ballast__reps_params_t p;
  long long n;            /* repetitions seen */
  long long warm_end;     /* first repetition after the warm-up (1: none);
                             0 while undecided */
  int late;               /* 1 when warm_end came after settle */
  double cummin;          /* minimum of repetitions 1..n-1 */
  ballast__p2_t med_all;  /* median of repetitions 1..n-1 */
  ballast__p2_t med_post; /* median of the repetitions from warm_end on */
  ballast__reps_stats_t good;  /* the good repetitions since warm_end */
  ballast__reps_stats_t prov;  /* provisional: warm-up labels not yet
                                  known to be a warm-up */
  long long outliers;     /* outliers since warm_end */
  int last;               /* label of the last repetition, -1 before one */
} ballast__reps_t;

/* Starts a classifier with \a p (NULL: the defaults). 0; BALLAST_EINVAL
 * (the classifier is left with the defaults) for rules out of range. */
int ballast__reps_init(ballast__reps_t *r, const ballast__reps_params_t *p);
/* Labels one repetition of duration (or any value) \a x: its label, or
 * BALLAST_EINVAL for a negative or non-finite \a x (not counted). */
int ballast__reps_add(ballast__reps_t *r, double x);
/* 1 while the classifier still counts the repetitions as warm-up (nothing
 * seen, or no cliff and fewer than settle repetitions), 0 after. */
int ballast__reps_warming(const ballast__reps_t *r);
/* The outlier median now (post-warm-up when it has five values). */
double ballast__reps_median(const ballast__reps_t *r);
/* Restart the good statistics, the outlier median and the outlier count
 * from the next repetition on, keeping the warm-up's state: for an owner
 * whose series changed level on purpose (a load balancer that moved work). */
void ballast__reps_rebase(ballast__reps_t *r);

#endif /* BALLAST_REPS_H */
