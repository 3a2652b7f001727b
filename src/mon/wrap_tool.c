/*
 * The MPI events of the tools interface (ballast/tool.h), raised by the
 * generated wrappers only when a tool registered mpi_enter or mpi_exit: the
 * wrappers pay one predictable branch otherwise.
 *
 * Bytes follow mon's accounting, so a tool's sums match pia's: what the call
 * recorded plus what completed inside it (mon__account: a wait's receive, the
 * receive half of MPI_Sendrecv). A nonblocking send's size is also given
 * when it is posted (posted_bytes), for timelines that draw the message there.
 */
#include "common/common_internal.h"
#include "mon/mon_core.h"
#include "mon/mon_acts.h"
#include "mon/wrap_internal.h"
#include "tool/tool_internal.h"

__thread __attribute__((tls_model("initial-exec"))) uint64_t mon__tl_credit_bytes;
__thread __attribute__((tls_model("initial-exec"))) unsigned mon__tl_credit_n;
__thread __attribute__((tls_model("initial-exec"))) int mon__tl_credit_partner;
__thread __attribute__((tls_model("initial-exec"))) uint64_t mon__tl_done_ticks;

/* Size and comm_id of the communicator an event names: 0 and -1 for none. */
static int comm_size(MPI_Comm comm, int *id) {
  *id = -1;
  return comm != MPI_COMM_NULL ? mon__w_size_id(comm, id) : 0;
}

uint64_t mon__tool_mpi_enter(int act, MPI_Comm comm, uint64_t t0, int tag) {
  int id, size = comm_size(comm, &id); /* before the initializer reads id */
  ballast_tool_mpi_enter_t ev = {.t_ns = mon__ticks_ns(t0), .fn = act,
                                 .name = mon__act_names[act], .comm_size = size,
                                 .lib = ballast__tl_lib_depth > 0, .comm_id = id, .tag = tag};
  tool__emit_mpi_enter(&ev);
  return mon__ticks();
}

void mon__tool_mpi_complete(int act, int recv, int partner, int tag, uint64_t bytes,
                            int comm_id, uint64_t ticks) {
  ballast_tool_mpi_complete_t ev = {.t_ns = mon__ticks_ns(ticks), .fn = act,
                                    .name = mon__act_names[act], .recv = recv,
                                    .partner = partner < 0 ? -1 : partner, .tag = tag,
                                    .bytes = bytes, .comm_id = comm_id,
                                    .lib = ballast__tl_lib_depth > 0};
  tool__emit_mpi_complete(&ev);
}

void mon__tool_mpi_exit(int act, MPI_Comm comm, int ret, int partner, uint64_t bytes,
                        uint64_t posted, uint64_t t0, uint64_t t1, int tag) {
  if (!TOOL__ON(TOOL__EV_MPI_EXIT))
    return;
  if (partner < 0 && mon__tl_credit_n > 0)
    partner = mon__tl_credit_partner;
  int id, size = comm_size(comm, &id); /* before the initializer reads id */
  ballast_tool_mpi_exit_t ev = {.t_ns = mon__ticks_ns(t1), .t_begin_ns = mon__ticks_ns(t0),
                                .fn = act, .name = mon__act_names[act],
                                .bytes = bytes + mon__tl_credit_bytes, .posted_bytes = posted,
                                .partner = partner, .comm_size = size,
                                .lib = ballast__tl_lib_depth > 0, .ret = ret,
                                .comm_id = id, .tag = tag};
  tool__emit_mpi_exit(&ev);
}
