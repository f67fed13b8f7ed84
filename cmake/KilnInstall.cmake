# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# `cmake --install` puts the headers, libkiln and a CMake package in the prefix, so that
# find_package(kiln) + target_link_libraries(app kiln::kiln) works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS kiln EXPORT kilnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/generated/kiln/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/kiln)  # as Apache-2.0 §4(a) asks
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# kiln.pc for pkg-config users; paths relative to the .pc file's place (${pcfiledir}) unless a directory was
# given as an absolute path.
set(kiln_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH KILN_PC_PREFIX_FROM_PCDIR /prefix/${kiln_pcdir} /prefix)
string(REGEX REPLACE "/$" "" KILN_PC_PREFIX_FROM_PCDIR "${KILN_PC_PREFIX_FROM_PCDIR}")
foreach(dir INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(KILN_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(KILN_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc DESTINATION ${kiln_pcdir})
