# pia's Fortran bindings: the iso_c_binding module `ballast` (ballast.mod) in
# its own library, libballast_fortran, built only when BALLAST_WITH_FORTRAN is
# on and a Fortran compiler exists.
if(BALLAST_WITH_FORTRAN)
  include(CheckLanguage)
  check_language(Fortran)
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    set(BALLAST_FORTRAN_MODDIR ${PROJECT_BINARY_DIR}/fortran)
    add_library(ballast_fortran SHARED ${CMAKE_CURRENT_LIST_DIR}/fortran/ballast.f90)
    set_target_properties(ballast_fortran PROPERTIES
      Fortran_MODULE_DIRECTORY ${BALLAST_FORTRAN_MODDIR}
      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
    target_include_directories(ballast_fortran PUBLIC
      $<BUILD_INTERFACE:${BALLAST_FORTRAN_MODDIR}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ballast/fortran>)
    target_link_libraries(ballast_fortran PUBLIC ballast)
    install(TARGETS ballast_fortran
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(FILES ${BALLAST_FORTRAN_MODDIR}/ballast.mod
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ballast/fortran)
    message(STATUS "ballast: Fortran bindings enabled (${CMAKE_Fortran_COMPILER})")
  else()
    message(STATUS "ballast: no Fortran compiler, Fortran bindings not built")
  endif()
endif()
