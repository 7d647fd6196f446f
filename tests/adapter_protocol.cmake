# adapter_protocol.cmake - `mtcs validate --adapter` (spec/adapter-protocol.md) against the
# C fixture adapter (tests/adapter_fixture.c: the CPU reference behind the protocol, honest
# or misbehaving on purpose), on golden/masked.h5 (90 cases; the to_tensor cases have
# masked inputs, so poison re-runs, the masked_tensor cases plain ones: one request each).
#   honest: the same verdicts as `mtcs run --backend cpu`, --require-all --level strict;
#   lie, lie-under-poison: FAIL (the latter blamed on MASK-9);
#   crash / hang / garbage at request N: CRASH / TIMEOUT / ERROR "adapter protocol" for
#     that case, the adapter restarted, the cases after it PASS, INCOMPLETE, exit 1;
#   three failed starts: the cases left not run, INCOMPLETE;
#   no-response-file, bad-output: ERROR naming the file (a verdict: not INCOMPLETE);
#   wrong-protocol, silent-hello, die-at-start, usage errors: exit 2 with the reason;
#   profiles the hello does not list: NOT_SUPPORTED, not sent; --expect, --repro-dir.
# Every JSON report must be valid JSON (python3 -m json.tool) and is read with string(JSON).
#   cmake -DMTCS=... -DSRC=... -DBIN=... -DADAPTER_FIXTURE=... -P tests/adapter_protocol.cmake
cmake_minimum_required(VERSION 3.25)
include("${SRC}/tests/lib/expect_run.cmake")
if(NOT ADAPTER_FIXTURE OR NOT EXISTS "${ADAPTER_FIXTURE}")
  message(FATAL_ERROR "ADAPTER_FIXTURE='${ADAPTER_FIXTURE}': the fixture adapter is not built")
endif()
find_program(PY NAMES python3 REQUIRED)
set(FX "${ADAPTER_FIXTURE}")
set(G "${SRC}/golden/masked.h5")
set(W "${BIN}/adapter_protocol.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}/tmp")
set(ENV{TMPDIR} "${W}/tmp") # where mtcs makes the adapter's directory: checked empty at the end
set(ENV{MTCS_TODAY} "2026-11-26")
# small deadlines: the hang and the silent hello must not make the test slow
set(T --case-timeout 2 --hello-timeout 3)
# 8 cases, one request each, in this order (0d and one_element left out):
# 1d 3d all_false basic dtype_and_shape_mismatch float_mask shape_mismatch zero_size
set(DENSE --filter "masked_tensor.dense.f32.[1-9a-np-z]*")

# The JSON report: valid JSON (python3 -m json.tool), checked once per file; then field
# ARGN (a path of string(JSON) GET, or LENGTH and a path) into var.
set(json_checked "")
function(json_get file var)
  if(NOT file IN_LIST json_checked)
    execute_process(COMMAND "${PY}" -m json.tool "${file}" RESULT_VARIABLE rc OUTPUT_QUIET
                    ERROR_VARIABLE e)
    if(NOT rc EQUAL 0)
      message(SEND_ERROR "${file} is not valid JSON: ${e}")
    endif()
    set(json_checked ${json_checked} "${file}" PARENT_SCOPE)
  endif()
  file(READ "${file}" json)
  set(how GET)
  set(path ${ARGN})
  if(ARGV2 STREQUAL "LENGTH")
    set(how LENGTH)
    list(REMOVE_AT path 0)
  endif()
  string(JSON v ERROR_VARIABLE je ${how} "${json}" ${path})
  if(je)
    message(SEND_ERROR "${file}: ${ARGN}: ${je}")
  endif()
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

# expect_run, and no sanitizer report from mtcs or (forwarded as "adapter: ...") the fixture:
# under the asan preset an ASan error exits 1, which some runs here expect anyway.
function(vrun want_rc want_re)
  expect_run(${want_rc} "${want_re}" ${ARGN})
  if(last_output MATCHES "AddressSanitizer|LeakSanitizer|runtime error:")
    message(SEND_ERROR "a sanitizer report:\n${last_output}")
  endif()
  set(last_output "${last_output}" PARENT_SCOPE)
  set(last_rc "${last_rc}" PARENT_SCOPE)
endfunction()

function(want what got expected)
  if(NOT "${got}" STREQUAL "${expected}")
    message(SEND_ERROR "${what}: got '${got}', expected '${expected}'")
  endif()
endfunction()

# ---- honest: exactly the CPU backend's verdicts -------------------------------------------
vrun(0 "102 passed, 0 failed" run --golden "${G}" --require-all --level strict
           --report-json "${W}/cpu.json")
vrun(0 "102 passed, 0 failed, 0 skipped"
           validate --adapter "${FX} honest" --golden "${G}" --require-all --level strict ${T}
           --report-json "${W}/honest.json" --junit "${W}/honest.xml")
if(NOT last_output MATCHES "adapter: fixture honest: started")
  message(SEND_ERROR "the adapter's stderr is not forwarded with the prefix 'adapter: ':\n"
          "${last_output}")
endif()
if(last_output MATCHES "INCOMPLETE")
  message(SEND_ERROR "an honest run is INCOMPLETE:\n${last_output}")
endif()
json_get("${W}/cpu.json" n_cpu LENGTH cases)
json_get("${W}/honest.json" n_fx LENGTH cases)
want("honest: cases" "${n_fx}" "${n_cpu}")
math(EXPR last "${n_cpu} - 1")
file(READ "${W}/cpu.json" cpu_json)
file(READ "${W}/honest.json" fx_json)
foreach(k RANGE ${last}) # the same cases in the same order, with the same statuses
  string(JSON id GET "${cpu_json}" cases ${k} id)
  string(JSON st GET "${cpu_json}" cases ${k} status)
  string(JSON fid GET "${fx_json}" cases ${k} id)
  string(JSON fst GET "${fx_json}" cases ${k} status)
  want("honest: case ${k}" "${fid} ${fst}" "${id} ${st}")
endforeach()
json_get("${W}/honest.json" backend backend)
want("honest: backend" "${backend}" "mtcs-fixture 1.0-honest")
json_get("${W}/honest.json" inc incomplete)
want("honest: incomplete" "${inc}" "OFF")
json_get("${W}/honest.json" complete complete)
want("honest: complete" "${complete}" "ON")
json_get("${W}/honest.json" cmd adapter command)
want("honest: adapter command" "${cmd}" "${FX} honest")
file(READ "${W}/honest.xml" xml)
if(NOT xml MATCHES "<property name=\"backend\" value=\"mtcs-fixture 1.0-honest\"/>"
   OR NOT xml MATCHES "<property name=\"adapter\" value=\"[^\"]*adapter_fixture honest\"/>"
   OR xml MATCHES "name=\"incomplete\"")
  message(SEND_ERROR "the JUnit report does not name the adapter as the backend:\n${xml}")
endif()

# ---- torch versions: the honest fixture's verdicts under --torch-version are the CPU's -----
# (golden/binary.h5 records torch 1.13.1's results of these cases: outputs@torch-1.13.1)
set(V --golden "${SRC}/golden/binary.h5" --filter "add.csr_csr.f32.*" --torch-version 1.13.1)
vrun(0 "expected divergence" run ${V})
string(REGEX MATCH "[0-9]+ expected divergences?[^\n]*\n[^\n]*\n[0-9]+ passed, 0 failed" cpu_v
       "${last_output}")
vrun(0 "" validate --adapter "${FX} honest" ${V} ${T})
string(REGEX MATCH "[0-9]+ expected divergences?[^\n]*\n[^\n]*\n[0-9]+ passed, 0 failed" fx_v
       "${last_output}")
want("--torch-version: the fixture's summary" "${fx_v}" "${cpu_v}")
string(REGEX MATCH "^[0-9]+" n_div "${cpu_v}")
vrun(1 "[0-9]+ passed, ${n_div} failed" validate --adapter "${FX} honest" ${V} ${T} --exact-version)

# ---- gradient requests: the fixture's hello says "backward": true --------------------------
# (spec/adapter-protocol.md, "Gradient requests"): the honest fixture answers a gradient case
# as the CPU backend's backward kernels do; a lie about a gradient is a FAIL naming it
set(GR --golden "${SRC}/golden/grad_masked.h5" --filter "sum.masked.*" --filter "mul.*")
vrun(0 "([0-9]+) passed, 0 failed, 0 skipped" run ${GR} --require-all --level strict)
string(REGEX MATCH "[0-9]+ passed, 0 failed, 0 skipped" cpu_g "${last_output}")
vrun(0 "" validate --adapter "${FX} honest" ${GR} --require-all --level strict ${T})
string(REGEX MATCH "[0-9]+ passed, 0 failed, 0 skipped" fx_g "${last_output}")
want("gradient cases: the fixture's summary" "${fx_g}" "${cpu_g}")
vrun(1 "FAIL  sum\\.masked\\.[^\n]*\n    grad 0: "
           validate --adapter "${FX} lie" ${GR} ${T})

# ---- lies --------------------------------------------------------------------------------
vrun(1 "FAIL  masked_tensor.dense.f32.basic\n    output 0: mask"
           validate --adapter "${FX} lie" --golden "${G}" ${DENSE} ${T})
vrun(1 "FAIL  to_tensor.masked.f32.fill_0\n    poison invariance \\(MASK-9\\): with masked-out input data = nan[^\n]*\n    rules: MASK-9;"
           validate --adapter "${FX} lie-under-poison" --golden "${G}"
           --filter "to_tensor.masked.f32.*" ${T} --report-json "${W}/poison.json")
json_get("${W}/poison.json" rules cases 2 rules)
json_get("${W}/poison.json" id cases 2 id)
want("lie-under-poison: ${id} blamed on" "${rules}" "MASK-9")

# ---- crash, hang, garbage: that case lost, the adapter restarted, the rest PASS ----------
foreach(mode_case
    "crash-at-3|CRASH|the adapter exited with status [0-9]+ \\(SIGABRT, as /bin/sh reports it\\) before answering \\(run golden\\)"
    "hang-at-3|TIMEOUT|no answer within 2 s \\(--case-timeout; run golden\\): the adapter was killed"
    "garbage-at-3|ERROR|adapter protocol: the answer is not a JSON object \\(expected '{' at byte 0\\): 'this is not JSON'")
  string(REPLACE "|" ";" parts "${mode_case}")
  list(GET parts 0 mode)
  list(GET parts 1 status)
  list(GET parts 2 why)
  string(TIMESTAMP t0 "%s")
  vrun(1 "${status}  masked_tensor.dense.f32.all_false\n    ${why}"
             validate --adapter "${FX} ${mode}" --golden "${G}" ${DENSE} ${T} -v
             --report-json "${W}/${mode}.json" --junit "${W}/${mode}.xml")
  string(TIMESTAMP t1 "%s")
  math(EXPR secs "${t1} - ${t0}")
  if(secs GREATER 20)
    message(SEND_ERROR "${mode}: mtcs took ${secs} s (case timeout 2 s)")
  endif()
  foreach(after basic dtype_and_shape_mismatch float_mask shape_mismatch zero_size)
    if(NOT last_output MATCHES "\nPASS  masked_tensor.dense.f32.${after}\n")
      message(SEND_ERROR "${mode}: masked_tensor.dense.f32.${after} does not PASS after the "
              "restart:\n${last_output}")
    endif()
  endforeach()
  string(REGEX MATCHALL "adapter: fixture ${mode}: started" starts "${last_output}")
  list(LENGTH starts n_starts)
  want("${mode}: adapter starts" "${n_starts}" "2")
  if(NOT last_output MATCHES "7 passed, 1 failed, 0 skipped\nINCOMPLETE: 1 of 8 cases did not execute to a verdict")
    message(SEND_ERROR "${mode}: no INCOMPLETE summary:\n${last_output}")
  endif()
  json_get("${W}/${mode}.json" inc incomplete)
  want("${mode}: incomplete" "${inc}" "ON")
  json_get("${W}/${mode}.json" n incomplete_cases)
  want("${mode}: incomplete_cases" "${n}" "1")
  json_get("${W}/${mode}.json" complete complete)
  want("${mode}: complete" "${complete}" "OFF")
  file(READ "${W}/${mode}.xml" xml)
  if(NOT xml MATCHES "<property name=\"incomplete\" value=\"1 case without a verdict\"/>")
    message(SEND_ERROR "${mode}: the JUnit report does not say INCOMPLETE")
  endif()
  json_get("${W}/${mode}.json" reason incomplete_reasons 0)
  if(NOT reason MATCHES "^masked_tensor.dense.f32.all_false \\(golden\\): ${status}: ")
    message(SEND_ERROR "${mode}: incomplete_reasons[0] = '${reason}'")
  endif()
endforeach()

# an answer longer than 64 KiB: a protocol ERROR, the adapter killed and restarted
vrun(1 "ERROR  masked_tensor.dense.f32.all_false\n    adapter protocol: the answer is longer than 65536 bytes \\(run golden\\)"
     validate --adapter "${FX} flood-at-3" --golden "${G}" ${DENSE} ${T} -v)
if(NOT last_output MATCHES "PASS  masked_tensor.dense.f32.zero_size\n.*INCOMPLETE: 1 of 8 cases")
  message(SEND_ERROR "flood-at-3: no restart or not INCOMPLETE:\n${last_output}")
endif()

# a second line with an answer: a protocol ERROR, the adapter restarted
vrun(1 "ERROR  masked_tensor.dense.f32.all_false\n    adapter protocol: more than one line in answer to one request: '{\"status\": \"OK\"}', then '{\"status\": \"OK\", \"message\": \"and one more thing\"}'"
           validate --adapter "${FX} chatty-at-3" --golden "${G}" ${DENSE} ${T}
           --report-json "${W}/chatty.json")
if(NOT last_output MATCHES "INCOMPLETE: 1 of 8 cases")
  message(SEND_ERROR "chatty-at-3: not INCOMPLETE:\n${last_output}")
endif()

# a crash in a poison re-run: the case is CRASH, blamed on no rule
vrun(1 "CRASH  to_tensor.masked.f32.fill_0\n    poison re-run poison:nan \\(masked-out input data = nan\\): the adapter exited"
           validate --adapter "${FX} crash-at-2" --golden "${G}"
           --filter "to_tensor.masked.f32.fill_0" ${T})

# three failed starts in a row: the cases left are not run, the run stops
vrun(1 "not run: the adapter failed 3 starts in a row"
           validate --adapter "${FX} crash-for-good-at-3" --golden "${G}" ${DENSE} ${T} -v
           --report-json "${W}/for-good.json")
if(NOT last_output MATCHES "2 passed, 1 failed, 5 skipped\nINCOMPLETE: 6 of 8 cases did not execute to a verdict \\(1 lost [^;]*; 5 not run\\)")
  message(SEND_ERROR "crash-for-good: no INCOMPLETE summary with 5 not run:\n${last_output}")
endif()
json_get("${W}/for-good.json" n not_run)
want("crash-for-good: not_run" "${n}" "5")

# ---- responses that cannot be read: ERROR naming the file, the adapter kept --------------
vrun(1 "ERROR  masked_tensor.dense.f32.1d\n    adapter response of run golden: [^\n]*/resp-1\\.h5: No such file"
           validate --adapter "${FX} no-response-file" --golden "${G}" ${DENSE} ${T}
           --report-json "${W}/noresp.json")
json_get("${W}/noresp.json" inc incomplete)
want("no-response-file: incomplete" "${inc}" "OFF")
vrun(1 "ERROR  masked_tensor.dense.f32.1d\n    adapter response of run golden: [^\n]*/resp-1\\.h5: outputs/0/values: dataset has 2 elements, shape \\[3\\] needs 3"
           validate --adapter "${FX} bad-output" --golden "${G}" ${DENSE} ${T}
           --report-json "${W}/bad.json")
json_get("${W}/bad.json" n summary ERROR)
want("bad-output: ERROR count (every ok case)" "${n}" "5")

# ---- a hello that fails: exit 2 with the reason, before any case, no report ---------------
foreach(mode_why
    "wrong-protocol|the adapter speaks protocol 2, this mtcs speaks protocol 1"
    "silent-hello|the adapter sent no hello within 3 s \\(--hello-timeout\\)"
    "die-at-start|the adapter exited with status 3 before its hello")
  string(REPLACE "|" ";" parts "${mode_why}")
  list(GET parts 0 mode)
  list(GET parts 1 why)
  string(TIMESTAMP t0 "%s")
  vrun(2 "mtcs validate: the adapter did not start: ${why}"
             validate --adapter "${FX} ${mode}" --golden "${G}" ${DENSE} ${T}
             --report-json "${W}/${mode}.json")
  string(TIMESTAMP t1 "%s")
  math(EXPR secs "${t1} - ${t0}")
  if(secs GREATER 15)
    message(SEND_ERROR "${mode}: mtcs took ${secs} s (hello timeout 3 s)")
  endif()
  if(EXISTS "${W}/${mode}.json")
    message(SEND_ERROR "${mode}: a report was written for a run that did not start")
  endif()
endforeach()
# /bin/sh reports its command's death by signal N (1..64) as status 128 + N:
# 192 is read as signal 64, 193 and above are plain statuses
vrun(2 "the adapter exited with status 192 \\(signal 64, as /bin/sh reports it\\) before its hello"
           validate --adapter "exit 192" --golden "${G}" ${DENSE} ${T})
vrun(2 "the adapter exited with status 193 before its hello \\(command: exit 193\\)"
           validate --adapter "exit 193" --golden "${G}" ${DENSE} ${T})

# ---- usage ---------------------------------------------------------------------------------
vrun(2 "--adapter is required" validate --golden "${G}")
vrun(2 "--backend is not an option of mtcs validate" validate --adapter "${FX} honest"
           --backend cpu --golden "${G}")
vrun(2 "unknown option '--adapter'" run --adapter "${FX} honest" --golden "${G}")
vrun(2 "--case-timeout needs a number of seconds > 0" validate --adapter "${FX} honest"
           --case-timeout 0 --golden "${G}")
vrun(0 "--hello-timeout S" validate --help)

# ---- profiles the hello does not list: NOT_SUPPORTED without being sent -----------------
vrun(77 "NOT_SUPPORTED  masked_tensor.dense.f32.1d  \\(the adapter does not answer profile torch \\(its hello lists numpy_ma\\): not sent\\)"
           validate --adapter "${FX} honest numpy_ma" --golden "${G}" ${DENSE} ${T} -v)
if(last_output MATCHES "resp-|misbehav")
  message(SEND_ERROR "a request was sent for an unlisted profile:\n${last_output}")
endif()
vrun(1 "0 passed, 8 failed" validate --adapter "${FX} honest numpy_ma" --golden "${G}"
           ${DENSE} ${T} --require-all)

# ---- --expect applies to adapters: the lie as a known failure (XFAIL), exit 0 -----------
file(WRITE "${W}/known.txt"
  "masked_tensor.dense.f32.basic  FAIL  2027-01-31  fixture  the lie mode perturbs an output\n")
vrun(0 "XFAIL  masked_tensor.dense.f32.basic" validate --adapter "${FX} lie" --golden "${G}"
           --filter "masked_tensor.dense.f32.basic" ${T} --expect "${W}/known.txt" -v)
vrun(1 "XPASS  masked_tensor.dense.f32.basic" validate --adapter "${FX} honest"
           --golden "${G}" --filter "masked_tensor.dense.f32.basic" ${T}
           --expect "${W}/known.txt")
# an expected CRASH is XFAIL but the run stays INCOMPLETE: exit 1, never green
file(WRITE "${W}/crash.txt"
  "masked_tensor.dense.f32.all_false  CRASH  2027-01-31  fixture  crash-at-3 crashes here\n")
vrun(1 "XFAIL  masked_tensor.dense.f32.all_false.*INCOMPLETE: 1 of 8"
           validate --adapter "${FX} crash-at-3" --golden "${G}" ${DENSE} ${T}
           --expect "${W}/crash.txt" -v)

# ---- --repro-dir: the script replays the failure through the adapter --------------------
file(MAKE_DIRECTORY "${W}/repro")
vrun(1 "repro: [^\n]*masked_tensor.dense.f32.basic.sh" validate --adapter "${FX} lie"
           --golden "${G}" --filter "masked_tensor.dense.f32.basic" ${T} --repro-dir "${W}/repro"
           --report-json "${W}/repro.json")
# the report's replay command is the bundle's (its one-case golden in the repro
# directory), not the command for the whole golden file (tests/sweep: a mutant
# that replaced the one by the other survived)
json_get("${W}/repro.json" repro_cmd cases 0 repro_command)
if(NOT repro_cmd MATCHES "/repro/masked_tensor\\.dense\\.f32\\.basic\\.h5")
  message(SEND_ERROR "repro_command is not the bundle's: '${repro_cmd}'")
endif()
file(READ "${W}/repro/masked_tensor.dense.f32.basic.sh" sh)
if(NOT sh MATCHES "validate --adapter '[^']*adapter_fixture lie' --case-timeout 2 --golden")
  message(SEND_ERROR "the repro script does not replay through the adapter:\n${sh}")
endif()
execute_process(COMMAND sh "${W}/repro/masked_tensor.dense.f32.basic.sh" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 1 OR NOT out MATCHES "FAIL  masked_tensor.dense.f32.basic")
  message(SEND_ERROR "the repro script: exit ${rc}, expected 1 with the FAIL:\n${out}")
endif()

# ---- nothing left behind: the adapter's directories are removed --------------------------
file(GLOB left "${W}/tmp/*")
if(left)
  message(SEND_ERROR "left in TMPDIR after the runs: ${left}")
endif()
