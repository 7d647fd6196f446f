# cli_verdict.cmake - no green run without evidence (DESIGN.md "Statuses"):
# a run that executed nothing exits 77 saying why, an unknown profile is a
# usage error, --require-all turns NOT_SUPPORTED/SKIP into failures, the
# summary always has the executed / not supported / skipped line, and the
# JSON report carries the executed count and require_all.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/cli_verdict.cmake
cmake_minimum_required(VERSION 3.25)
set(plugin "${BIN}/plugins/example.so") # implements neg and add on masked float32 only
if(NOT EXISTS "${plugin}")
  message(FATAL_ERROR "${plugin} does not exist")
endif()
set(W "${BIN}/cli_verdict.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")

include("${CMAKE_CURRENT_LIST_DIR}/lib/expect_run.cmake")

# Every selected case NOT_SUPPORTED: nothing checked, so not green (77) ...
expect_run(77 "SKIP: no case executed \\(2 not supported by backend"
  run --backend "${plugin}" --filter "exp.masked.f*.basic" --golden "${SRC}/golden/unary.h5")
# ... and a failure under --require-all, each case printed as such.
expect_run(1 "NOT_SUPPORTED  exp.masked.f32.basic\n[^\n]*a failure under --require-all.*0 passed, 2 failed, 0 skipped"
  run --backend "${plugin}" --filter "exp.masked.f*.basic" --require-all --golden "${SRC}/golden/unary.h5")
# Some executed and passed, others not supported: green without, red with --require-all.
expect_run(0 "executed 1 of 2 cases; not supported 1, skipped 0.*1 passed, 0 failed, 1 skipped"
  run --backend "${plugin}" --filter "neg.masked.f*.basic" --golden "${SRC}/golden/unary.h5")
expect_run(1 "1 passed, 1 failed, 0 skipped"
  run --backend "${plugin}" --filter "neg.masked.f*.basic" --require-all --golden "${SRC}/golden/unary.h5")
# The reference executes every case of its profile (here of one file: the
# conformance.<family>.cpu tests run every file with --require-all, and a
# whole run here cost 4.5 of the ASan preset's 9.5 minutes).
expect_run(0 "executed [0-9]+ of [0-9]+ cases; not supported 0, skipped 0.*[0-9]+ passed, 0 failed, 0 skipped"
  run --require-all --golden "${SRC}/golden/reduce.h5")
# Profiles: a backend without a numpy_ma kernel table reports every numpy_ma
# case NOT_SUPPORTED (nothing executed: 77; a failure under --require-all);
# a misspelled profile is a usage error (2).
expect_run(77 "SKIP: no case executed \\([0-9]+ not supported by backend"
  run --backend "${plugin}" --profile numpy_ma --filter "neg.*" --golden "${SRC}/golden/numpy_ma.h5")
expect_run(1 "NOT_SUPPORTED  neg\\.masked\\.[a-z0-9]+\\.npma_[a-z_]+\n[^\n]*profile numpy_ma is not implemented"
  run --backend "${plugin}" --profile numpy_ma --filter "neg.*" --require-all --golden "${SRC}/golden/numpy_ma.h5")
expect_run(2 "unknown profile 'numpy-ma' \\(expected one of: torch, numpy_ma, all\\)" run --profile numpy-ma)
expect_run(0 "profile all, .*[0-9]+ passed, 0 failed" run --profile all --filter "neg.*" --golden "${SRC}/golden/unary.h5" --golden "${SRC}/golden/numpy_ma.h5")
expect_run(2 "unknown profile" list --profile torchh)
# Poison re-runs: on by default, counted in the summary, off with --no-poison.
# (Each run reads one golden file: a run over all of them costs 8 s, 25 s
# under ASan, and says nothing more here.)
expect_run(0 "poison re-runs: 7 per case" run --filter "amin.*" --golden "${SRC}/golden/reduce.h5")
expect_run(0 "poison re-runs: 0 per case" run --filter "amin.*" --no-poison --golden "${SRC}/golden/reduce.h5")
expect_run(0 "poison re-runs: 3 per case" run --filter "amin.*" --poison-runs 3 --golden "${SRC}/golden/reduce.h5")
expect_run(2 "--poison-runs needs a count from 0 to 7" run --poison-runs 8)

# The JSON report of a --require-all run says so and counts what executed.
execute_process(COMMAND "${MTCS}" run --backend "${plugin}" --filter "neg.masked.f*.basic"
  --golden "${SRC}/golden/unary.h5" --require-all --report-json "${W}/r.json" --junit "${W}/j.xml" RESULT_VARIABLE rc
  OUTPUT_QUIET ERROR_QUIET)
file(READ "${W}/r.json" json)
string(JSON req GET "${json}" require_all)
string(JSON executed GET "${json}" totals executed)
string(JSON failed GET "${json}" totals failed)
if(NOT req STREQUAL "ON" OR NOT executed EQUAL 1 OR NOT failed EQUAL 1)
  message(SEND_ERROR "JSON: require_all=${req} executed=${executed} failed=${failed}, expected ON 1 1")
endif()
file(READ "${W}/j.xml" junit)
if(NOT junit MATCHES "<failure type=\"NOT_SUPPORTED\"")
  message(SEND_ERROR "JUnit under --require-all: the NOT_SUPPORTED case is not a <failure>:\n${junit}")
endif()
