# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the API reference as the `docs` target does (cmake/KilnDocs.cmake) and fails on any Doxygen warning:
# broken markup or links in the headers' comments and in docs/*.md.
# Invoked by ctest: cmake -DDOXYGEN=... -DDOXYFILE=... -DLOG=... -P api_docs_test.cmake
file(REMOVE ${LOG})
get_filename_component(dir ${DOXYFILE} DIRECTORY)
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "doxygen failed (${rc}):\n${out}${err}")
endif()
file(READ ${LOG} warnings)
if(NOT warnings STREQUAL "")
  message(FATAL_ERROR "Doxygen warnings:\n${warnings}")
endif()
