# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the kiln build tree into a fresh prefix, builds the consumer project against it and runs it.
# Invoked by ctest: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P install_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
# The license travels with the binaries (Apache-2.0 section 4(a)).
file(STRINGS ${WORK_DIR}/prefix/share/doc/kiln/LICENSE exception REGEX "LLVM Exceptions to the Apache 2.0 License")
if(NOT exception)
  message(FATAL_ERROR "the installed LICENSE is missing or lacks the LLVM exception")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G Ninja
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "${out}")
if(rc)
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
# kiln::distributed (find_package(kiln COMPONENTS distributed)) where kiln was built with MPI: 2 ranks.
file(GLOB_RECURSE distributed_targets ${WORK_DIR}/prefix/kilnDistributedTargets.cmake)
if(distributed_targets)
  if(NOT EXISTS ${WORK_DIR}/build/consumer_distributed)
    message(FATAL_ERROR "kiln was installed with kiln::distributed, but the consumer did not find the component")
  endif()
  if(NOT MPIEXEC)
    message(FATAL_ERROR "pass -DMPIEXEC=<mpiexec> to run the distributed consumer")
  endif()
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)  # CI runs as root in a container
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  set(ENV{KILN_NUM_THREADS} 1)
  execute_process(COMMAND ${MPIEXEC} -n 2 --oversubscribe ${WORK_DIR}/build/consumer_distributed
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}${err}")
  if(rc OR NOT out MATCHES "consumer_distributed: ok on 2 ranks")
    message(FATAL_ERROR "the distributed consumer failed: ${rc}")
  endif()
endif()
