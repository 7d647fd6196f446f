# perf/smoke_runs.cmake - every case perf.smoke's options list on the CPU
# (dev cpu1) is timed, none skipped: mtcs_bench times a case only after its
# first step passed the check against the reference (a failed check skips
# it with an error and makes the run fail), so a case that is listed but
# not timed is a gate that let nothing through, or through unchecked.
#   cmake -DBENCH=<mtcs_bench> "-DARGS=<options;...>" -P smoke_runs.cmake
string(REPLACE ";" " " args "${ARGS}")
execute_process(COMMAND ${BENCH} ${ARGS} --devs=cpu1 --benchmark_list_tests=true
  OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "smoke_runs: mtcs_bench ${args} --devs=cpu1 --benchmark_list_tests=true exited ${rc}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${listed}")
list(LENGTH lines n_listed)
execute_process(COMMAND ${BENCH} ${ARGS} --devs=cpu1 --benchmark_min_time=0.001
  --benchmark_format=json OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "smoke_runs: mtcs_bench ${args} --devs=cpu1 exited ${rc}: ${err}")
endif()
string(REGEX MATCHALL "\"error_occurred\": true" errs "${out}")
list(LENGTH errs n_err)
string(REGEX MATCHALL "\"run_type\": \"iteration\"" runs "${out}")
list(LENGTH runs n_run)
if(n_err GREATER 0 OR NOT n_run EQUAL n_listed)
  message(FATAL_ERROR "smoke_runs: mtcs_bench ${args} --devs=cpu1 lists ${n_listed} cases "
    "and timed ${n_run}, ${n_err} of them skipped with an error")
endif()
message(STATUS "smoke_runs: all ${n_listed} cases of dev cpu1 checked and timed")
