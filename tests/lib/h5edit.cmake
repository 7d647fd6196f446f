# h5edit.cmake - helpers of the CLI tests that break copies of a golden file
# one attribute or link at a time (tests/tools/h5edit.c). The including
# script sets `golden` (the file to copy), W (its work directory) and passes
# -DH5EDIT=...
#   fresh(<name>)   a fresh copy of ${golden} at ${W}/<name>.h5, in ${copy}
#   h5edit(args...) runs h5edit; a failure stops the test (the fixture is wrong)
function(fresh name)
  file(COPY_FILE "${golden}" "${W}/${name}.h5")
  set(copy "${W}/${name}.h5" PARENT_SCOPE)
endfunction()

function(h5edit)
  execute_process(COMMAND "${H5EDIT}" ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "h5edit ${ARGN}: exit ${rc}: ${err}")
  endif()
endfunction()
