# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the kiln build tree into a fresh prefix, compiles the consumer with the flags `pkg-config kiln` gives
# (no CMake on the consumer's side) and runs it; then runs the installed kiln-cache, which must find
# libkiln.so.0 through its install RPATH (no LD_LIBRARY_PATH).
# Invoked by ctest: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... -DPKG_CONFIG=... -P pkgconfig_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
unset(ENV{LD_LIBRARY_PATH})
file(GLOB pc_files ${WORK_DIR}/prefix/*/pkgconfig/kiln.pc ${WORK_DIR}/prefix/*/*/pkgconfig/kiln.pc)
list(LENGTH pc_files n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one installed kiln.pc, found: ${pc_files}")
endif()
get_filename_component(pc_dir ${pc_files} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
set(ENV{PKG_CONFIG_LIBDIR} ${pc_dir})  # this kiln only, not one installed on the system
foreach(what cflags libs)
  execute_process(COMMAND ${PKG_CONFIG} --${what} kiln RESULT_VARIABLE rc OUTPUT_VARIABLE flags_${what}
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config --${what} kiln failed (${rc}): ${err}")
  endif()
  separate_arguments(flags_${what} UNIX_COMMAND "${flags_${what}}")
endforeach()
execute_process(COMMAND ${PKG_CONFIG} --variable=libdir kiln OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT EXISTS ${libdir}/libkiln.so.0)
  message(FATAL_ERROR "pkg-config's libdir '${libdir}' holds no libkiln.so.0")
endif()

execute_process(COMMAND ${CXX} -std=c++20 ${flags_cflags} ${SOURCE_DIR}/tests/install/consumer/main.cpp
                        -o ${WORK_DIR}/consumer ${flags_libs} -Wl,-rpath,${libdir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "compiling the consumer with pkg-config's flags failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "the pkg-config consumer failed (${rc}): ${out}${err}")
endif()
message(STATUS "${out}")

execute_process(COMMAND ${WORK_DIR}/prefix/bin/kiln-cache --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "usage: kiln-cache")
  message(FATAL_ERROR "the installed kiln-cache does not run (${rc}): ${out}${err}")
endif()
