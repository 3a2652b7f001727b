# The PMPI wrappers are generated at build time from mpi31.spec by
# tools/gen_wrappers.py (never committed). Outputs go to build/src/mon and are
# included as "mon/mon_acts.h" through ballast_mon's build-tree include dir.
set(MON_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR})
set(MON_GEN_OUTPUTS ${MON_GEN_DIR}/mon_wrappers.c ${MON_GEN_DIR}/mon_acts.c
  ${MON_GEN_DIR}/mon_acts.h ${MON_GEN_DIR}/mon_fwrappers.c)
add_custom_command(
  OUTPUT ${MON_GEN_OUTPUTS}
  COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/gen_wrappers.py
          ${CMAKE_CURRENT_SOURCE_DIR}/mpi31.spec ${MON_GEN_DIR}
  # The generator writes only changed files: touch all so make sees them fresh.
  COMMAND ${CMAKE_COMMAND} -E touch ${MON_GEN_OUTPUTS}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/mpi31.spec ${PROJECT_SOURCE_DIR}/tools/gen_wrappers.py
  COMMENT "Generating the PMPI wrappers from mpi31.spec"
  VERBATIM)
add_custom_target(ballast_mon_gen DEPENDS ${MON_GEN_OUTPUTS})
# Order the build explicitly: the wrappers and the layers above include the
# generated headers.
set_source_files_properties(${MON_GEN_OUTPUTS} DIRECTORY ${PROJECT_SOURCE_DIR}
  PROPERTIES GENERATED TRUE)
target_sources(ballast_mon PRIVATE ${MON_GEN_DIR}/mon_wrappers.c ${MON_GEN_DIR}/mon_acts.c
  ${MON_GEN_DIR}/mon_acts.h)
add_dependencies(ballast_mon ballast_mon_gen)

# Received sizes from a status: the fast Open MPI reading when its status
# layout is the known one, the portable MPI_Get_elements_x otherwise.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
#if !defined(OPEN_MPI)
#error not Open MPI
#endif
int main(void) { MPI_Status s; s._ucount = 1; return (int)s._ucount - 1; }
]=] BALLAST_MPI_STATUS_UCOUNT)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
if(BALLAST_MPI_STATUS_UCOUNT)
  target_sources(ballast_mon PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/wrap_status/ompi.c)
else()
  target_sources(ballast_mon PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/wrap_status/generic.c)
endif()

# The Fortran wrappers (mon_fwrappers.c, generated with the C ones) follow
# Open MPI's Fortran bindings: its symbol names and its sentinels, the common
# blocks that libmpi defines. They reference the Fortran PMPI entry points
# weakly, so libballast needs no Fortran library and C programs are unchanged;
# a Fortran program linked with libballast before Open MPI's Fortran
# libraries, or run with LD_PRELOAD=libballast.so, calls ballast's wrappers.
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
#if !defined(OPEN_MPI)
#error not Open MPI
#endif
extern int mpi_fortran_in_place_, mpi_fortran_bottom_, mpi_fortran_status_ignore_;
int main(void) {
  return (&mpi_fortran_in_place_ == &mpi_fortran_bottom_) + (MPI_F_STATUS_IGNORE == 0) +
         (&mpi_fortran_status_ignore_ == 0);
}
]=] BALLAST_MPI_FORTRAN_OMPI)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
if(BALLAST_MPI_FORTRAN_OMPI)
  target_sources(ballast_mon PRIVATE ${MON_GEN_DIR}/mon_fwrappers.c
    ${CMAKE_CURRENT_SOURCE_DIR}/wrap_fortran.c)
endif()
