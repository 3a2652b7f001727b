# Runs ballast-ring (10 steps of 1000 bytes) on 2 ranks with the count tool
# and checks its table against what ring does: per rank MPI_Comm_rank,
# MPI_Comm_size, MPI_Bcast, 10 MPI_Sendrecv (1000 bytes out, 1000 in),
# 10 MPI_Allreduce and MPI_Barrier = 24 calls; 1 + 10 x 4 regions.
execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe ${PROG} 10 1000 100
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ballast-ring with the count tool failed: ${rc}")
endif()
foreach(want
    "count: events of 2 rank\\(s\\)"
    "count: MPI calls +48\n"
    "count: regions entered +82\n"
    "count: task steps +0\n"
    "count: MPI_Sendrecv +20 +40000\n"
    "count: MPI_Allreduce +20 "
    "count: MPI_Barrier +2 +0\n")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "the count tool's table lacks \"${want}\"")
  endif()
endforeach()
if(err MATCHES "warning")
  message(FATAL_ERROR "warnings in a clean run")
endif()
