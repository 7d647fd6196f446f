# plugin_example.cmake - the example plugin (conformance/plugins/example.c,
# built from spec/include alone) passes the golden cases of what it
# implements (neg, add on masked float32) and every other case is
# NOT_SUPPORTED: exit 0, "N passed, 0 failed, M skipped". Also checks that
# the JSON and JUnit reports agree with the printed summary.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/plugin_example.cmake

cmake_minimum_required(VERSION 3.25)
set(plugin "${BIN}/plugins/example.so")
set(goldens "${SRC}/golden/unary.h5" "${SRC}/golden/binary.h5")
foreach(f IN LISTS goldens ITEMS "${plugin}")
  if(NOT EXISTS "${f}")
    # Both are always built/committed: a missing one is a broken tree, not a skip.
    message(FATAL_ERROR "${f} does not exist")
  endif()
endforeach()

set(W "${BIN}/plugin_example.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
execute_process(
  COMMAND "${MTCS}" run --backend "${plugin}" --golden ${goldens} -v
          --report-json "${W}/run.json" --junit "${W}/junit.xml"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "example plugin: exit ${rc}, expected 0\n${out}${err}")
endif()
foreach(want "PASS  neg.masked.f32.basic" "PASS  add.masked_masked.f32.basic"
             "PASS  add.masked_masked.f32.mask_mismatch" "PASS  add.masked_scalar.f32.basic"
             "NOT_SUPPORTED  neg.masked.f64.basic" "NOT_SUPPORTED  exp.masked.f32.basic")
  string(FIND "${out}" "${want}" at)
  if(at LESS 0)
    message(SEND_ERROR "example plugin: output lacks '${want}'")
  endif()
endforeach()
if(NOT out MATCHES "\n([0-9]+) passed, 0 failed, ([0-9]+) skipped\n?$")
  message(FATAL_ERROR "example plugin: no final 'N passed, 0 failed, M skipped' line")
endif()
set(passed "${CMAKE_MATCH_1}")
set(skipped "${CMAKE_MATCH_2}")
if(passed LESS 1 OR skipped LESS 1)
  message(SEND_ERROR "example plugin: ${passed} passed, ${skipped} skipped: expected some of each")
endif()

# The JSON report says the same.
file(READ "${W}/run.json" json)
string(JSON backend GET "${json}" backend)
string(JSON n_pass GET "${json}" summary PASS)
string(JSON n_ns GET "${json}" summary NOT_SUPPORTED)
string(JSON n_fail GET "${json}" totals failed)
string(JSON n_cases LENGTH "${json}" cases)
string(JSON complete GET "${json}" complete)
math(EXPR total "${passed} + ${skipped}")
if(NOT backend STREQUAL "example" OR NOT n_pass EQUAL passed OR NOT n_ns EQUAL skipped
   OR NOT n_fail EQUAL 0 OR NOT n_cases EQUAL total OR NOT complete)
  message(SEND_ERROR "run.json disagrees: backend=${backend} PASS=${n_pass} NOT_SUPPORTED=${n_ns} "
                     "failed=${n_fail} cases=${n_cases} complete=${complete}; printed ${passed}/${skipped}")
endif()
string(JSON first_id GET "${json}" cases 0 id)
string(JSON first_status GET "${json}" cases 0 status)
message(STATUS "run.json: first case ${first_id} ${first_status}")

file(READ "${W}/junit.xml" xml)
string(REGEX MATCHALL "<testsuite " suites "${xml}")
list(LENGTH suites n_suites)
if(NOT n_suites EQUAL 2 OR NOT xml MATCHES "<testsuites name=\"mtcs\" tests=\"${total}\" failures=\"0\" errors=\"0\" skipped=\"${skipped}\"")
  message(SEND_ERROR "junit.xml: expected 2 testsuites, ${total} tests, ${skipped} skipped:\n${xml}")
endif()
file(GLOB leftovers "${W}/*.tmp.*")
if(leftovers)
  message(SEND_ERROR "temporary report files left behind: ${leftovers}")
endif()
file(REMOVE_RECURSE "${W}")
