# cli_strict_inputs.cmake - a golden case whose kwarg has the wrong type or
# is unknown to its op, or whose outputs@<label> does not name a torch
# version, is an input error: `mtcs run` exits 2 naming the file, the case
# and the kwarg or label, and writes no report. A copy of golden/optim.h5
# is broken one attribute or link at a time with h5edit (tests/tools/).
#   cmake -DMTCS=... -DSRC=... -DBIN=... -DH5EDIT=... -P tests/cli_strict_inputs.cmake

cmake_minimum_required(VERSION 3.25)
foreach(v MTCS SRC BIN H5EDIT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cli_strict_inputs.cmake needs -D${v}=...")
  endif()
endforeach()
set(golden "${SRC}/golden/optim.h5")
if(NOT EXISTS "${golden}")
  message(FATAL_ERROR "${golden} does not exist (committed golden files are part of the tree)")
endif()

set(W "${BIN}/cli_strict_inputs.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
set(case adagrad_dense.dense.f32.random)
set(ecase adagrad_dense.dense.f32.negative_lr) # expect=error, INVALID_ARGUMENT

include("${CMAKE_CURRENT_LIST_DIR}/lib/h5edit.cmake") # fresh(), h5edit()

include("${CMAKE_CURRENT_LIST_DIR}/lib/expect_run.cmake")

# An input error stops the run with exit 2 and leaves no report behind.
function(expect_input_error file re)
  expect_run(2 "${re}" run --golden "${file}" --report-json "${W}/r.json" --junit "${W}/j.xml")
  file(GLOB leftovers "${W}/r.json*" "${W}/j.xml*")
  if(leftovers)
    message(SEND_ERROR "a run stopped by an input error left reports behind: ${leftovers}")
    file(REMOVE ${leftovers})
  endif()
endfunction()

# ---- kwargs: the wrong type, an unknown name ------------------------------------
fresh(lr_string)
h5edit("${copy}" attr-str "/cases/${case}/kwargs" lr "0.1")
expect_input_error("${copy}"
  "lr_string\\.h5: case adagrad_dense\\.dense\\.f32\\.random: kwargs/lr: expected a float, got a string \\('0\\.1'\\)")

fresh(lrr)
h5edit("${copy}" attr-f64 "/cases/${case}/kwargs" lrr 0.1)
expect_input_error("${copy}"
  "lrr\\.h5: case adagrad_dense\\.dense\\.f32\\.random: kwargs/lrr: unknown keyword argument for adagrad_dense \\(accepted: lr, lr_decay, weight_decay, eps, maximize, step\\)")

# step is a count: a float is refused even when it holds a whole number.
fresh(step_float)
h5edit("${copy}" attr-f64 "/cases/${case}/kwargs" step 2)
expect_input_error("${copy}"
  "step_float\\.h5: case adagrad_dense\\.dense\\.f32\\.random: kwargs/step: expected an int, got a float \\(2\\.0\\)")

# An INVALID_ARGUMENT error case may carry a kwarg that torch refuses: it
# goes to the kernel, which refuses it (PASS).
fresh(err_case)
h5edit("${copy}" attr-f64 "/cases/${ecase}/kwargs" lrr 0.1)
expect_run(0 "PASS +${ecase}" run --golden "${copy}" --filter "${ecase}" -v)

# ---- input_masks: malformed, or naming inputs that cannot mask ---------------------
fresh(im_self)
h5edit("${copy}" attr-str "/cases/${case}" input_masks "0:0")
expect_input_error("${copy}"
  "im_self\\.h5: case adagrad_dense\\.dense\\.f32\\.random: attribute 'input_masks' is '0:0', expected pairs")
# an input listed twice, the first time masked by input 0 (input_mask_of 1,
# the value a "> 0" check must still see as taken)
fresh(im_twice)
h5edit("${copy}" attr-str "/cases/${case}" input_masks "1:0,1:2")
expect_input_error("${copy}"
  "im_twice\\.h5: case adagrad_dense\\.dense\\.f32\\.random: attribute 'input_masks' is '1:0,1:2', expected pairs .*\\(each input once")
fresh(im_float)
h5edit("${copy}" attr-str "/cases/${case}" input_masks "0:1") # input 1 is the float grad
expect_input_error("${copy}"
  "im_float\\.h5: case adagrad_dense\\.dense\\.f32\\.random: input_masks 0:1: input 0 must be a dense tensor and input 1 a dense bool tensor that broadcasts to it")
fresh(im_range)
h5edit("${copy}" attr-str "/cases/${case}" input_masks "0:7")
expect_input_error("${copy}" "im_range\\.h5: .*input_masks 0:7: .*\\(the case has 3 inputs\\)")

# ---- outputs@<label> ---------------------------------------------------------------
fresh(label_bad)
h5edit("${copy}" link "/cases/${case}/outputs" "/cases/${case}/outputs@v2")
expect_input_error("${copy}"
  "label_bad\\.h5: case adagrad_dense\\.dense\\.f32\\.random: outputs@v2: output variant label 'v2' does not name a torch version")

fresh(label_good)
h5edit("${copy}" link "/cases/${case}/outputs" "/cases/${case}/outputs@torch-2.4.0a0+git1234abc")
expect_run(0 "PASS +${case}" run --golden "${copy}" --filter "${case}" -v)

file(REMOVE_RECURSE "${W}")
