# mutants.cmake - every mutant plugin (conformance/plugins/mutants/) breaks
# one rule; `mtcs run` must fail it (exit 1), and every failing case must be
# tagged with that rule: the suite catches the mistake and blames the right
# rule, and nothing else breaks.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/mutants.cmake
cmake_minimum_required(VERSION 3.25)
# mutant name -> the rule it breaks
set(MUTANTS
  mask_union=MASK-8
  log_masks_domain=MASK-5
  fill_zero=RED-3
  to_tensor_reads_data=MASK-3
  sparse_as_dense=ADA-2)

file(GLOB sources "${SRC}/conformance/plugins/mutants/*.c")
list(LENGTH sources n_sources)
list(LENGTH MUTANTS n_mutants)
if(NOT n_sources EQUAL n_mutants)
  message(FATAL_ERROR "${n_sources} mutant sources but ${n_mutants} entries in tests/mutants.cmake: "
                      "add the new mutant and the rule it breaks to MUTANTS")
endif()

set(bad 0)
foreach(entry IN LISTS MUTANTS)
  string(REPLACE "=" ";" kv "${entry}")
  list(GET kv 0 name)
  list(GET kv 1 rule)
  set(plugin "${BIN}/plugins/mutant_${name}.so")
  if(NOT EXISTS "${plugin}")
    message(FATAL_ERROR "${plugin} does not exist (is ${name}.c in conformance/plugins/mutants/?)")
  endif()
  execute_process(COMMAND "${MTCS}" run --backend "${plugin}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 1)
    message(SEND_ERROR "mutant ${name} (breaks ${rule}): exit ${rc}, expected 1 (caught)\n${out}${err}")
    set(bad 1)
    continue()
  endif()
  # FAIL/ERROR/CRASH/TIMEOUT <id> lines are followed by "    rules: A,B; ...".
  # ';' separates CMake list items: take it out of the text first.
  string(REPLACE ";" "|" text "\n${out}")
  string(REGEX MATCHALL "\n(FAIL|ERROR|CRASH|TIMEOUT)  [^\n]+\n[^\n]*\n    rules: [^|]*" hits "${text}")
  list(LENGTH hits n_failed)
  set(wrong "")
  foreach(h IN LISTS hits)
    string(REGEX MATCH "(FAIL|ERROR|CRASH|TIMEOUT)  ([^\n]+)" _ "${h}")
    set(id "${CMAKE_MATCH_2}")
    string(REGEX MATCH "rules: ([^|]*)" _ "${h}")
    string(REPLACE "," ";" rules "${CMAKE_MATCH_1}")
    # a kill under the runner's poison invariance (MASK-9) blames the right
    # thing too: the mutant let masked-out data reach a specified result
    if(NOT rule IN_LIST rules AND NOT "MASK-9" IN_LIST rules)
      list(APPEND wrong "${id} [${CMAKE_MATCH_1}]")
    endif()
  endforeach()
  if(n_failed EQUAL 0)
    message(SEND_ERROR "mutant ${name}: exit 1 but no failing case could be parsed:\n${out}")
    set(bad 1)
  elseif(wrong)
    message(SEND_ERROR "mutant ${name} breaks ${rule}, but these failing cases are not tagged "
                       "${rule}:\n  ${wrong}")
    set(bad 1)
  else()
    message(STATUS "ok: mutant ${name} caught by ${n_failed} cases, all tagged ${rule}")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "some mutants were not caught as expected")
endif()
