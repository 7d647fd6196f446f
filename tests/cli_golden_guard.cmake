# cli_golden_guard.cmake - `mtcs` checks every golden file before parsing it
# (conformance/golden_guard.c, spec/golden-format.md "Reading a file safely"):
# a file of the golden directory must match its MANIFEST sha256, and a file
# that crashes or hangs libhdf5 is exit 2 naming the file, never a signal.
#   cmake -DMTCS=path/to/mtcs -DSRC=source-dir -DBIN=build-dir -P tests/cli_golden_guard.cmake
cmake_minimum_required(VERSION 3.25)
foreach(v MTCS SRC BIN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cli_golden_guard.cmake needs -D${v}=...")
  endif()
endforeach()
file(GLOB goldens "${SRC}/golden/*.h5")
if(NOT goldens OR NOT EXISTS "${SRC}/golden/MANIFEST")
  message(STATUS "SKIP: no committed goldens and MANIFEST to check against")
  return()
endif()

set(W "${BIN}/cli_golden_guard.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}/gd")

# expect_run(<rc> <regex on stdout+stderr or ""> args...)
function(expect_run want_rc want_re)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  string(REPLACE ";" " " shown "${ARGN}")
  if(NOT rc STREQUAL "${want_rc}")
    message(SEND_ERROR "${shown}: exit ${rc}, expected ${want_rc}\n${out}${err}")
  elseif(want_re AND NOT "${out}${err}" MATCHES "${want_re}")
    message(SEND_ERROR "${shown}: output lacks /${want_re}/:\n${out}${err}")
  else()
    message(STATUS "ok: ${shown} -> ${rc}")
  endif()
endfunction()

# A copy of the golden directory passes as it is. (Every file's sha256 is
# checked when the directory is read, before any case runs: --filter keeps
# the run to a few cases; the whole conformance is conformance.*'s.)
set(few --filter "neg.masked.f32.*")
file(COPY ${goldens} "${SRC}/golden/MANIFEST" DESTINATION "${W}/gd")
expect_run(0 "" "${MTCS}" run --golden-dir "${W}/gd" ${few})

# One byte changed: exit 2 naming the file, both hashes and what to do.
file(READ "${SRC}/golden/MANIFEST" manifest)
string(REGEX MATCH "masked\\.h5 [0-9]+ ([0-9a-f]+)" _ "${manifest}")
set(want_hash "${CMAKE_MATCH_1}")
# (python3: the build requires it; cmake cannot write a binary byte)
find_program(PY NAMES python3)
if(PY)
  execute_process(COMMAND "${PY}" -c
    "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[1500]^=0xff; open(p,'wb').write(b)"
    "${W}/gd/masked.h5")
  expect_run(2 "masked\\.h5: corrupt or changed file: its sha256 is [0-9a-f]+, .*MANIFEST says ${want_hash} \\(regenerate .*--golden"
             "${MTCS}" run --golden-dir "${W}/gd")
  expect_run(2 "masked\\.h5: corrupt or changed" "${MTCS}" list --golden-dir "${W}/gd")
  # Named with --golden: the MANIFEST beside it does not vouch for the changed
  # copy, which is no error; the copy is parsed (in a child) like any file.
  execute_process(COMMAND "${MTCS}" run --golden "${W}/gd/masked.h5" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc MATCHES "^[012]$" OR "${out}${err}" MATCHES "sha256")
    message(SEND_ERROR "mtcs run --golden <changed copy>: exit ${rc} (want 0, 1 or 2, no MANIFEST check)\n${out}${err}")
  endif()
  file(COPY "${SRC}/golden/masked.h5" DESTINATION "${W}/gd")
endif()

# A file of the directory that MANIFEST does not list.
file(COPY "${SRC}/golden/masked.h5" DESTINATION "${W}/gd/extra")
file(RENAME "${W}/gd/extra/masked.h5" "${W}/gd/extra.h5")
expect_run(2 "extra\\.h5: not listed in .*MANIFEST" "${MTCS}" run --golden-dir "${W}/gd")
file(REMOVE "${W}/gd/extra.h5")

# No MANIFEST (a third party's directory): a warning, and the run goes on
# (every file then parsed in a child first: one small file is enough here).
file(MAKE_DIRECTORY "${W}/nm")
file(COPY "${SRC}/golden/masked.h5" DESTINATION "${W}/nm")
expect_run(0 "warning: .*MANIFEST does not exist: the sha256 of the golden files is not checked"
           "${MTCS}" run --golden-dir "${W}/nm" --filter "masked_tensor.coo.*")

# Files that crash or hang libhdf5 itself (found by fuzz_golden): exit 2.
file(GLOB crashers "${SRC}/tests/fuzz/regressions/hdf5-crash/*")
foreach(f IN LISTS crashers)
  get_filename_component(name "${f}" NAME)
  string(REPLACE "." "\\." re "${name}")
  expect_run(2 "${re}: corrupt file \\(" ${CMAKE_COMMAND} -E env MTCS_CHECK_TIMEOUT=3
             "${MTCS}" run --golden "${f}")
endforeach()

file(REMOVE_RECURSE "${W}")
