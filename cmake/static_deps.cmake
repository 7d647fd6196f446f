# static_deps.cmake - MT_STATIC_DEPS=ON (preset `portable`, spec/gpu-machine.md):
# executables that run on a machine with glibc, the NVIDIA driver and nothing
# else we link against (no HDF5, OpenBLAS, libgomp or Google Benchmark there).
#   HDF5      Debian's libhdf5.a (+ libsz.a, libaec.a, libz.a; its ros3/curl
#             driver is never referenced, so no libcurl/libcrypto)
#   BLAS      BLA_STATIC: libopenblas.a when BLAS is searched for at all (the
#             preset turns BLAS off: Debian's DYNAMIC_ARCH archive adds 25 MB
#             to every executable, more than a device call can carry)
#   OpenMP    libgomp.a
#   C++/gcc   -static-libstdc++ -static-libgcc
#   Benchmark Debian ships no libbenchmark.a: .ci/gpu-bundle.sh copies
#             libbenchmark.so.1debian beside mtcs_bench (RUNPATH $ORIGIN/lib)
#   CUDA      cudart_static already (libcuda is the driver's, dlopen'ed)
# --as-needed drops shared libraries nothing references (cuSPARSE while no
# kernel calls it); --gc-sections and per-function sections keep them small.
# Included twice by the top-level CMakeLists.txt: before the find_package
# calls (MT_STATIC_DEPS_PHASE "before") and after them ("after").

if(MT_STATIC_DEPS_PHASE STREQUAL "before")
  set(BLA_STATIC ON)
  # FindOpenMP takes the library it is given: the archive instead of libgomp.so
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libgomp.a
    OUTPUT_VARIABLE mt_gomp_a OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(IS_ABSOLUTE "${mt_gomp_a}" AND EXISTS "${mt_gomp_a}")
    set(OpenMP_gomp_LIBRARY "${mt_gomp_a}" CACHE FILEPATH "libgomp (static: MT_STATIC_DEPS)" FORCE)
  else()
    message(FATAL_ERROR "MT_STATIC_DEPS: ${CMAKE_C_COMPILER} has no libgomp.a "
      "(Debian: it comes with gcc); configure without MT_STATIC_DEPS or without OpenMP "
      "(-DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON)")
  endif()
  # libbenchmark.so.1debian beside mtcs_bench in the bundle (.ci/gpu-bundle.sh: bin/lib/);
  # in the build tree nothing is there and the loader's default path finds it
  set(CMAKE_BUILD_RPATH "$ORIGIN/lib")
  # host code only (nvcc is not gcc; its host objects are few)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-ffunction-sections>
    $<$<COMPILE_LANGUAGE:C,CXX>:-fdata-sections>)
  add_link_options(-Wl,--as-needed -Wl,--gc-sections -static-libgcc
    $<$<LINK_LANGUAGE:CXX>:-static-libstdc++>
    $<$<LINK_LANGUAGE:CUDA>:-static-libstdc++>)
  return()
endif()

# ---- after find_package: replace the shared HDF5 the module found ----------
set(mt_hdf5_dirs "")
foreach(lib IN LISTS HDF5_C_LIBRARIES)
  if(IS_ABSOLUTE "${lib}")
    get_filename_component(dir "${lib}" DIRECTORY)
    list(APPEND mt_hdf5_dirs "${dir}")
  endif()
endforeach()
set(mt_static_hdf5 "")
foreach(name hdf5 sz aec z)
  # hdf5_serial: Debian's name in the multiarch directory, beside hdf5/serial/libhdf5.a
  find_library(MT_STATIC_${name} NAMES lib${name}.a lib${name}_serial.a
    HINTS ${mt_hdf5_dirs} NO_CACHE)
  if(NOT MT_STATIC_${name})
    message(FATAL_ERROR "MT_STATIC_DEPS: no lib${name}.a (HDF5 found as "
      "'${HDF5_C_LIBRARIES}'); Debian: apt-get install libhdf5-dev libaec-dev zlib1g-dev")
  endif()
  list(APPEND mt_static_hdf5 "${MT_STATIC_${name}}")
endforeach()
# libaec's libsz.a calls libaec.a; libhdf5.a calls both and libz.a
set(HDF5_C_LIBRARIES ${mt_static_hdf5} ${CMAKE_DL_LIBS} m Threads::Threads)
message(STATUS "mtcs: MT_STATIC_DEPS: HDF5 ${HDF5_C_LIBRARIES}; OpenMP ${OpenMP_gomp_LIBRARY}")
