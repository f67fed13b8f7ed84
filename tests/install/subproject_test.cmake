# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Configures tests/install/subproject (kiln added with add_subdirectory, GoogleTest disabled), then checks what a
# build of the parent would run: only kiln's library sources and the parent's own program. The parent's object is
# compiled (kiln's headers and C++20 reach it through kiln::kiln); libkiln itself is not built again here:
# install_consumer and pkgconfig_consumer link and run programs against this build's library.
# Invoked by ctest: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P subproject_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
unset(ENV{CMAKE_BUILD_TYPE})  # the parent chooses none; kiln must not choose one for it
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/subproject -B ${WORK_DIR} -G Ninja
                        -DKILN_SOURCE_DIR=${SOURCE_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "configuring the parent project failed (${rc}):\n${out}\n${err}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR} -- -n RESULT_VARIABLE rc OUTPUT_VARIABLE plan)
if(rc)
  message(FATAL_ERROR "ninja -n failed (${rc}):\n${plan}")
endif()
string(REGEX MATCHALL "Building CXX object [^\n]*" objects "${plan}")
string(REGEX MATCHALL "Linking CXX [^\n]*" links "${plan}")
foreach(line IN LISTS objects)
  if(NOT line MATCHES "kiln/(ir|frontend|passes|codegen|runtime|distributed)/|CMakeFiles/parent\\.dir/main")
    message(FATAL_ERROR "a build of the parent would compile more than kiln's libraries: ${line}")
  endif()
endforeach()
foreach(line IN LISTS links)
  if(NOT line MATCHES "libkiln\\.so|libkiln_distributed\\.so|executable parent$")
    message(FATAL_ERROR "a build of the parent would link more than kiln's libraries: ${line}")
  endif()
endforeach()
list(LENGTH objects n_objects)
list(LENGTH links n_links)
message(STATUS "the parent's build: ${n_objects} objects, ${n_links} links")

execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR} --target CMakeFiles/parent.dir/main.cpp.o
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "compiling the parent's program against kiln::kiln failed (${rc}):\n${out}\n${err}")
endif()
