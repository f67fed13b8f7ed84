# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs `kiln-bench --json` on one small row (one with members of its own) and parses every line as JSON: the
# lines are what bench/peers/run_cpu.py reads. Invoked by ctest: cmake -DBENCH=... -P bench_json_test.cmake
execute_process(COMMAND ${BENCH} --json --n 10000 --reps 5 --filter softmax
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "kiln-bench failed (${rc}):\n${out}${err}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${out}")
list(LENGTH lines n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one JSON line for softmax, got ${n}:\n${out}")
endif()
string(JSON name ERROR_VARIABLE bad GET "${lines}" name)
if(bad OR NOT name STREQUAL "softmax")
  message(FATAL_ERROR "not a JSON row named softmax (${bad}): ${lines}")
endif()
foreach(member kiln_s ref_s ratio compile_ms threads n peak_extra_bytes)
  string(JSON value ERROR_VARIABLE bad GET "${lines}" ${member})
  if(bad)
    message(FATAL_ERROR "the row lacks '${member}' (${bad}): ${lines}")
  endif()
endforeach()
