# cli_torch_versions.cmake - `mtcs run --torch-version V`: a case's
# expectation is torch V's result (its outputs@torch-V group or error@torch-V
# attribute, else its outputs / error); a result that matches another
# recorded version is EXPECTED_DIVERGENCE naming that version; a V that no
# file and no case records is a usage error listing the known versions. The
# version is stated in the run header and the JSON report. A copy of
# golden/optim.h5 gets variants with h5edit (tests/tools/): hard links to
# other cases' outputs (what "another torch" returned) and error@ attributes.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -DH5EDIT=... -P tests/cli_torch_versions.cmake

cmake_minimum_required(VERSION 3.25)
foreach(v MTCS SRC BIN H5EDIT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cli_torch_versions.cmake needs -D${v}=...")
  endif()
endforeach()
set(golden "${SRC}/golden/optim.h5")
if(NOT EXISTS "${golden}")
  message(FATAL_ERROR "${golden} does not exist (committed golden files are part of the tree)")
endif()

set(W "${BIN}/cli_torch_versions.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
set(a adagrad_dense.dense.f32.random)          # ok
set(b adagrad_dense.dense.f32.random_maximize) # ok, same shapes, other values
set(e adagrad_dense.dense.f32.negative_lr)     # expect=error, INVALID_ARGUMENT

include("${CMAKE_CURRENT_LIST_DIR}/lib/h5edit.cmake") # fresh(), h5edit()

include("${CMAKE_CURRENT_LIST_DIR}/lib/expect_run.cmake")

# The fixture: torch 1.0.0 returned b's outputs for a, and outputs (a's)
# for the error case e; torch 1.1.0 raised INVALID_ARGUMENT on a.
fresh(versions)
set(v "${copy}")
h5edit("${v}" link "/cases/${b}/outputs" "/cases/${a}/outputs@torch-1.0.0")
h5edit("${v}" link "/cases/${a}/outputs" "/cases/${e}/outputs@torch-1.0.0")
h5edit("${v}" attr-str "/cases/${a}" "error@torch-1.1.0" INVALID_ARGUMENT)
set(run run --golden "${v}" --no-poison -v)

# Default: the file's own torch; a and e pass as before.
expect_run(0 "PASS +${e}.*PASS +${a}" ${run} --filter "${a}" --filter "${e}")
if(NOT last_output MATCHES "level semantic, torch 2[^ ]*, 2 cases")
  message(SEND_ERROR "the run header does not state the file's torch version:\n${last_output}")
endif()
expect_run(0 "PASS +${b}" ${run} --filter "${b}")

# --torch-version 1.0.0: a's expectation is b's outputs; our result is the
# file's torch's, an expected divergence that names it.
expect_run(0 "EXPECTED_DIVERGENCE +${a} +\\(matches outputs \\(torch 2[^ ]*, the file's version\\); differs from outputs@torch-1\\.0\\.0 \\(torch 1\\.0\\.0\\), the expectation of torch 1\\.0\\.0: output 0"
  ${run} --filter "${a}" --torch-version 1.0.0 --report-json "${W}/r.json")
if(NOT last_output MATCHES "level semantic, torch 1\\.0\\.0 \\(--torch-version\\), 1 case")
  message(SEND_ERROR "the run header does not state --torch-version 1.0.0:\n${last_output}")
endif()
file(READ "${W}/r.json" json)
if(NOT json MATCHES "\"torch_version\": \"1\\.0\\.0\",\n  \"torch_version_requested\": true")
  message(SEND_ERROR "the JSON report does not state --torch-version 1.0.0:\n${json}")
endif()
if(NOT json MATCHES "\"EXPECTED_DIVERGENCE\": 1")
  message(SEND_ERROR "the JSON report does not count the divergence:\n${json}")
endif()
# ... and e expects outputs: raising as the file's torch did is a divergence.
expect_run(0 "EXPECTED_DIVERGENCE +${e} +\\(matches the error \\(torch 2[^ ]*, the file's version\\); differs from outputs@torch-1\\.0\\.0"
  ${run} --filter "${e}" --torch-version 1.0.0)
# A case without a 1.0.0 variant expects its outputs.
expect_run(0 "PASS +${b}" ${run} --filter "${b}" --torch-version 1.0.0)

# --torch-version 1.1.0 (or its label): a must raise INVALID_ARGUMENT.
expect_run(0 "EXPECTED_DIVERGENCE +${a} +\\(matches outputs \\(torch 2[^ ]*, the file's version\\); differs from error@torch-1\\.1\\.0 \\(torch 1\\.1\\.0\\), the expectation of torch 1\\.1\\.0: expected error INVALID_ARGUMENT, got OK"
  ${run} --filter "${a}" --torch-version torch-1.1.0)
# --exact-version: the same result, held to torch 1.1.0 alone, is a FAIL
# naming what it matched (our backends and the mutants run this way).
expect_run(1 "FAIL +${a}[^\n]*\n +matches outputs \\(torch 2[^ ]*, the file's version\\), not error@torch-1\\.1\\.0 \\(torch 1\\.1\\.0\\), the expectation of torch 1\\.1\\.0 \\(--exact-version\\)"
  ${run} --filter "${a}" --torch-version torch-1.1.0 --exact-version)
expect_run(0 "PASS +${b}" ${run} --filter "${b}" --exact-version)

# The default report states the files' own version, not requested.
expect_run(0 "" ${run} --filter "${b}" --report-json "${W}/d.json")
file(READ "${W}/d.json" json)
if(NOT json MATCHES "\"torch_version\": \"2[^\"]*\",\n  \"torch_version_requested\": false")
  message(SEND_ERROR "the JSON report does not state the files' version:\n${json}")
endif()

# A version nobody records: exit 2 with the known ones; a non-version: exit 2.
expect_run(2 "--torch-version 9\\.9: no golden file or case records results of torch 9\\.9; the 1 golden file know: 1\\.0\\.0, 1\\.1\\.0, (1\\.13\\.1, )?2"
  ${run} --torch-version 9.9)
expect_run(2 "--torch-version 'v2' is not a torch version" ${run} --torch-version v2)

# ---- bad error@ attributes are input errors ------------------------------------------
fresh(err_ok)
h5edit("${copy}" attr-str "/cases/${a}" "error@torch-1.2.0" OK)
expect_run(2 "err_ok\\.h5: case ${a}: error@torch-1\\.2\\.0: 'OK' is not an error status" run --golden "${copy}")
fresh(err_label)
h5edit("${copy}" attr-str "/cases/${a}" "error@v2" INVALID_ARGUMENT)
expect_run(2 "err_label\\.h5: case ${a}: error@v2: output variant label 'v2' does not name a torch version" run --golden "${copy}")
fresh(err_both)
h5edit("${copy}" link "/cases/${b}/outputs" "/cases/${a}/outputs@torch-1.0.0")
h5edit("${copy}" attr-str "/cases/${a}" "error@torch-1.0.0" INVALID_ARGUMENT)
expect_run(2 "err_both\\.h5: case ${a}: error@torch-1\\.0\\.0: the case has both outputs@torch-1\\.0\\.0 and error@torch-1\\.0\\.0" run --golden "${copy}")

file(REMOVE_RECURSE "${W}")
