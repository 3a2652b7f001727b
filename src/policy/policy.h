/*
 * policy, the layer of the load-balancing policy (policy.c, the public
 * ballast/rta_policy.h), of the load-balancing record's format and reader
 * (record_read.c) and of warm start's reading (warm_read.c: a record or a
 * profile into a table of tasks' slots and costs). It sees common and the map engine only, needs no MPI
 * processes and no task runtime: ballast-lbsim links it as a library
 * (ballast_policyengine) and replays records with the very code the library runs.
 *
 * The load-balancing record: what BALLAST_LB_RECORD=path and
 * rta_lb_record() write, what ballast-lbsim replays and what a warm start
 * reads. The writer is src/lb/lb_record.c (a listener of lb's contexts),
 * the reader record_read.c.
 *
 * ---- Format, version 3 -----------------------------------------------------
 * Line-oriented text, one record per line, tokens separated by one space,
 * the first token the line's type. Why text: a record is written a few lines
 * at a time while the run goes on (append, no index to patch at the end), a
 * record cut short by a crash is still readable up to its last whole line,
 * and grep/awk/diff work on it. Why still exact and compact: every double the
 * replay must reproduce bit for bit (step times, policy figures, vertex work
 * and edge bytes, costs of remaps) is written as a C99 hexadecimal float
 * ("%a", read back by strtod exactly); the per-task costs, used only for
 * prediction, are "%.6g". Task keys are written once (K lines) and referred
 * to by number; bytes <= 0x20, '%' and >= 0x7f in a key are written %XX.
 * A line may not exceed 16 MiB (adjacency lines of huge graphs are cut in
 * several E lines of the same vertex). Unknown line types are an error in
 * this version (a new kind of line bumps the version). Version 2 (this one)
 * added the candidate judgement (J), the remap's seed and warm flag (R), the
 * measured remap given to the policy as four figures (X) and the warm-start
 * decisions (D). Version 3 added the merged step the policy is fed (S: the
 * policy no longer sees every rank's time, issue 30) and what a decision saw
 * (D's last four fields). The reader reads versions 2 and 3 and refuses
 * every other version by name; a version 2 record replays its T lines
 * through rta_policy_observe().
 *
 *   ballast-lbrecord 3                      first line: magic and version
 *   C root ranks placement strategy step_time seed balrat
 *       the context: root key (escaped), number of ranks, 1 in placement
 *       mode, strategy name (rta_strategy_name), "tasks"|"wall", the seed
 *       (remap k maps with seed + k), balrat (%a; 0: engine default)
 *   P mode warmup window threshold outlier horizon initial_cost
 *       the policy as configured after the environment (mode off|explicit|
 *       auto, doubles %a)
 *   H ...   the hardware model, one line (map__hw_to_text, src/map/hw_text.c)
 *   K id key                  key table entry (ids 0, 1, ... in order)
 *   G g step nvert            task graph g begins (0: at definition; k: the
 *                             graph of remap attempt k, a candidate that
 *                             was dropped included), built after \a step steps
 *   V key nprocs owner work state     nvert lines: vertex v of graph g, in
 *                             the mapping's order (sorted keys): its key id,
 *                             processors, owner rank when mapped, work and
 *                             state bytes as the engine saw them (%a)
 *   E u v b v b ...           adjacency of vertex u to vertices v > u with
 *                             the merged bytes per step (%a); vertices
 *                             without such edges have no E line
 *   M g slot|target s0 s1 ...  the engine's slots for graph g (slot) and the
 *                             slots tasks moved to (target: gangs and the
 *                             placement permutation applied)
 *   Q g imb_core imb_node edge_cut hop_bytes internode moved bytes_moved
 *                             the engine's quality record of graph g (%a)
 *   T step wall t0 .. tn-1    one judged step: rank 0's wall seconds since
 *                             the previous call and every rank's step time
 *                             (%a; gathered for the record alone, one
 *                             MPI_Gather of a double per step)
 *   S step f0 .. f10          the merged step (rta_policy_step_t packed,
 *                             %a) fed to the policy at that call: under
 *                             the automatic policy the previous call's step
 *                             (the reduction completes a call later); no S
 *                             line when none was fed
 *   W step key cost key cost ...   measured task costs of that step (the
 *                             tasks clocked in it; one W line per rank and
 *                             step, written when gathered, so after later T
 *                             lines; sampled, below; none for a call at
 *                             which no task had run, such as the set-up call
 *                             right after rta_lb_create that balances from
 *                             the estimates: ballast-lbsim takes the steps
 *                             before the first W line for such calls)
 *   B step r p bytes ...      bytes per step rank r sent rank p (%.6g), as
 *                             the cost model measured them since the last
 *                             mapping; one line per rank that sent anything,
 *                             at each remap and at the end
 *   D step remap reason imbalance max avg gain cost outliers forced slowest
 *                             persistent noise warmup_end
 *                             a decision (rta_decision_t: reason as
 *                             rta_reason_name, doubles %a; forced 1 when a
 *                             failed performance assertion turned it into
 *                             a remap, 2 when a pending warm start did:
 *                             reason warm-start, 3 when balancing from the
 *                             estimates did: reason estimated)
 *   J step k judged now after tasks bytes map_s remap reason gain cost pimb ptasks
 *                             the candidate of attempt k judged: judged 1
 *                             when rta_policy_confirm() was called with the
 *                             rta_remap_candidate_t (now, after, tasks,
 *                             bytes, map_s), 0 for a warm map that moves
 *                             nothing (dropped without it); then the
 *                             decision after it (remap, reason, gain, cost,
 *                             predicted imbalance, tasks to move); doubles %a
 *   R step k committed rc tasks bytes t_map t_move seed warm
 *                             remap attempt k after that step: committed
 *                             1|0 (0 also for a dropped candidate, with rc
 *                             0), its code, tasks and bytes moved (all
 *                             ranks), max over ranks of mapping and
 *                             migration seconds (%a), the engine's seed,
 *                             warm 1 when a warm map set the targets; graph
 *                             k with its M/Q lines and J line precede it
 *   X mapping migration bytes committed
 *                             rta_policy_remap_measured() was called with
 *                             this rta_remap_measure_t (doubles %a); not
 *                             for a dropped candidate
 *   Z steps costrows dropped   last line of a closed record: steps judged,
 *                             W lines written, lines dropped by the size
 *                             bound (0: complete)
 *
 * Size bound: T and D lines are written for every judged step (the replay
 * needs each); W lines for every step while fewer than 512 have been
 * written, then for one step in 2, 4, 8, ... (the stride doubles after
 * every further 512). Past BALLAST_LB_RECORD_MAX bytes (default 256 MiB)
 * nothing more is written but the Z line: the replay then stops where the
 * record stops.
 *
 * Replay: attempt k maps graph k with the C line's strategy, the R line's
 * seed and balrat, the engine's defaults otherwise, from the owners of its V
 * lines, on the H model (a warm map's targets are an input: taken from the
 * M target line); the candidate's figures are computed again from the
 * targets and the V lines' owners, work and state; the policy is created
 * from the P line and fed, in file order, S (rta_policy_observe_step; a
 * version 2 record: T, rta_policy_observe), D (decide; "forced"
 * sets remap, 2 with reason warm-start, 3 with reason estimated), J (rta_policy_confirm, when
 * judged) and X (rta_policy_remap_measured).
 * A record started by rta_lb_record() after the definition has no graph 0:
 * its decisions cannot be replayed (the policy's state before it is not
 * recorded), its mappings can.
 *
 * Writing: every rank buffers its own tasks' costs; rank 0 of the context
 * writes the file. Costs are gathered at the remaps, every 64 steps and at
 * the end (one MPI_Gatherv; the steps in between communicate nothing more
 * than without a record), and rank 0 writes through stdio (buffered,
 * flushed at the same points). An unwritable path is a warning and the run
 * goes on without a record.
 */
#ifndef BALLAST_LBREC_H
#define BALLAST_LBREC_H

#include <stdint.h>
#include <stdio.h>

#include <ballast/rta_map.h>
#include <ballast/rta_policy.h>

#define POLICY__MAGIC "ballast-lbrecord"
#define POLICY__VERSION 3

/* ---- reading (record_read.c) --------------------------------------------- */

/* One vertex of a recorded task graph. */
typedef struct {
  int key;        /* index into policy__t.keys */
  int nprocs;
  int owner;      /* rank that owned it when the graph was built */
  double work;    /* vertex weight the engine got (seconds when measured) */
  double state;   /* state bytes */
} policy__vertex_t;

/* One recorded task graph and what the engine made of it. */
typedef struct {
  long long step;     /* steps judged when it was built */
  int64_t n;          /* vertices */
  policy__vertex_t *v;
  int64_t *xadj;      /* CSR of the edges u < v: xadj[n + 1] */
  int64_t *adj;
  double *adjw;
  int *slot;          /* the engine's slots, or NULL (graph 0) */
  int *target;        /* the slots tasks moved to, or NULL */
  int has_quality;
  double quality[7];  /* the Q line's figures in its order */
} policy__graph_t;

typedef enum {
  POLICY__EV_STEP = 0,  /* T: step times; index into steps[] */
  POLICY__EV_DECIDE,    /* D: index into decisions[] */
  POLICY__EV_REMAP,     /* R: index into remaps[] */
  POLICY__EV_REMAPPED,  /* X: index into measures[] */
  POLICY__EV_CANDIDATE, /* J: index into candidates[] */
  POLICY__EV_MERGED     /* S: index into merged[] */
} policy__event_kind_t;

typedef struct {
  policy__event_kind_t kind;
  int64_t index;
} policy__event_t;

typedef struct {
  long long step;
  double wall;        /* rank 0's wall seconds for the step */
  double *times;      /* ranks entries */
} policy__step_t;

typedef struct {
  rta_decision_t d;
  int forced;         /* 1 assertion, 2 warm start, 3 estimates (version 3) */
} policy__decision_t;

typedef struct {
  long long step;     /* the call at which the policy was fed it */
  rta_policy_step_t s;
} policy__merged_t;

typedef struct {
  long long step;
  int k;              /* attempt number (graph index) */
  int judged;         /* rta_policy_confirm() was called */
  rta_remap_candidate_t c;
  rta_decision_t d;   /* remap, reason, predicted_gain, remap_cost,
                         predicted_imbalance, tasks_to_move after it */
} policy__candidate_t;

typedef struct {
  long long step;
  int k;              /* attempt number (graph index) */
  int committed, rc;
  double tasks, bytes, t_map, t_move;
  unsigned seed;      /* the engine's seed */
  int warm;           /* a warm map set the targets */
  int64_t cand;       /* its J line in candidates[], or -1 */
} policy__remap_t;

typedef struct {
  long long step;
  int64_t n;
  int *key;
  double *cost;
} policy__costs_t;

/* A whole record in memory. Read-only for its users. */
typedef struct policy__record {
  int version;
  char *root;
  int ranks, placement;
  rta_strategy_t strategy;
  int step_time;          /* 0 tasks, 1 wall */
  unsigned seed;
  double balrat;
  rta_policy_config_t policy;
  rta_hw_t *hw;           /* NULL when the record has no H line */
  int64_t nkeys;
  char **keys;
  int64_t *key_order;     /* key ids sorted by key (lookups) */
  int ngraphs;
  policy__graph_t *graphs;   /* graphs[g], g as in the G line (gaps: n 0) */
  int64_t nsteps, ndecisions, nremaps, nmeasures, ncandidates, ncostrows, nmerged;
  policy__merged_t *merged; /* S lines (version 3) */
  policy__step_t *steps;
  policy__decision_t *decisions;
  policy__remap_t *remaps;
  rta_remap_measure_t *measures;
  policy__candidate_t *candidates;
  policy__costs_t *costrows;
  int64_t nevents;
  policy__event_t *events;   /* T, S, D, J, R and X lines in file order */
  double *bytes;          /* ranks x ranks: the last B lines (per step), or NULL */
  int closed;             /* the Z line was read */
  long long dropped;      /* Z's dropped lines */
} policy__t;

/*
 * Reads the record at \a path. 0 and *out (free with policy__close);
 * BALLAST_EIO when the file cannot be opened; BALLAST_EPARSE for a file that
 * is not a record, of another version, malformed or cut inside a line
 * (a warning names the file, line and what is wrong); BALLAST_ENOMEM.
 * Nothing is returned on error.
 */
int policy__open(const char *path, policy__t **out);
/* Frees a record; NULL does nothing. */
void policy__close(policy__t *r);

/* Identity of a task tree: a 64-bit hash of the sorted leaf keys of graph
 * \a g (FNV-1a over the keys with their NUL). A warm start compares it with
 * its own tree's to refuse another tree's record. 0 when g has no vertex. */
uint64_t policy__tree_hash(const policy__t *r, int g);
/* The same hash over \a n sorted keys. */
uint64_t policy__keys_hash(const char *const *keys, int64_t n);

/* What the record knows of one task, from its last graph holding it. */
typedef struct {
  double work;        /* the last work the engine got (seconds once measured) */
  double state;       /* state bytes */
  int nprocs;
  int slot;           /* where it ran at the end: the target of the last
                         committed remap holding it, else its owner */
  double mean_cost;   /* mean of its W costs since the last remap (0: none) */
  long long ncosts;   /* W samples behind mean_cost */
} policy__task_t;

/* 0 and *t; BALLAST_ENOTFOUND when no graph of the record has \a key.
 * O(log keys + vertices of the graphs searched + W costs after them). */
int policy__task(const policy__t *r, const char *key, policy__task_t *t);
/* The last graph (highest g with vertices), or -1. */
int policy__last_graph(const policy__t *r);

/* The writer (src/lb/lb_record.c) is a listener of lb's contexts; its start
 * and stop are declared in lb_internal.h. */

/* ---- warm start's table (warm_read.c) ----------------------------------------- */

/* An earlier run's tasks: key -> (slot, seconds per step). */
typedef struct policy__warm policy__warm_t;
/*
 * Reads \a path, a load-balancing record or a job profile (JSON; \uXXXX
 * escapes and surrogate pairs decoded to UTF-8), for the context over root
 * \a root on \a size ranks. 0 and *out (free with policy__warm_free);
 * BALLAST_EIO (cannot read), BALLAST_ETOOBIG (over 1 GiB), BALLAST_ENOMEM,
 * BALLAST_EPARSE (neither a record nor a profile, or malformed),
 * BALLAST_EMISMATCH (no context over that root and number of ranks),
 * BALLAST_ENOTSUP (the profile's last map is binned); \a why (\a nwhy
 * bytes) says why. Local: no MPI.
 */
int policy__warm_read(const char *path, const char *root, int size, policy__warm_t **out,
                      char *why, size_t nwhy);
/* 1 and the task's \a slot (-1: not known) and \a cost (seconds per step,
 * 0: not known) when \a key is in the table; 0 when not. */
int policy__warm_find(const policy__warm_t *w, const char *key, int *slot, double *cost);
/* Tasks in the table. */
int64_t policy__warm_ntasks(const policy__warm_t *w);
/* Frees the table; NULL does nothing. */
void policy__warm_free(policy__warm_t *w);

#endif /* BALLAST_LBREC_H */
