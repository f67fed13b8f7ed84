# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Finds kiln's dependencies and gathers the private ones into `kiln_private_deps`.
add_library(kiln_private_deps INTERFACE)

find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
target_link_libraries(kiln_private_deps INTERFACE OpenMP::OpenMP_CXX fmt::fmt Threads::Threads ${CMAKE_DL_LIBS})

# libsodium: the keyed BLAKE2b that seals cache entries (runtime/cache/secret.hpp). The system's (pkg-config),
# else a copy unpacked into .deps/sodium by tools/fetch_gpu_deps.sh for machines without apt; the build tree's
# RPATH then finds its shared library at run time.
add_library(kiln_sodium INTERFACE)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(KILN_SODIUM QUIET IMPORTED_TARGET libsodium)
endif()
if(KILN_SODIUM_FOUND)
  target_link_libraries(kiln_sodium INTERFACE PkgConfig::KILN_SODIUM)
  message(STATUS "kiln: libsodium ${KILN_SODIUM_VERSION}")
else()
  set(carried ${PROJECT_SOURCE_DIR}/.deps/sodium/usr)
  find_path(KILN_SODIUM_INCLUDE_DIR sodium.h HINTS ${carried}/include)
  find_library(KILN_SODIUM_LIBRARY NAMES sodium libsodium.so.23 HINTS ${carried}/lib/x86_64-linux-gnu ${carried}/lib)
  if(NOT KILN_SODIUM_INCLUDE_DIR OR NOT KILN_SODIUM_LIBRARY)
    message(FATAL_ERROR "libsodium not found: install libsodium-dev (tools/setup.sh), or unpack it into .deps/sodium "
                        "(tools/fetch_gpu_deps.sh)")
  endif()
  target_include_directories(kiln_sodium SYSTEM INTERFACE ${KILN_SODIUM_INCLUDE_DIR})
  target_link_libraries(kiln_sodium INTERFACE ${KILN_SODIUM_LIBRARY})
  message(STATUS "kiln: libsodium at ${KILN_SODIUM_LIBRARY}")
endif()
target_link_libraries(kiln_private_deps INTERFACE kiln_sodium)

set(KILN_HAVE_LLVM OFF)
if(KILN_ENABLE_LLVM)
  find_package(LLVM 19.1 CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/llvm)
  message(STATUS "kiln: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
  add_library(kiln_llvm INTERFACE)
  target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(kiln_llvm INTERFACE ${LLVM_DEFINITIONS})
  set(kiln_llvm_static OFF)
  if(NOT KILN_LLVM_STATIC STREQUAL "OFF")
    find_program(KILN_LLVM_CONFIG llvm-config HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
    # llvm-config fails when a component's archive is missing: AUTO then links the shared libLLVM.
    if(KILN_LLVM_CONFIG)
      execute_process(COMMAND ${KILN_LLVM_CONFIG} --link-static --libs orcjit native passes bitreader bitwriter
                      OUTPUT_VARIABLE llvm_libs OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE llvm_static_rc
                      ERROR_QUIET)
      if(llvm_static_rc EQUAL 0)
        set(kiln_llvm_static ON)
      endif()
    endif()
    if(NOT kiln_llvm_static AND KILN_LLVM_STATIC STREQUAL "ON")
      message(FATAL_ERROR "KILN_LLVM_STATIC=ON: LLVM's static component libraries were not found (llvm-config --link-static)")
    endif()
  endif()
  if(kiln_llvm_static)
    message(STATUS "kiln: LLVM linked statically into libkiln")
    execute_process(COMMAND ${KILN_LLVM_CONFIG} --link-static --system-libs
                    OUTPUT_VARIABLE llvm_syslibs OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    execute_process(COMMAND ${KILN_LLVM_CONFIG} --libdir
                    OUTPUT_VARIABLE llvm_libdir OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    separate_arguments(llvm_libs UNIX_COMMAND "${llvm_libs}")
    separate_arguments(llvm_syslibs UNIX_COMMAND "${llvm_syslibs}")
    target_link_directories(kiln_private_deps INTERFACE ${llvm_libdir})
    target_link_libraries(kiln_private_deps INTERFACE ${llvm_libs} ${llvm_syslibs})
  else()
    target_link_libraries(kiln_private_deps INTERFACE LLVM)
  endif()
  set(KILN_HAVE_LLVM ON)
  set(KILN_LLVM_VERSION ${LLVM_PACKAGE_VERSION})
endif()

# The GPU backend needs only the CUDA headers at build time: libcuda and libnvrtc are opened at run time, so
# a kiln build runs on machines without a driver or toolkit (the GPU target then reports DeviceError).
set(KILN_HAVE_CUDA OFF)
if(NOT KILN_ENABLE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  # CUDAToolkit_INCLUDE_DIRS is a list with newer CMake and CUDA (the headers and CCCL's), so search it.
  if(CUDAToolkit_FOUND)
    find_path(KILN_CUDA_H_DIR cuda.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
    find_path(KILN_NVRTC_H_DIR nvrtc.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
  endif()
  if(CUDAToolkit_FOUND AND KILN_CUDA_H_DIR AND KILN_NVRTC_H_DIR)
    set(KILN_HAVE_CUDA ON)
    set(KILN_CUDA_VERSION ${CUDAToolkit_VERSION})
    message(STATUS "kiln: CUDA toolkit ${CUDAToolkit_VERSION} headers at ${CUDAToolkit_INCLUDE_DIRS}")
  elseif(KILN_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KILN_ENABLE_CUDA=ON but the CUDA toolkit (cuda.h, nvrtc.h) was not found "
                        "(CUDAToolkit found: ${CUDAToolkit_FOUND}; include directories: ${CUDAToolkit_INCLUDE_DIRS})")
  endif()
endif()
