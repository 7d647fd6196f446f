# cuda_emu_faults.cmake - the CUDA backend's emulation (cuda-emu) must catch
# the device-side mistakes it exists for: each plugin is the emulation with
# one fault injected (CMakeLists.txt, MT_CUDA_EMU_FAULT):
#   1  every kernel's grid one thread short (the last element never written:
#      the arena's 0xff poison reaches the output)
#   2  uploads forgotten (kernels read the poison instead of the inputs)
#   3  the device coalesce keeps the first of each group of duplicate COO
#      entries instead of summing them (unary's goldens hold 30 cases of
#      uncoalesced COO inputs with duplicates that reach a device,
#      grad_sparse's 27)
#   7  a host pointer handed to a kernel (the device coalesce's run heads:
#      the host's list, whose values are right, instead of the uploaded
#      copy): only the emulation's launch check (impl/cuda/cuda_compat.h,
#      MTC_PLAIN_ARG) sees it, as a DEVICE_ERROR, where a GPU would fault;
#      with the check off every case of unary and grad_sparse passed (measured)
#   8  host code reading device memory (the coalesce's run-head flags read
#      where they should be downloaded): the emulation's device memory is
#      out of the host's reach between launches (impl/cuda/device.cu), so
#      the case process crashes, as it would on a GPU; with device memory
#      readable every case of unary, grad_sparse and sparse_convert passed
#      (measured)
#   9  one thread too many in the kernels of impl/cuda/coalesce.cu and
#      cusparse_lib.cu (a bounds check missing): each writes one element
#      past its buffer, into the guard the emulation keeps after every
#      buffer (impl/cuda/device.cu), a DEVICE_ERROR naming the kernel;
#      without the guards sparse_blas's 32 SpGEMM cases passed (the write
#      lands in the next buffer of the allocation, as it would on a GPU,
#      where compute-sanitizer does not see it either)
#  12  the device coalesce's sums as a scatter-add without an atomic (one
#      thread per sorted entry adding into its run's output: a lost update
#      on a GPU), built into the race check's plugin (cuda_emu_race_fault12,
#      tests/race/README.md), which reports the first two threads of a
#      launch that touch one byte, one writing; without the race check the
#      same fault passed every golden file in the reverse, forward and
#      shuffle:7 thread orders (measured 2026-12-02: any serial order adds
#      every value)
#  13  the coalesce's run-head test without its edge test (position 0
#      compared with the key before the sorted keys' buffer), also in the
#      race check's plugin (cuda_emu_race_fault13), which marks the guards
#      between buffers and reports a read of one; without the check the
#      fault passed every golden file (measured 2026-12-02): the guard's
#      canary never equals a key, so position 0 still starts a run, where
#      on a GPU the bytes before the buffer are another buffer's data
#   6  cuSPARSE's dense operands taken as row-major where the backend hands
#      them over column-major (impl/cuda/cusparse_lib.cu: SpMM's B and C
#      declared CUSPARSE_ORDER_ROW, leading dimension n, which the emulated
#      library, impl/cuda/cusparse_emu.h, then reads and writes row-major;
#      SpGEMM's C scattered into the accumulator row-major): 164 of the 204
#      sparse_blas cases that reach cuSPARSE (the others are products with
#      one column, or an output the layouts agree on)
# On each family with device compute, each fault must exit 1 and fail at
# least 60% of the cases it failed when this test was written (the counts
# below, of the cases the emulation executes in each family: README "CUDA
# backend"); a case counts as caught when it FAILs, ERRORs or CRASHes (a
# gather reading its plan from the poison follows a wild pointer). A case whose last element is masked out, whose output is empty
# or which expects one of torch's errors rightly passes under a fault, so
# no fault fails every case. The honest emulation must pass the same files
# (so the failures are the fault's): the conformance.<family>.cuda-emu tests check that.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/cuda_emu_faults.cmake
cmake_minimum_required(VERSION 3.25)

# Faults 7 to 9, 12 and 13 live on one or two code paths (the device coalesce, SpGEMM's
# kernels), which every family reaches the same way: they run on the files
# that reach those paths most (measured on all: 205 cases each for 7 and 8,
# in binary 2, grad_sparse 88, optim 12, reduce 8, sparse_convert 44,
# sparse_misc 8, sparse_optim 8, unary 35; 237 for 9, those and sparse_blas's
# 32; 174 for 12: binary 2, grad_sparse 63, optim 6, reduce 8, sparse_convert
# 44, sparse_misc 8, sparse_optim 8, unary 35, more than fault 8 because a run
# of duplicates races whatever their values; 222 for 13: binary 2,
# grad_sparse 103, masked 2, optim 12, reduce 8, sparse_convert 44,
# sparse_misc 8, sparse_optim 8, unary 35), so that this test stays within
# CI's time.
# family:fault:cases caught, measured (2026-12-02) on every golden file of the
# torch profile, all of whose 9144 cases run on cuda-emu. Fault 2 shows partly as
# crashes (a gather or kernel reading its index plan from the poison follows a
# wild pointer, which the runner's case process isolates); fault 3 only where a
# COO input with duplicates reaches the device coalesce, faults 7 and 8 wherever
# an uncoalesced COO input does. float16/bfloat16
# tolerances are absolute and absorb one element's missing step, so fault 1
# catches fewer of sparse_optim's cases.
set(MEASURED
    binary:1:743 binary:2:906 binary:3:2 grad_masked:1:344 grad_masked:2:333
    grad_masked_fn:1:84 grad_masked_fn:2:84 grad_sparse:1:344 grad_sparse:2:391
    grad_sparse:3:27 masked:1:45 masked:2:49 masked_fn:1:888 masked_fn:2:857 optim:1:88
    optim:2:103 optim:3:6 reduce:1:649 reduce:2:605 reduce:3:5 sparse_blas:1:284
    sparse_blas:2:270 sparse_blas:6:164 sparse_convert:1:455 sparse_convert:2:481 sparse_convert:3:37
    sparse_misc:1:139 sparse_misc:2:131 sparse_optim:1:129 sparse_optim:2:159
    sparse_optim:3:7 structure:1:594 structure:2:627 unary:1:887 unary:2:1316 unary:3:30
    grad_sparse:7:88 sparse_convert:7:44 unary:7:35 grad_sparse:8:88 sparse_convert:8:44
    unary:8:35 sparse_blas:9:32 unary:9:35 grad_sparse:12:63 sparse_convert:12:44 unary:12:35
    grad_sparse:13:103 sparse_convert:13:44 unary:13:35)
# family:fault:cases caught:profile - a golden file of another profile (its
# runs take --profile): numpy_ma.h5, all of whose 1621 cases run on cuda-emu;
# it has no COO input (numpy.ma has dense arrays only), so no fault 3.
list(APPEND MEASURED numpy_ma:1:1464:numpy_ma numpy_ma:2:1447:numpy_ma)

foreach(entry IN LISTS MEASURED)
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 family)
  list(GET parts 1 fault)
  list(GET parts 2 measured)
  set(profile_args "")
  list(LENGTH parts nparts)
  if(nparts GREATER 3)
    list(GET parts 3 profile)
    set(profile_args --profile "${profile}")
  endif()
  set(plugin "${BIN}/plugins/cuda_emu_fault${fault}.so")
  if(fault GREATER_EQUAL 12) # the race check's plugin (MT_WITH_EMU_RACE)
    set(plugin "${BIN}/plugins/cuda_emu_race_fault${fault}.so")
    if(NOT EXISTS "${plugin}")
      message(STATUS "${family}, fault ${fault}: not run, the race check's plugin is not built "
                     "(MT_WITH_EMU_RACE, a compiler with -fsanitize=thread)")
      continue()
    endif()
  endif()
  execute_process(COMMAND "${MTCS}" run --backend "${plugin}" ${profile_args} --golden "${SRC}/golden/${family}.h5"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "${family}, fault ${fault}: expected exit 1, got ${rc}:\n${out}${err}")
  endif()
  if(NOT out MATCHES
     "status counts: PASS ([0-9]+), FAIL ([0-9]+), ERROR ([0-9]+), NOT_SUPPORTED [0-9]+, SKIP [0-9]+, CRASH ([0-9]+),")
    message(FATAL_ERROR "${family}, fault ${fault}: no status counts in:\n${out}")
  endif()
  set(pass ${CMAKE_MATCH_1})
  # caught: a wrong value (FAIL), an error (ERROR) or a crashed case process
  # (CRASH: a gather reading its plan from the poison follows a wild pointer)
  math(EXPR fail "${CMAKE_MATCH_2} + ${CMAKE_MATCH_3} + ${CMAKE_MATCH_4}")
  math(EXPR need "${measured} * 60 / 100")
  if(fail LESS need)
    message(FATAL_ERROR "${family}, fault ${fault}: only ${fail} caught cases; at least ${need} "
                        "must fail (60% of the ${measured} measured)")
  endif()
  message(STATUS "${family}, fault ${fault}: ${fail} cases caught (at least ${need} must), ${pass} pass")
endforeach()
