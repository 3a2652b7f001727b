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
# blocks that libmpi defines. libballast has no link dependency on a Fortran
# library, so C programs are unchanged: a wrapper finds its Fortran PMPI entry
# point when first called, in the process (a Fortran program loads Open MPI's
# Fortran libraries) or, when the linker dropped the library because ballast
# defines every symbol the program uses, by loading the library found here.
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
#if !defined(OPEN_MPI)
#error not Open MPI
#endif
extern int mpi_fortran_in_place_, mpi_fortran_bottom_, mpi_fortran_status_ignore_,
  mpi_fortran_statuses_ignore_;
int main(void) {
  return (&mpi_fortran_in_place_ == &mpi_fortran_bottom_) + (MPI_F_STATUS_IGNORE == 0) +
         (&mpi_fortran_status_ignore_ == &mpi_fortran_statuses_ignore_);
}
]=] BALLAST_MPI_FORTRAN_OMPI)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
if(BALLAST_MPI_FORTRAN_OMPI)
  set(mon_mpi_dirs)
  foreach(lib ${MPI_C_LIBRARIES} ${MPI_mpi_LIBRARY})
    get_filename_component(dir ${lib} DIRECTORY)
    list(APPEND mon_mpi_dirs ${dir})
  endforeach()
  find_library(BALLAST_OMPI_MPIFH_LIB mpi_mpifh HINTS ${mon_mpi_dirs})
  find_library(BALLAST_OMPI_F08_LIB mpi_usempif08 HINTS ${mon_mpi_dirs})
  foreach(v MPIFH F08)
    set(path "")
    if(BALLAST_OMPI_${v}_LIB)
      get_filename_component(path ${BALLAST_OMPI_${v}_LIB} REALPATH)
    endif()
    set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/wrap_fortran.c APPEND PROPERTY
      COMPILE_DEFINITIONS BALLAST_OMPI_${v}_LIB="${path}")
  endforeach()
  target_sources(ballast_mon PRIVATE ${MON_GEN_DIR}/mon_fwrappers.c
    ${CMAKE_CURRENT_SOURCE_DIR}/wrap_fortran.c)
endif()
