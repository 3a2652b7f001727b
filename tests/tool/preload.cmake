# An unmodified MPI program (plain.c, not linked to ballast) on 2 ranks with
# LD_PRELOAD=libballast.so and BALLAST_TOOLS=count: the count tool's table
# shows its calls (5 MPI_Bcast and 3 MPI_Barrier per rank, 2 MPI_Pcontrol,
# one region).
execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe -x LD_PRELOAD=${LIB} ${PROG}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the preloaded run failed: ${rc}")
endif()
foreach(want "count: MPI_Bcast +10 +160\n" "count: MPI_Barrier +6 +0\n"
    "count: MPI_Pcontrol +4 +0\n" "count: regions entered +2\n")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "the count tool's table lacks \"${want}\"")
  endif()
endforeach()
