# Installs libballast (shared and static), the public headers, a pkg-config
# file and a CMake package so out-of-tree projects can write
#   find_package(ballast) + target_link_libraries(app ballast::ballast)
include(CMakePackageConfigHelpers)

install(TARGETS ballast EXPORT ballastTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ballast_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/include/ballast/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ballast)

install(EXPORT ballastTargets NAMESPACE ballast::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ballast)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/ballastConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ballastConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ballast)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ballastConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ballastConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ballastConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ballast)

file(RELATIVE_PATH BALLAST_PC_RELPREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/ballast.pc.in
  ${CMAKE_CURRENT_BINARY_DIR}/ballast.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ballast.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
