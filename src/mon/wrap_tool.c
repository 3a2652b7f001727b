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

uint64_t mon__tool_mpi_enter(mon__tls_t *t, mon__tool_call_t *c, int act, MPI_Comm comm,
                             uint64_t t0) {
  c->act = act;
  c->lib = ballast__tl_lib_depth > 0;
  c->comm_size = comm != MPI_COMM_NULL ? mon__w_size(comm) : 0;
  t->tool_bytes = 0;
  t->tool_ncredit = 0;
  t->tool_partner = MON_NO_PARTNER;
  if (BALLAST__TOOL_ON(BALLAST__TOOL_EV_MPI_ENTER)) {
    ballast_tool_mpi_enter_t ev = {.t_ns = mon__ticks_ns(t0), .fn = act,
                                   .name = mon__act_names[act], .comm_size = c->comm_size,
                                   .lib = c->lib};
    ballast__tool_emit_mpi_enter(&ev);
    t0 = mon__ticks();
  }
  c->t0 = t0;
  return t0;
}

void mon__tool_mpi_exit(mon__tls_t *t, const mon__tool_call_t *c, int ret, int partner,
                        uint64_t bytes, uint64_t posted, uint64_t t1) {
  if (!BALLAST__TOOL_ON(BALLAST__TOOL_EV_MPI_EXIT))
    return;
  if (partner < 0 && t->tool_ncredit > 0)
    partner = t->tool_partner;
  ballast_tool_mpi_exit_t ev = {.t_ns = mon__ticks_ns(t1), .t_begin_ns = mon__ticks_ns(c->t0),
                                .fn = c->act, .name = mon__act_names[c->act],
                                .bytes = bytes + t->tool_bytes, .posted_bytes = posted,
                                .partner = partner, .comm_size = c->comm_size,
                                .lib = c->lib, .ret = ret};
  ballast__tool_emit_mpi_exit(&ev);
}
