# expect_run.cmake - the helper of the CLI tests (tests/cli_*.cmake), which
# include it. Needs MTCS.
#   expect_run(<expected exit code> <regex on stdout+stderr, or ""> args...)
# Runs `mtcs args...`; a different exit code or output without a match of
# the regex is a SEND_ERROR (the script goes on and fails at the end).
# Sets last_output and last_rc in the caller.
function(expect_run want_rc want_re)
  execute_process(COMMAND "${MTCS}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 300)
  set(all "${out}${err}")
  string(REPLACE ";" " " shown "${ARGN}")
  if(NOT rc STREQUAL "${want_rc}")
    message(SEND_ERROR "mtcs ${shown}: exit ${rc}, expected ${want_rc}\n${all}")
  elseif(want_re AND NOT all MATCHES "${want_re}")
    message(SEND_ERROR "mtcs ${shown}: output lacks /${want_re}/:\n${all}")
  else()
    message(STATUS "ok: mtcs ${shown} -> ${rc}")
  endif()
  set(last_output "${all}" PARENT_SCOPE)
  set(last_rc "${rc}" PARENT_SCOPE)
endfunction()
