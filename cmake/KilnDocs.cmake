# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# `cmake --build build --target docs`: the API reference from the public headers (Doxygen), written to
# build/docs/html/index.html with docs/getting_started.md as its front page. Only when kiln is the top-level
# project (a parent's `docs` target keeps its name) and Doxygen is installed. Doxygen's warnings go to
# build/docs/warnings.log; the api_docs test fails on any.
find_package(Doxygen QUIET)
if(NOT KILN_TOP_LEVEL OR NOT DOXYGEN_FOUND)
  return()
endif()
set(DOXYGEN_PROJECT_NAME kiln)
set(DOXYGEN_PROJECT_NUMBER ${PROJECT_VERSION})
set(DOXYGEN_PROJECT_BRIEF "A JIT-compiling kernel DSL for C++20")
set(DOXYGEN_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/docs)
set(DOXYGEN_STRIP_FROM_INC_PATH ${PROJECT_SOURCE_DIR}/include)
set(DOXYGEN_STRIP_FROM_PATH ${PROJECT_SOURCE_DIR})
set(DOXYGEN_FULL_PATH_NAMES YES)
set(DOXYGEN_EXCLUDE_SYMBOLS "kiln::detail" "kiln::detail::*" "kiln::cuda::detail" "kiln::cuda::detail::*" "KILN_*")
set(DOXYGEN_USE_MDFILE_AS_MAINPAGE ${PROJECT_SOURCE_DIR}/docs/getting_started.md)
set(DOXYGEN_EXTRACT_ALL YES)               # every public declaration, documented or not
set(DOXYGEN_WARN_IF_UNDOCUMENTED NO)       # ... so an undocumented one is not a warning; broken markup is
set(DOXYGEN_WARN_LOGFILE ${PROJECT_BINARY_DIR}/docs/warnings.log)
set(DOXYGEN_GENERATE_LATEX NO)
set(DOXYGEN_QUIET YES)
set(DOXYGEN_MARKDOWN_SUPPORT YES)
set(DOXYGEN_PREDEFINED "KILN_DOXYGEN=1")
file(MAKE_DIRECTORY ${DOXYGEN_OUTPUT_DIRECTORY})  # for the warnings log, before Doxygen makes it
file(GLOB kiln_doc_pages ${PROJECT_SOURCE_DIR}/docs/*.md)  # the user guide, linked from the front page
doxygen_add_docs(docs ${PROJECT_SOURCE_DIR}/include/kiln ${kiln_doc_pages}
                 COMMENT "kiln API reference (Doxygen): ${PROJECT_BINARY_DIR}/docs/html/index.html")
if(KILN_BUILD_TESTS AND NOT KILN_SANITIZE)  # a few seconds; CI installs Doxygen (tools/setup.sh)
  add_test(NAME api_docs
           COMMAND ${CMAKE_COMMAND} -DDOXYGEN=$<TARGET_FILE:Doxygen::doxygen> -DDOXYFILE=${CMAKE_CURRENT_BINARY_DIR}/Doxyfile.docs
                   -DLOG=${DOXYGEN_WARN_LOGFILE} -P ${PROJECT_SOURCE_DIR}/tests/api_docs_test.cmake)
endif()
