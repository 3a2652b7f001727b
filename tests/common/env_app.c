/* The program check_env.py runs under mpiexec -n 2 with chosen environment
 * variables: monitoring (whatever BALLAST_MONITOR says), the load-balancing
 * policy read from the environment and hardware discovery (which reads
 * BALLAST_HW_LAYOUT). Each rank prints what it got on stdout, one line,
 * so the script can compare ranks and values. */
#include <stdio.h>

#include <ballast/rta_map.h>
#include <ballast/rta_policy.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  rta_policy_config_t cfg;
  rta_policy_config_init(&cfg);
  int prc = rta_policy_config_from_env(&cfg);
  rta_hw_t *hw = NULL;
  int hrc = rta_hw_discover(MPI_COMM_WORLD, &hw);
  printf("rank %d policy %s mode %d window %d threshold %g discover %s nodes %d\n", rank,
         ballast_err_name(prc), (int)cfg.mode, cfg.window, cfg.threshold,
         ballast_err_name(hrc), hw ? rta_hw_nnodes(hw) : -1);
  fflush(stdout);
  rta_hw_destroy(hw);
  MPI_Finalize();
  return 0;
}
