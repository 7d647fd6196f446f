# cli_levels.cmake - the two conformance levels (spec/SEMANTICS.md "Levels").
# A library that follows torch's documentation (masked-out output data is
# undefined) and fills fully masked reductions its own way passes at level
# semantic (the default) and fails at level strict, on exactly the cases
# that record torch's fill (RED-3); the reference passes both; the level is
# stated in the summary, the header, the JSON report and the JUnit report.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/cli_levels.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/lib/expect_run.cmake")
set(plugin "${BIN}/plugins/mutant_numpy_ma_fills.so") # numpy.ma's 1e20 / 0 fills
if(NOT EXISTS "${plugin}")
  message(FATAL_ERROR "${plugin} does not exist")
endif()
set(W "${BIN}/cli_levels.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
set(reduce "${SRC}/golden/reduce.h5")

expect_run(0 "level semantic; poison re-runs.*[0-9]+ passed, 0 failed, 0 skipped"
  run --backend "${plugin}" --golden "${reduce}" --require-all)
expect_run(0 "level semantic" run --backend "${plugin}" --golden "${reduce}" --level semantic)
expect_run(1 "FAIL  amin\\.masked\\.f32\\.fully_masked_all\n[^\n]*expected inf, got 1[.0-9]*e\\+20[^\n]*\n    rules: [^\n]*RED-3[^\n]*masked-out data checked.*level strict"
  run --backend "${plugin}" --golden "${reduce}" --level strict)
# The reference reproduces torch's fills: it passes at both levels.
expect_run(0 "0 failed" run --golden "${reduce}" --level strict --require-all)
expect_run(0 "0 failed" run --golden "${reduce}" --level semantic --require-all)
# The level is part of every report.
expect_run(1 "" run --backend "${plugin}" --golden "${reduce}" --level strict
  --report-json "${W}/run.json" --junit "${W}/junit.xml")
file(READ "${W}/run.json" json)
if(NOT json MATCHES "\"level\": \"strict\"")
  message(SEND_ERROR "run.json lacks \"level\": \"strict\":\n${json}")
endif()
file(READ "${W}/junit.xml" xml)
if(NOT xml MATCHES "<property name=\"level\" value=\"strict\"/>")
  message(SEND_ERROR "junit.xml lacks the level property")
endif()
# A misspelled level is a usage error, before anything runs.
expect_run(2 "unknown level 'strikt' \\(expected one of: semantic, strict\\)" run --level strikt)
expect_run(2 "needs|unknown level" run --level)
