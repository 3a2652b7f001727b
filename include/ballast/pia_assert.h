/**
 * \file ballast/pia_assert.h
 * \brief Performance assertions: statements about a run's performance
 * ("the halo exchange takes under 15% of a step", "imbalance stays under
 * 1.1"), checked while the program runs from the data PIA already has, and
 * reported at the end of the run. No special compiler, no recompilation.
 *
 * \section lang The language
 * An assertion is one C-like infix expression, parsed once (when it is
 * created) into a compact postfix program. It holds when its value is
 * non-zero. Grammar, loosest binding first:
 * \verbatim
 *   expr    := implies
 *   implies := or ( "->" implies )?            a -> b  is  !a | b (right assoc.)
 *   or      := and ( "|" and )*                also "||"
 *   and     := cmp ( "&" cmp )*                also "&&"
 *   cmp     := sum ( ("<"|"<="|">"|">="|"=="|"!=") sum )?
 *   sum     := prod ( ("+"|"-") prod )*
 *   prod    := unary ( ("*"|"/") unary )*
 *   unary   := ("-"|"!") unary | postfix
 *   postfix := primary unit?                   e.g. 10 ms, 2 MiB, WallTime ms
 *   primary := number | name | "$"name | "_"name | name "(" args ")" | "(" expr ")"
 * \endverbatim
 * - Numbers: decimal, with fraction and exponent (\c 1.5e-3).
 * - Units multiply what they follow: \c seconds (\c s), \c milliseconds
 *   (\c ms), \c microseconds (\c us), \c KiB, \c MiB. Times are in seconds,
 *   sizes in bytes, so <tt>WallTime < 10 ms</tt> reads as it should.
 * - Metrics of the scope the assertion watches (one instance of a region,
 *   one begin/end of an in-code scope, or the whole run): \c WallTime,
 *   \c CPUTime (the process's CPU time), \c MPITime (the program's MPI
 *   time: group MPI_ALL, every monitored call but MPI_Init, MPI_Init_thread
 *   and MPI_Finalize; over the whole run <tt>MPITime / WallTime</tt> is the
 *   report's %mpi of this rank over 100, README "What the figures mean"),
 *   \c MPIPointToPointTime (group MPI_P2P: point-to-point,
 *   probe and completion calls), \c MPICollectiveTime (group MPI_COLL),
 *   \c MPIWaitTime (MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome),
 *   \c MPITransferTime (time in calls that move data: MPI_P2P + MPI_COLL +
 *   MPI_RMA + MPI_IO less the four waits, MPI_Probe, MPI_Iprobe and
 *   MPI_Barrier), \c MPICalls and \c MPIBytes (of MPI_ALL; MPI_Pcontrol
 *   is a monitored call and counts). Sums and differences of groups are
 *   exact up to floating-point rounding.
 * - Per activity: <tt>time(A)</tt>, <tt>calls(A)</tt>, <tt>bytes(A)</tt>
 *   where A is an MPI call (\c MPI_Allreduce) or a PIA group (\c MPI_P2P,
 *   \c MPI_COLL, \c MPI_RMA, \c MPI_IO, \c MPI_ALL).
 * - <tt>mpit(V)</tt>: MPI_T performance variable \c V (one that
 *   BALLAST_MPIT selects, e.g. \c pml_ob1_unexpected_msgq_length), its value
 *   when the assertion is checked (per-peer values summed); read on the
 *   thread that called MPI_Init only (elsewhere the check is an error).
 * - Functions: \c exp, \c log (natural), \c sqrt, \c abs (one argument),
 *   \c pow, \c min, \c max (two).
 * - \c nprocs (size of MPI_COMM_WORLD), \c rank (rank in it).
 * - <tt>$name</tt>: a program variable registered with
 *   pia_assert_var_register(), read at each check.
 * - <tt>_name</tt>: a value from the configuration file named by
 *   \c BALLAST_ASSERT_CONFIG (lines <tt>name = number</tt>, \c # comments),
 *   read when the assertion is created; one assertion file serves many inputs.
 * - Across ranks: <tt>max_ranks(e)</tt>, <tt>min_ranks(e)</tt>,
 *   <tt>avg_ranks(e)</tt> evaluate \c e on every rank of MPI_COMM_WORLD and
 *   combine (one MPI_Allreduce per check, the library's own traffic). They
 *   make a check **collective**: every rank must reach it the same number of
 *   times (a region every rank runs, the whole run, or an in-code scope every
 *   rank ends). They do not nest.
 *
 * \section scope What a metric covers
 * A scope's metrics are the change over the scope: the wall time from its
 * entry to its exit, and the process's whole-run MPI statistics (PIA's
 * activity data) at exit less those at entry. So the MPI time of an inner
 * scope also counts for every scope around it, and calls of all threads of
 * the process count. The whole run's metrics are the totals at MPI_Finalize
 * (WallTime and CPUTime those of PIA's region 0). The library's own MPI
 * traffic never counts.
 *
 * \section attach Where assertions attach
 * - The file named by \c BALLAST_ASSERT_FILE, read at MPI_Init (works under
 *   LD_PRELOAD, no source change). One assertion per line:
 *   <tt>[remap] [good] TARGET: EXPRESSION</tt>, where TARGET is a region name as
 *   the tools interface reports it (mon_region_begin()'s name, MPI_Pcontrol's,
 *   or a task's key such as \c step/forces for the task runtime's regions),
 *   checked at every exit of every region of that name, over that instance;
 *   or \c * (the whole run, checked at MPI_Finalize). TARGET cannot contain
 *   ':'. \c # starts a comment line. A line that does not parse is reported (file, line,
 *   column, caret), once per job (every rank reads the same file: the
 *   lowest rank that found the error prints it), and skipped; the others
 *   still run.
 * - In code: pia_assert_create() then pia_assert_begin()/pia_assert_end()
 *   around a block, or PIA_ASSERT_SCOPE(); pia_assert_create_ex() attaches
 *   to a region or the whole run as the file does.
 *
 * \section action What a failure does
 * Each failure is counted. \c BALLAST_ASSERT_ACTION chooses more:
 * \c count (default), \c warn (one line at the first failure of each
 * assertion, with the values it used), \c abort (MPI_Abort at the first
 * failure), \c exit (the run completes, and the process exits with status
 * 3 after MPI_Finalize when any assertion failed on any rank, so CI can
 * fail a job on a performance regression). A callback registered with
 * pia_assert_on_failure() runs at every failure. An assertion marked remap
 * (\c PIA_ASSERT_REMAP, or \c remap before the target in the file) that
 * fails requests a remap at the next rta_lb_perform() of every
 * context (the request is agreed across the context's ranks).
 * An assertion marked good (\c PIA_ASSERT_GOOD, or \c good before the
 * target in the file) on a region is checked only at the instances that
 * are good repetitions (mon_region_repeat(), which it calls for the
 * region): the first, warm-up and outlier instances are neither checked
 * nor counted, so a noisy instance cannot fail it. On an in-code scope or
 * the whole run the flag is refused (BALLAST_EINVAL).
 *
 * \section report Report
 * The end-of-run report and the JSON profile (member "assertions") list
 * each assertion: its source (file:line, or the region), its text, passes
 * and checks (min and max over ranks), and its first failure (rank,
 * instance, the values of the metrics it used). A region that never ran is
 * reported as never checked. The reduction is collective at MPI_Finalize.
 *
 * \section cost Cost
 * A program with no assertion pays nothing (nothing is attached). A check
 * reads only the metrics its assertions use: O(threads) per MPI call named,
 * O(MPI calls in the API x threads) per group; evaluating the postfix
 * program itself takes tens of nanoseconds (bench/assert_eval).
 *
 * \section threads Threads
 * Creation, registration and the results API take a lock and are thread
 * safe. Scopes are per thread: begin and end of one scope on one thread.
 */
#ifndef BALLAST_PIA_ASSERT_H
#define BALLAST_PIA_ASSERT_H

#include <stddef.h>

#include <ballast/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Target name meaning "the whole run" (checked at MPI_Finalize). */
#define PIA_ASSERT_RUN "*"

/** Flag: a failure requests a remap at the next load-balancing call. */
#define PIA_ASSERT_REMAP 1
/** Flag: checked only at instances that are good repetitions (a region
 *  target only; the region is marked repeated, mon_region_repeat()): the
 *  first repetition, the warm-up and the outliers are not checked. */
#define PIA_ASSERT_GOOD 2

/** Options of pia_assert_create_ex(); fill with pia_assert_options_init(). */
typedef struct {
  const char *expr;   /**< the expression (copied) */
  const char *region; /**< NULL: an in-code scope (pia_assert_begin/end);
                           a region name: checked at each exit of it;
                           PIA_ASSERT_RUN: the whole run */
  const char *file;   /**< where it came from, for messages and the report
                           (copied; NULL: none) */
  int line;           /**< its line in \a file (0: none) */
  int flags;          /**< PIA_ASSERT_REMAP, PIA_ASSERT_GOOD, both or 0 */
} pia_assert_options_t;

/** Results of one assertion on this rank (a read-only record). */
typedef struct {
  long long checks;     /**< times it was checked */
  long long passes;     /**< checks it held */
  long long first_fail; /**< instance (1-based check number) of the first
                             failure, 0 when it never failed */
  long long errors;     /**< checks that could not be evaluated (an unset
                             variable); they count neither as pass nor check */
} pia_assert_result_t;

/** Types of registered variables. */
typedef enum { PIA_VAR_INT, PIA_VAR_LONG, PIA_VAR_DOUBLE } pia_var_type_t;

/**
 * Called at every failure, on the thread of the check: the assertion, its
 * text, the instance (1-based check number), the value of each metric or
 * variable it used (\a names and \a values, \a n of them; valid during the
 * call only) and the user pointer.
 */
typedef void (*pia_assert_failure_fn)(int id, const char *text, long long instance,
                                      int n, const char *const *names,
                                      const double *values, void *user);

/** \brief Default options: everything NULL or 0. NULL does nothing. */
BALLAST_API void pia_assert_options_init(pia_assert_options_t *o);

/**
 * \brief Parse an expression without creating anything.
 * \param expr the expression.
 * \param len size of \a msg.
 * \param msg where to write the error message (column, caret, what was
 *        expected or the valid names), or NULL; "" on success.
 * \return 0; BALLAST_EINVAL when expr is NULL; BALLAST_EPARSE for a syntax
 *         error; BALLAST_ENOTFOUND for an unknown name; BALLAST_ENOMEM.
 * Thread safe.
 */
BALLAST_API int pia_assert_parse_check(const char *expr, size_t len, char *msg);

/**
 * \brief Create an in-code assertion, checked at each pia_assert_end().
 * \param expr the expression (copied).
 * \param id receives its id (>= 0, dense, never reused).
 * \return 0; BALLAST_EINVAL for NULL arguments; BALLAST_EPARSE or
 *         BALLAST_ENOTFOUND for a bad expression (a warning shows the
 *         message); BALLAST_ENOMEM. Thread safe; before or after MPI_Init.
 */
BALLAST_API int pia_assert_create(const char *expr, int *id);

/**
 * \brief Create an assertion with options (a region or the whole run as
 * target, a source, flags).
 * \return as pia_assert_create(); also BALLAST_EINVAL for an empty region
 *         name.
 */
BALLAST_API int pia_assert_create_ex(const pia_assert_options_t *o, int *id);

/**
 * \brief Open a scope of an in-code assertion on the calling thread: its
 * metrics are measured from now. Scopes nest (up to 64 deep per thread).
 * \return 0; BALLAST_ENOTFOUND for a bad id; BALLAST_ESTATE when the
 *         assertion is not an in-code one; BALLAST_ERANGE when too deep.
 */
BALLAST_API int pia_assert_begin(int id);

/**
 * \brief Close the innermost open scope (which must be \a id's) and check
 * the assertion over it. Collective when the expression uses *_ranks().
 * \return 1 when it held, 0 when it failed (and the failure action ran),
 *         BALLAST_EMISMATCH when the innermost scope is not \a id's or none
 *         is open, BALLAST_ENOTFOUND for a bad id, BALLAST_ESTATE when a
 *         variable it reads is not registered, BALLAST_EMPI when the
 *         cross-rank reduction failed.
 */
BALLAST_API int pia_assert_end(int id);

/** \brief Results of assertion \a id on this rank.
 * \return 0; BALLAST_EINVAL for NULL \a out; BALLAST_ENOTFOUND for a bad id. */
BALLAST_API int pia_assert_result(int id, pia_assert_result_t *out);

/** \brief The assertions created so far.
 * \return the number of assertions created (file and code), >= 0. */
BALLAST_API int pia_assert_count(void);

/** \brief The text of assertion \a id (owned by ballast), or NULL. */
BALLAST_API const char *pia_assert_text(int id);

/**
 * \brief Register (or re-register) a variable read as \c $name.
 * \param name its name without '$' (letters, digits, '_').
 * \param type its C type.
 * \param addr its address; must stay valid while assertions may read it.
 * \return 0; BALLAST_EINVAL for NULL or a bad name or type; BALLAST_ENOMEM.
 */
BALLAST_API int pia_assert_var_register(const char *name, pia_var_type_t type,
                                        const void *addr);

/** \brief Set (fn non-NULL) or clear the failure callback. Thread safe. */
BALLAST_API void pia_assert_on_failure(pia_assert_failure_fn fn, void *user);

/**
 * Run the block that follows as one scope of assertion \a id:
 * <tt>PIA_ASSERT_SCOPE(id) { ... }</tt>. Leaving the block by break, goto
 * or return skips the check (and leaves the scope open): use
 * pia_assert_begin()/pia_assert_end() there.
 */
#define PIA_ASSERT_SCOPE(id)                                                   \
  for (int pia_assert_once_ = (pia_assert_begin(id), 0); !pia_assert_once_;    \
       pia_assert_once_ = 1, (void)pia_assert_end(id))

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_PIA_ASSERT_H */
