# mutants.cmake - every mutant plugin (conformance/plugins/mutants/) is the
# reference CPU backend with one rule broken the way a real library gets it
# wrong. `mtcs run` must fail each one (exit 1, at least one failing case),
# and every failing case must blame the rule the mutant breaks: the case's
# rules contain it, or the runner's own MASK-9 (poison invariance: a mutant
# that reads masked-out data is rightly caught there). CALL-1 mutants
# (inputs modified, outputs sharing memory) are caught by the runner's
# CALL-1 check. The suite catches the mistake and blames the right rule,
# and nothing else breaks.
#   cmake -DMTCS=... -DSRC=... -DBIN=... -P tests/mutants.cmake
# Writes ${BIN}/mutants-report.md (mutants-report-<k>.md per shard): each mutant, its rule, the cases that
# killed it.
#
# An entry name=RULE@profile (the numpy_ma profile's mutants,
# npma_mutant.h) runs with `--profile <profile>`, on that profile's cases.
# Each mutant runs only the cases of the ops whose kernel slots it
# overrides (`[MT_OP_<op>] = ...` in its source; case ids start with the op
# name): the other slots are the reference kernels, so the other cases
# cannot fail, and the whole test stays short (also under ASan). A gradient
# mutant (MT_MUTANT_GRAD_ENTRY: it overrides backward slots) runs those ops'
# cases of the gradient goldens (golden/grad_*.h5).
cmake_minimum_required(VERSION 3.25)

# mutant name -> the one rule it breaks (spec/SEMANTICS.md)
set(MUTANTS
  # masked: construction, to_tensor
  zero_size_oom=MASK-1
  float_mask_accepted=MASK-2
  size_checked_first=MASK-2
  to_tensor_reads_data=MASK-3
  to_tensor_numpy_fill=MASK-3
  to_tensor_in_place=CALL-1
  masked_tensor_no_copy=CALL-1
  # unary
  neg_loses_signed_zero=MASK-4
  abs_keeps_neg_zero=MASK-4
  pow_via_exp_log=MASK-4
  log_masks_domain=MASK-5
  sqrt_masks_domain=MASK-5
  int_unary_stays_int=UN-1
  digamma_pole_nan=UN-3
  round_half_away=UN-4
  decimals_ignored=UN-5
  inplace_promotes=UN-6
  # binary
  div_masks_zero=MASK-6
  dense_operand_specified=MASK-7
  reflected_swapped=MASK-7
  scalar_in_double=MASK-7
  scalar_mul_loses_neg_zero=MASK-7
  mask_intersection=MASK-8
  dtype_before_masks=MASK-8
  remainder_as_fmod=BIN-5
  maximum_skips_nan=BIN-9
  promote_to_lhs=BIN-2
  masks_same_shape_only=BIN-1
  kwargs_ignored=BIN-7
  sub_bool_as_xor=BIN-3
  comparison_keeps_dtype=BIN-4
  shift_amount_mod_width=BIN-6
  nextafter_half_in_float=BIN-8
  # reductions
  amax_nan_skipping=RED-1
  mean_total_count=RED-1
  f64_sum_in_float=RED-1
  amin_nan_skipping=RED-2
  sum_mask_by_multiply=RED-2
  prod_fills_zero=RED-2
  keepdim_ignored=RED-2
  negdim_as_zero=RED-2
  mask_all_not_any=RED-2
  fill_zero=RED-3
  numpy_ma_fills=RED-3
  fully_masked_specified=RED-3
  argmax_last_tie=RED-4
  all_masked_as_false=RED-6
  var_biased=RED-5
  int_sum_overflows=RED-7
  sum_holds_bf16=RED-7
  norm_two_norm=RED-8
  # Adagrad
  eps_inside_sqrt=ADA-1
  dense_skips_zero_grad=ADA-1
  lr_decay_ignored=ADA-1
  sparse_as_dense=ADA-2
  sparse_eps_everywhere=ADA-2
  duplicates_squared=ADA-2
  step_off_by_one=ADA-2
  sparse_weight_decay_accepted=ADA-2
  maximize_ignored=ADA-3
  masked_grad_reads_data=ADA-3
  stored_zero_specified=ADA-3
  decays_unchecked=ADA-5
  adagrad_masked_int_param_kept=ADA-7
  adagrad_in_place=CALL-1
  hybrid_row_first_only=ADA-8
  # SparseAdam, family sparse_optim
  sadam_dense_moments=SADAM-1
  sadam_step_ignored=SADAM-2
  sadam_empty_refused=SADAM-3
  sadam_eps_zero_accepted=SADAM-4
  sadam_dense_grad_ignored=SADAM-5
  # SGD, family sparse_optim
  sgd_int_float_update=SGD-1
  sgd_nesterov_ignored=SGD-2
  sgd_sparse_weight_decay_densified=SGD-3
  sgd_nesterov_dampening_accepted=SGD-4
  sgd_sparse_param_coalesced=SGD-5
  # torch.masked functional ops, family masked_fn
  masked_mask_no_broadcast=MFN-1
  masked_amax_fill_zero=MFN-2
  masked_amin_numpy_fill=MFN-2
  masked_mean_counts_all=MFN-3
  masked_var_ddof0=MFN-3
  masked_cumsum_zero_masked_out=MFN-4
  masked_softmax_no_fill=MFN-5
  masked_normalize_no_eps=MFN-5
  masked_logaddexp_one_mask=MFN-6
  masked_sum_keeps_int_dtype=MFN-7
  masked_sum_dtype_after=MFN-8
  masked_sparse_stored_only=MFN-9
  bf16_store_truncates=MFN-7
  # structure
  transpose_mask_not_moved=STR-1
  cat_masks_dropped=STR-2
  where_mask_of_x=STR-3
  copy_takes_src_mask=STR-4
  same_size_compares_masks=STR-5
  coo_pattern_as_mask=STR-6
  select_index_wraps=STR-7
  # sparse storage
  csr_width_unchecked=SP-1
  coo_inplace_accepted=SP-2
  sparse_mean_counts_specified=SP-3
  csr_ones_like_refused=SP-4
  plain_sparse_mapped_as_stored=SP-5
  sp_result_coalesced=SP-5
  # sparse conversions, family sparse_convert
  spc_nan_not_stored=SPC-1
  spc_stored_zero_dropped=SPC-2
  spc_coo_always_coalesced=SPC-3
  spc_blocksize_change_accepted=SPC-5
  spc_coalesce_drops_zero_sums=SPC-6
  spc_mask_coalesced=SPC-7
  spc_values_coalesces=SPC-8
  spc_negative_index_wraps=SPC-9
  spc_csr_cols_sorted_silently=SPC-10
  # sparse BLAS, family sparse_blas
  spb_beta_ignored=SPB-3
  spb_alpha_ignored=SPB-3
  spb_beta0_reads_input=SPB-3
  spb_smm_dense_result=SPB-4
  spb_hspmm_not_hybrid=SPB-4
  spb_duplicates_dropped=SPB-6
  spb_last_entry_dropped=SPB-2
  spb_sampled_full_product=SPB-7
  spb_smm_flagged_coalesced=SPB-4
  spb_linear_bias_dropped=SPB-5
  spb_compressed_ints_accepted=SPB-1
  # plain sparse structure and reductions (SPS-*)
  sps_copy_takes_src_dtype=SPS-1
  sps_t_keeps_coalesced=SPS-2
  sps_sum_drops_zero_sums=SPS-3
  sps_norm_as_stored=SPS-4
  sps_softmax_unstored_as_zero=SPS-5
  sps_index_select_once=SPS-6
  # plain sparse pointwise
  pow_zero_keeps_pattern=SPP-1
  add_uncoalesced_flagged_coalesced=SPP-2
  mul_sparse_dense_densifies=SPP-4
  mul_uncoalesced_drops_unmatched=SPP-4
  mul_scalar_inplace_keeps_coalesced=SPP-5
  # gradients (backward kernels, golden format 3's gradient cases)
  grad_sum_ignores_upstream=GRAD-2
  grad_mask_all_specified=GRAD-1
  grad_plain_operand_dense=GRAD-4
  grad_half_as_float32=GRAD-9
  # the numpy_ma profile (name=RULE@numpy_ma: run with --profile numpy_ma)
  npma_union_of_specified=NPMA-2@numpy_ma
  npma_log_keeps_nan=NPMA-3@numpy_ma
  npma_weak_scalar=NPMA-4@numpy_ma
  npma_torch_fills=NPMA-7@numpy_ma
  npma_empty_all_reduce_zero=NPMA-5@numpy_ma
  npma_bool_mask_only=NPMA-1@numpy_ma
  npma_atanh_unit_domain=NPMA-8@numpy_ma
  npma_remainder_as_fmod=NPMA-10@numpy_ma
  npma_maximum_propagates_nan=NPMA-11@numpy_ma
  npma_argmin_skips_masked=NPMA-13@numpy_ma
  npma_var_unbiased=NPMA-14@numpy_ma
  npma_mask_not_broadcast=NPMA-16@numpy_ma
  npma_mfn_plain_result=NPMA-17@numpy_ma
  npma_mask_not_moved=NPMA-18@numpy_ma
  npma_where_ignores_cond_mask=NPMA-19@numpy_ma
  npma_median_lower=NPMA-20@numpy_ma
  npma_angle_neg_zero=NPMA-21@numpy_ma
  npma_idiv_masks_nonfinite=NPMA-22@numpy_ma
  npma_ipow_keeps_overflow=NPMA-23@numpy_ma)
# rules every mutant may be caught under besides its own
set(ALWAYS_OK MASK-9)

# ---- the sources and the table agree ----------------------------------------
file(GLOB sources "${SRC}/conformance/plugins/mutants/*.c")
set(names "")
foreach(entry IN LISTS MUTANTS)
  string(REGEX MATCH "^([a-z0-9_]+)=([A-Z]+-[0-9A-Z]+)(@[a-z_]+)?$" ok "${entry}")
  if(NOT ok)
    message(FATAL_ERROR "tests/mutants.cmake: bad entry '${entry}' (expected name=RULE or "
                        "name=RULE@profile)")
  endif()
  list(APPEND names "${CMAKE_MATCH_1}")
endforeach()
set(unlisted "")
foreach(src IN LISTS sources)
  get_filename_component(name "${src}" NAME_WE)
  if(NOT name IN_LIST names)
    list(APPEND unlisted "${name}")
  endif()
endforeach()
set(missing "")
foreach(name IN LISTS names)
  if(NOT EXISTS "${SRC}/conformance/plugins/mutants/${name}.c")
    list(APPEND missing "${name}")
  endif()
endforeach()
if(unlisted OR missing)
  message(FATAL_ERROR "the mutant sources and the MUTANTS table of tests/mutants.cmake disagree:"
                      " sources not in the table: [${unlisted}]; entries without a source: "
                      "[${missing}]. Add each new mutant with the rule it breaks.")
endif()

# ---- op -> family (golden/<family>.h5), from ops.def ---------------------------
file(STRINGS "${SRC}/spec/include/mt/ops.def" op_lines REGEX "^MT_OP\\(")
foreach(line IN LISTS op_lines)
  if(line MATCHES "^MT_OP\\( *[0-9]+, *([a-z0-9_]+), *([a-z0-9_]+),")
    set(family_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()

# ---- run each mutant ----------------------------------------------------------
# -DSHARD=k -DSHARDS=n: every n-th mutant from the k-th (ctest registers
# cli.mutants.0 .. n-1, run in parallel, each under its own time limit)
set(report_name "mutants-report.md")
if(DEFINED SHARDS)
  set(mine "")
  set(i 0)
  foreach(entry IN LISTS MUTANTS)
    math(EXPR r "${i} % ${SHARDS}")
    if(r EQUAL SHARD)
      list(APPEND mine "${entry}")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  set(MUTANTS "${mine}")
  set(report_name "mutants-report-${SHARD}.md")
endif()
set(bad 0)
set(survivors "")
set(report "# Mutants\n\nEach mutant is the CPU reference backend with one rule broken \
(conformance/plugins/mutants/). Killed by: the failing cases of `mtcs run`; all blame \
the mutant's rule (or MASK-9, poison invariance).\n\n\
| mutant | rule broken | ops | killed by | cases |\n|---|---|---|---|---|\n")
list(LENGTH MUTANTS n_mutants)
foreach(entry IN LISTS MUTANTS)
  string(REPLACE "=" ";" kv "${entry}")
  list(GET kv 0 name)
  list(GET kv 1 rule)
  # name=RULE@profile: the mutant breaks a rule of that profile's kernel table
  set(profile_args "")
  set(profile "")
  if(rule MATCHES "^(.*)@(.*)$")
    set(rule "${CMAKE_MATCH_1}")
    set(profile "${CMAKE_MATCH_2}")
    set(profile_args --profile "${CMAKE_MATCH_2}")
  endif()
  set(plugin "${BIN}/plugins/mutant_${name}.so")
  if(NOT EXISTS "${plugin}")
    message(FATAL_ERROR "${plugin} does not exist (is ${name}.c in conformance/plugins/mutants/?)")
  endif()
  # the ops it overrides: [MT_OP_<op>] = ...
  file(READ "${SRC}/conformance/plugins/mutants/${name}.c" code)
  string(REGEX MATCHALL "\\[MT_OP_[a-z0-9_]+\\] *=" slots "${code}")
  set(ops "")
  set(filters "")
  foreach(s IN LISTS slots)
    string(REGEX REPLACE "^\\[MT_OP_([a-z0-9_]+)\\].*" "\\1" op "${s}")
    if(NOT op IN_LIST ops)
      list(APPEND ops "${op}")
      list(APPEND filters --filter "${op}.*")
    endif()
  endforeach()
  # only the golden files that hold those ops' cases: reading (and checking)
  # every file would cost each mutant more than its cases do
  set(goldens "")
  # a gradient mutant (MT_MUTANT_GRAD_ENTRY: backward slots) runs the
  # gradient goldens, whichever op family its ops come from
  set(grad_mutant 0)
  if(code MATCHES "MT_MUTANT_GRAD_ENTRY\\(")
    set(grad_mutant 1)
  endif()
  foreach(op IN LISTS ops)
    if(grad_mutant)
      foreach(g grad_masked grad_sparse grad_masked_fn)
        if(NOT "${SRC}/golden/${g}.h5" IN_LIST goldens)
          list(APPEND goldens "${SRC}/golden/${g}.h5")
        endif()
      endforeach()
      continue()
    elseif(profile STREQUAL "numpy_ma")
      set(g "${SRC}/golden/numpy_ma.h5")
    elseif(DEFINED family_of_${op})
      set(g "${SRC}/golden/${family_of_${op}}.h5")
    else()
      message(SEND_ERROR "mutant ${name}: op ${op} is not in ops.def")
      set(bad 1)
      continue()
    endif()
    if(NOT g IN_LIST goldens)
      list(APPEND goldens "${g}")
    endif()
  endforeach()
  if(NOT ops)
    message(SEND_ERROR "mutant ${name}: its source overrides no kernel slot ([MT_OP_<op>] = ...)")
    set(bad 1)
    continue()
  endif()
  string(REPLACE ";" " " ops_text "${ops}")

  execute_process(COMMAND "${MTCS}" run --backend "${plugin}" --level strict --exact-version ${profile_args} --golden ${goldens}
    ${filters}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)

  # One line per list item: ';' and brackets are list syntax to CMake.
  string(REPLACE ";" "|" text "${out}")
  string(REPLACE "[" "<" text "${text}")
  string(REPLACE "]" ">" text "${text}")
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  # A FAIL/ERROR/CRASH/TIMEOUT <id> line, then (after its message) the line
  # "    rules: A,B| tolerance: ...".
  set(killers "")
  set(wrong "")
  set(id "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^(FAIL|ERROR|CRASH|TIMEOUT)  ([^ ]+)")
      if(id)
        list(APPEND wrong "${id} <no rules line>")
      endif()
      set(id "${CMAKE_MATCH_2}")
    elseif(id AND line MATCHES "^    rules: ([^|]*)")
      string(STRIP "${CMAKE_MATCH_1}" rules_text)
      string(REPLACE "," ";" rules "${rules_text}")
      set(blamed 0)
      foreach(r IN LISTS rule ALWAYS_OK)
        if(r IN_LIST rules)
          set(blamed 1)
        endif()
      endforeach()
      list(APPEND killers "${id}")
      if(NOT blamed)
        list(APPEND wrong "${id} <${rules_text}>")
      endif()
      set(id "")
    endif()
  endforeach()
  if(id)
    list(APPEND wrong "${id} <no rules line>")
  endif()

  list(LENGTH killers n_killers)
  set(shown "${killers}")
  if(n_killers GREATER 8)
    list(SUBLIST killers 0 8 shown)
  endif()
  string(REPLACE ";" ", " shown_text "${shown}")
  if(n_killers GREATER 8)
    math(EXPR more "${n_killers} - 8")
    string(APPEND shown_text " and ${more} more")
  endif()

  if(NOT rc EQUAL 1)
    if(rc EQUAL 0)
      set(why "survived: every case passed")
    elseif(rc EQUAL 77)
      set(why "survived: no case executed (exit 77)")
    else()
      set(why "exit ${rc}, expected 1 (caught)")
    endif()
    message(SEND_ERROR "mutant ${name} (breaks ${rule}; ops ${ops_text}): ${why}\n${out}${err}")
    list(APPEND survivors "${name}")
    string(APPEND report "| ${name} | ${rule} | ${ops_text} | **not killed** (${why}) | 0 |\n")
    set(bad 1)
  elseif(n_killers EQUAL 0)
    message(SEND_ERROR "mutant ${name}: exit 1 but no failing case could be parsed:\n${out}${err}")
    string(APPEND report "| ${name} | ${rule} | ${ops_text} | **no failing case parsed** | 0 |\n")
    set(bad 1)
  elseif(wrong)
    string(REPLACE ";" "\n  " wrong_text "${wrong}")
    message(SEND_ERROR "mutant ${name} breaks ${rule}, but these failing cases blame other rules "
                       "(<their rules>):\n  ${wrong_text}")
    string(APPEND report "| ${name} | ${rule} | ${ops_text} | **wrong blame**: ${shown_text} | ${n_killers} |\n")
    set(bad 1)
  else()
    message(STATUS "ok: mutant ${name} (breaks ${rule}) killed by ${n_killers} cases: ${shown_text}")
    string(APPEND report "| ${name} | ${rule} | ${ops_text} | ${shown_text} | ${n_killers} |\n")
  endif()
endforeach()

file(WRITE "${BIN}/${report_name}.tmp" "${report}")
file(RENAME "${BIN}/${report_name}.tmp" "${BIN}/${report_name}")
if(bad)
  list(LENGTH survivors n_survivors)
  message(FATAL_ERROR "some of the ${n_mutants} mutants were not caught as expected "
                      "(${n_survivors} survived: ${survivors}); see ${BIN}/${report_name}")
endif()
message(STATUS "all ${n_mutants} mutants killed, each blaming its rule; see ${BIN}/${report_name}")
