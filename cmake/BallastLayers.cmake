# ballast_layer(NAME SOURCES... [SEES layer...] [SEES_MON_HOOKS] [HOOKS layer...])
#
# Makes the object target ballast_<NAME> from SOURCES. Its private include path
# holds only symbolic links to the folders it may see: its own and those named
# in SEES (each a folder of src/). SEES_MON_HOOKS links mon/mon_hooks.h alone,
# the part of mon that the layers above pia may use; HOOKS x links x/x_hooks.h
# alone, the declared header a lower layer x offers (lb sees task only
# through task/task_hooks.h). A source that includes a
# header of a layer it does not see fails to compile: the build keeps the
# layers apart. tools/checks/layers.py checks the same rules on the sources and
# the objects' symbols, in the test suite.
set(BALLAST_LAYER_INC ${PROJECT_BINARY_DIR}/layers)
set(BALLAST_ALL_OBJECTS "")

function(ballast_layer name)
  cmake_parse_arguments(L "SEES_MON_HOOKS" "" "SOURCES;SEES;HOOKS" ${ARGN})
  set(tgt ballast_${name})
  add_library(${tgt} OBJECT ${L_SOURCES})
  set_target_properties(${tgt} PROPERTIES POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)
  target_compile_options(${tgt} PRIVATE ${BALLAST_WARNINGS})
  target_compile_definitions(${tgt} PRIVATE BALLAST_BUILDING=1
    BALLAST_HAVE_PAPI=${BALLAST_HAVE_PAPI})
  set(inc ${BALLAST_LAYER_INC}/${name})
  file(REMOVE_RECURSE ${inc})
  file(MAKE_DIRECTORY ${inc})
  foreach(dep ${name} ${L_SEES})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${dep} ${inc}/${dep} SYMBOLIC)
  endforeach()
  if(L_SEES_MON_HOOKS)
    list(APPEND L_HOOKS mon)
  endif()
  foreach(dep ${L_HOOKS})
    file(MAKE_DIRECTORY ${inc}/${dep})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${dep}/${dep}_hooks.h
      ${inc}/${dep}/${dep}_hooks.h SYMBOLIC)
  endforeach()
  target_include_directories(${tgt}
    PUBLIC  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
            $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    PRIVATE ${inc})
  target_link_libraries(${tgt} PUBLIC MPI::MPI_C PkgConfig::HWLOC ballast_scotch)
  set(BALLAST_ALL_OBJECTS ${BALLAST_ALL_OBJECTS} $<TARGET_OBJECTS:${tgt}> PARENT_SCOPE)
endfunction()
