# cli_errors.cmake - `mtcs` exit codes and messages for usage and input
# errors, and that an aborted run leaves no report behind.
#   cmake -DMTCS=path/to/mtcs -DSRC=source-dir -DBIN=build-dir -P tests/cli_errors.cmake
# Exit codes (DESIGN.md): 0 pass, 1 failures, 2 usage/input error, 77 skipped.

cmake_minimum_required(VERSION 3.25)
foreach(v MTCS SRC BIN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cli_errors.cmake needs -D${v}=...")
  endif()
endforeach()

set(W "${BIN}/cli_errors.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
set(failures 0)

include("${CMAKE_CURRENT_LIST_DIR}/lib/expect_run.cmake")

# ---- usage errors: exit 2 ---------------------------------------------------
expect_run(2 "unknown option '--bogus'" run --bogus)
expect_run(2 "unknown command 'frobnicate'" frobnicate)
expect_run(2 "usage:")
expect_run(2 "--timeout needs a number of seconds > 0" run --timeout 0)
expect_run(2 "--timeout needs" run --timeout abc)
expect_run(2 "--golden needs a file" run --golden)
expect_run(2 "unknown backend 'tpu'" run --backend tpu)
expect_run(0 "exit codes:.*77.*EXPECTED_DIVERGENCE|EXPECTED_DIVERGENCE.*exit codes:.*77" --help)
expect_run(0 "adagrad_sparse" ops)
expect_run(2 "--batch needs a count of cases from 1 to 65536, not '0'" run --batch 0)
expect_run(2 "--batch needs a count of cases from 1 to 65536, not '9x'" run --batch 9x)
expect_run(2 "--batch is not an option of mtcs validate" validate --adapter true --batch 4)
# A batch of one case per worker and one worker for the whole file: the same
# verdicts (the default, 64, runs in every other test)
foreach(b 1 65536)
  expect_run(0 "102 passed, 0 failed" run --batch ${b} --require-all --exact-version
             --level strict --golden "${SRC}/golden/masked.h5")
endforeach()

# ---- golden files that cannot be read: exit 2, naming the file ---------------
expect_run(2 "nonexistent\\.h5: No such file" run --golden "${W}/nonexistent.h5")
expect_run(2 "nonexistent\\.h5" list --golden "${W}/nonexistent.h5")

file(WRITE "${W}/notes.h5" "these are not the golden files you are looking for\n")
expect_run(2 "notes\\.h5: not an HDF5 file" run --golden "${W}/notes.h5")

# A truncated file: the HDF5 signature alone, and (when there are goldens) the
# first half of a real golden file.
string(ASCII 137 72 68 70 13 10 26 10 signature)
file(WRITE "${W}/signature_only.h5" "${signature}")
expect_run(2 "signature_only\\.h5" run --golden "${W}/signature_only.h5")
file(GLOB goldens "${SRC}/golden/*.h5")
if(goldens)
  list(GET goldens 0 g0)
  file(SIZE "${g0}" size)
  math(EXPR half "${size} / 2")
  execute_process(COMMAND head -c ${half} "${g0}" OUTPUT_FILE "${W}/truncated.h5" RESULT_VARIABLE hrc)
  if(hrc EQUAL 0)
    # HDF5's most specific message, not its outermost "unable to open file"
    expect_run(2 "truncated\\.h5: cannot open as HDF5 \\(corrupt or truncated file\\?\\) \\(HDF5: truncated file: eof = [0-9]+"
               run --golden "${W}/truncated.h5")
  endif()
else()
  message(STATUS "note: no ${SRC}/golden/*.h5 yet: the truncated-golden, filter and report checks that need one are not run")
endif()

# An empty golden directory.
file(MAKE_DIRECTORY "${W}/empty")
expect_run(2 "no golden files" run --golden-dir "${W}/empty")
# A golden directory reads its *.h5 but hidden ones (an editor's or a copy's
# leftovers): a one-letter name is read, a hidden non-HDF5 file is not.
file(MAKE_DIRECTORY "${W}/dir")
file(COPY_FILE "${SRC}/golden/masked.h5" "${W}/dir/m.h5")
file(WRITE "${W}/dir/.m.h5" "a hidden leftover, not an HDF5 file\n")
expect_run(0 "102 passed, 0 failed" run --golden-dir "${W}/dir" --require-all)
# mtcs list: one line per case, an op this mtcs knows unmarked, and the
# count of what it listed, in the singular too
expect_run(0 "fill_nan +to_tensor +MASK-3 +torch +forward +ok\n1 case in 1 golden file\n"
           list --golden "${W}/dir/m.h5" --filter "to_tensor.masked.f32.fill_nan")
expect_run(0 "\n102 cases in 1 golden file\n" list --golden "${W}/dir/m.h5")

# ---- backends -----------------------------------------------------------------
# cuda: skipped (77) on a machine without a device or a build without CUDA.
execute_process(COMMAND "${MTCS}" run --backend cuda --filter "*" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
if(rc EQUAL 77)
  if(NOT "${out}${err}" MATCHES "SKIP: cuda backend: ")
    message(SEND_ERROR "mtcs run --backend cuda: exit 77 without 'SKIP: cuda backend: why':\n${out}${err}")
  else()
    message(STATUS "ok: mtcs run --backend cuda -> 77 (${out})")
  endif()
elseif(rc EQUAL 0 OR rc EQUAL 1)
  message(STATUS "ok: mtcs run --backend cuda ran on a device (exit ${rc})")
else()
  message(SEND_ERROR "mtcs run --backend cuda: exit ${rc}, expected 77 (or 0/1 with a device)\n${out}${err}")
endif()

# Plugins that are not plugins.
file(WRITE "${W}/fake.so" "not an ELF file\n")
expect_run(2 "cannot load plugin .*fake\\.so" run --backend "${W}/fake.so")
expect_run(2 "plugin .*missing\\.so" run --backend "${W}/missing.so")

# ---- reports: an unwritable target fails first and leaves nothing ---------------
expect_run(2 "cannot write report .*no/such/dir/r\\.json" run --report-json "${W}/no/such/dir/r.json")
expect_run(2 "cannot write report .*no/such/dir/j\\.xml" run --junit "${W}/no/such/dir/j.xml")
# A run that aborts on an input error writes no report, and no temporary file.
expect_run(2 "notes\\.h5" run --golden "${W}/notes.h5" --report-json "${W}/r.json" --junit "${W}/j.xml")
file(GLOB leftovers "${W}/r.json*" "${W}/j.xml*")
if(leftovers)
  message(SEND_ERROR "an aborted run left report files behind: ${leftovers}")
endif()

# ---- filters ----------------------------------------------------------------------
if(goldens) # one file: a filter matching nothing in it is the same error in any
  expect_run(2 "no case matches --filter 'no.such.case.\\*'" run --golden "${g0}" --filter "no.such.case.*")
  expect_run(2 "no case matches" list --golden "${g0}" --filter "no.such.case.*")
  expect_run(2 "no case matches" run --golden "${g0}" --filter "no.such.case.*" --report-json "${W}/f.json")
  if(EXISTS "${W}/f.json")
    message(SEND_ERROR "a run that ran nothing wrote a report")
  endif()
endif()

file(REMOVE_RECURSE "${W}")
