/* Multi-node checks on the emulated cluster (tools/emucluster): launched by
 * emu_run.sh as 4 ranks on 2 namespaces x 2 ranks. Checks that
 *  - the ranks see exactly the node hostnames given as arguments, 2 ranks
 *    on each, and MPI_Get_processor_name agrees with gethostname;
 *  - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) yields one communicator per
 *    node: 2 communicators of 2 ranks, each holding the ranks of one host;
 *  - messages flow between every pair of ranks, small and large (the large
 *    ones take the rendezvous path of both vader and tcp), with their
 *    contents intact, through ballast's monitoring wrappers.
 * usage: emu_nodes NODE_A NODE_B */
#include <stdint.h>
#include <unistd.h>

#include <ballast/mon.h>

#include "test_util.h"

enum { HOST_LEN = 64, NRANKS = 4, RANKS_PER_NODE = 2 };
enum { BIG = 1 << 20 }; /* elements (uint32_t) in a large message: 4 MiB */

/* The value at index i of the message from src to dst. */
static uint32_t pattern(int src, int dst, size_t i) {
  return (uint32_t)(src * 0x01000193u) ^ (uint32_t)(dst * 0x9e3779b9u) ^
         (uint32_t)(i * 2654435761u);
}

static void check_hostnames(int rank, const char *node_a, const char *node_b,
                            char all[][HOST_LEN]) {
  char me[HOST_LEN] = {0}, proc[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  CHECK_EQ(gethostname(me, sizeof me - 1), 0);
  CHECK_EQ(MPI_Get_processor_name(proc, &len), MPI_SUCCESS);
  CHECK(strcmp(me, proc) == 0);
  CHECK(strcmp(me, node_a) == 0 || strcmp(me, node_b) == 0);
  CHECK_EQ(MPI_Allgather(me, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR,
                         MPI_COMM_WORLD), MPI_SUCCESS);
  int on_a = 0, on_b = 0;
  for (int r = 0; r < NRANKS; r++) {
    on_a += strcmp(all[r], node_a) == 0;
    on_b += strcmp(all[r], node_b) == 0;
  }
  CHECK_EQ(on_a, RANKS_PER_NODE);
  CHECK_EQ(on_b, RANKS_PER_NODE);
  if (rank == 0)
    printf("hostnames: %s %s %s %s\n", all[0], all[1], all[2], all[3]);
}

static void check_shared_split(int rank, char all[][HOST_LEN]) {
  MPI_Comm node;
  int nrank = -1, nsize = -1;
  CHECK_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                               MPI_INFO_NULL, &node), MPI_SUCCESS);
  CHECK_EQ(MPI_Comm_rank(node, &nrank), MPI_SUCCESS);
  CHECK_EQ(MPI_Comm_size(node, &nsize), MPI_SUCCESS);
  CHECK_EQ(nsize, RANKS_PER_NODE);
  /* Every member of my node communicator runs on my host. */
  int members[RANKS_PER_NODE];
  CHECK_EQ(MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node),
           MPI_SUCCESS);
  for (int i = 0; i < nsize; i++)
    CHECK(strcmp(all[members[i]], all[rank]) == 0);
  /* One leader per communicator: as many communicators as nodes. */
  int leader = nrank == 0, nodes = 0;
  CHECK_EQ(MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM,
                         MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(nodes, 2);
  if (rank == 0)
    printf("split_type SHARED: %d node communicators of %d ranks\n", nodes,
           nsize);
  MPI_Comm_free(&node);
}

/* Every rank sends a message of n elements to every other rank at once and
 * checks what it receives. */
static void exchange_all(int rank, size_t n) {
  uint32_t *out[NRANKS] = {0}, *in[NRANKS] = {0};
  MPI_Request req[2 * NRANKS];
  int nreq = 0;
  for (int p = 0; p < NRANKS; p++) {
    if (p == rank)
      continue;
    out[p] = malloc(n * sizeof(uint32_t));
    in[p] = calloc(n, sizeof(uint32_t));
    CHECK(out[p] != NULL && in[p] != NULL);
    for (size_t i = 0; i < n; i++)
      out[p][i] = pattern(rank, p, i);
    CHECK_EQ(MPI_Irecv(in[p], (int)n, MPI_UINT32_T, p, 7, MPI_COMM_WORLD,
                       &req[nreq++]), MPI_SUCCESS);
    CHECK_EQ(MPI_Isend(out[p], (int)n, MPI_UINT32_T, p, 7, MPI_COMM_WORLD,
                       &req[nreq++]), MPI_SUCCESS);
  }
  CHECK_EQ(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  for (int p = 0; p < NRANKS; p++) {
    if (p == rank)
      continue;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
      bad += in[p][i] != pattern(p, rank, i);
    CHECK_EQ(bad, 0);
    free(out[p]);
    free(in[p]);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(argc, 3);
  CHECK_EQ(size, NRANKS);
  CHECK(strcmp(argv[1], argv[2]) != 0);

  char all[NRANKS][HOST_LEN];
  memset(all, 0, sizeof all);
  check_hostnames(rank, argv[1], argv[2], all);
  check_shared_split(rank, all);

  /* The traffic runs through ballast's monitoring wrappers (the program is
   * linked with libballast), in a region of its own. */
  CHECK_EQ(mon_region_begin("emu_exchange"), 0);
  exchange_all(rank, 1);
  exchange_all(rank, 1000);
  exchange_all(rank, BIG);
  CHECK_EQ(mon_region_end("emu_exchange"), 0);
  /* Every rank completed every pair: count the verified pairs globally. */
  int pairs = size - 1, total = 0;
  CHECK_EQ(MPI_Allreduce(&pairs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_SUCCESS);
  CHECK_EQ(total, NRANKS * (NRANKS - 1));
  if (rank == 0)
    printf("messages of 4 B, 4000 B and 4 MiB verified on all %d ordered "
           "pairs\nPASS\n", total);
  MPI_Finalize();
  return 0;
}
