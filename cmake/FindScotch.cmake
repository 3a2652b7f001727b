# Finds SCOTCH 7 (sequential) and, when present, PT-Scotch, and defines the
# interface target ballast_scotch. Debian installs the default integer width
# under /usr/include/scotch; the width is checked again at run time against
# SCOTCH_numSizeof() (a known trap: the header and library must agree).
find_path(SCOTCH_INCLUDE_DIR scotch.h PATH_SUFFIXES scotch REQUIRED)
find_library(SCOTCH_LIBRARY scotch REQUIRED)
find_library(SCOTCHERR_LIBRARY scotcherr REQUIRED)
find_library(PTSCOTCH_LIBRARY ptscotch)
find_library(PTSCOTCHERR_LIBRARY ptscotcherr)
add_library(ballast_scotch INTERFACE)
target_include_directories(ballast_scotch INTERFACE $<BUILD_INTERFACE:${SCOTCH_INCLUDE_DIR}>)
set(BALLAST_HAVE_PTSCOTCH 0)
if(PTSCOTCH_LIBRARY AND PTSCOTCHERR_LIBRARY AND EXISTS ${SCOTCH_INCLUDE_DIR}/ptscotch.h)
  set(BALLAST_HAVE_PTSCOTCH 1)
  target_link_libraries(ballast_scotch INTERFACE
    $<BUILD_INTERFACE:${PTSCOTCH_LIBRARY}> $<BUILD_INTERFACE:${PTSCOTCHERR_LIBRARY}>)
endif()
target_link_libraries(ballast_scotch INTERFACE
  $<BUILD_INTERFACE:${SCOTCH_LIBRARY}> $<BUILD_INTERFACE:${SCOTCHERR_LIBRARY}> m)
target_compile_definitions(ballast_scotch INTERFACE BALLAST_HAVE_PTSCOTCH=${BALLAST_HAVE_PTSCOTCH})
message(STATUS "SCOTCH: ${SCOTCH_LIBRARY} (PT-Scotch: ${BALLAST_HAVE_PTSCOTCH})")
