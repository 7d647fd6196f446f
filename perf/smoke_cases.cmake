# perf/smoke_cases.cmake - perf.smoke's promise, "every path and dtype
# verified", checked: mtcs_bench with perf.smoke's options lists (and so
# verifies before timing) on dev cpu1 every Adagrad path, the stream and
# touch references, and SparseAdam, SGD and SGD with momentum on
# sparse_coo and hybrid_coo, each in float32 and float64. A path dropped
# by a size rule (bc_size_ok) or a table would otherwise vanish from the
# smoke run without a word.
#   cmake -DBENCH=<mtcs_bench> "-DARGS=<options;...>" -P smoke_cases.cmake
string(REPLACE ";" " " args "${ARGS}")
execute_process(COMMAND ${BENCH} ${ARGS} --benchmark_list_tests=true
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "smoke_cases: mtcs_bench ${args} --benchmark_list_tests=true exited ${rc}: ${err}")
endif()
set(want stream/impl:c touch/impl:c)
foreach(p dense sparse_coo sparse_csr masked_dense masked_sparse hybrid_coo sparse_coo_dup)
  list(APPEND want adagrad/impl:c/path:${p})
endforeach()
foreach(o sparse_adam sgd sgd_momentum)
  foreach(p sparse_coo hybrid_coo)
    list(APPEND want ${o}/impl:c/path:${p})
  endforeach()
endforeach()
set(missing "")
set(n 0)
foreach(w IN LISTS want)
  foreach(t f32 f64)
    string(FIND "${out}" "${w}/dev:cpu1/dtype:${t}/" at)
    if(at EQUAL -1)
      list(APPEND missing "${w}/dev:cpu1/dtype:${t}")
    else()
      math(EXPR n "${n} + 1")
    endif()
  endforeach()
endforeach()
if(missing)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "smoke_cases: mtcs_bench ${args} lists no case of\n  ${missing}\n")
endif()
message(STATUS "smoke_cases: all ${n} path/optimizer/dtype combinations listed")
