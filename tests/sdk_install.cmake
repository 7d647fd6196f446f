# sdk_install.cmake - the installable SDK (cmake/install.cmake), as a plugin
# author meets it: `cmake --install` into a fresh prefix; a separate project
# (tests/sdk_consumer) finds it with find_package(mtcs) alone and builds the
# example plugin and a C++ unit including every public header; pkg-config
# gives the same headers to a plain compiler call; the installed mtcs runs
# the plugin against the installed goldens (its default golden directory)
# and passes.
#   cmake -DSRC=... -DBIN=<build dir> [-DCC=cc] -P tests/sdk_install.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT CC)
  set(CC cc)
endif()
set(W "${BIN}/sdk_install.work")
file(REMOVE_RECURSE "${W}")
file(MAKE_DIRECTORY "${W}")
set(P "${W}/prefix")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: exit ${rc}\n${out}${err}")
  endif()
  set(last_out "${out}${err}" PARENT_SCOPE)
endfunction()

run("cmake --install" "${CMAKE_COMMAND}" --install "${BIN}" --prefix "${P}")
foreach(f bin/mtcs include/mt/mt.h include/mt/ops.def include/mt/compressed.h
          share/mtcs/golden/MANIFEST share/mtcs/examples/example.c
          lib/cmake/mtcs/mtcsConfig.cmake lib/pkgconfig/mtcs.pc)
  if(NOT EXISTS "${P}/${f}")
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()

# the consumer project: find_package(mtcs) with the prefix only
run("configure the consumer" "${CMAKE_COMMAND}" -S "${SRC}/tests/sdk_consumer" -B "${W}/consumer"
    "-DCMAKE_PREFIX_PATH=${P}" -DCMAKE_BUILD_TYPE=Release)
run("build the consumer" "${CMAKE_COMMAND}" --build "${W}/consumer")
set(plugin "${W}/consumer/example.so")
if(NOT EXISTS "${plugin}")
  message(FATAL_ERROR "the consumer built no ${plugin}")
endif()

# pkg-config: the same headers for a plain compiler call
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG) # the README's setup installs it: missing is a broken machine
  set(ENV{PKG_CONFIG_PATH} "${P}/lib/pkgconfig")
  run("pkg-config --cflags mtcs" "${PKG_CONFIG}" --cflags mtcs)
  string(STRIP "${last_out}" cflags)
  string(REGEX REPLACE "^-I" "" incdir "${cflags}")
  get_filename_component(incdir "${incdir}" REALPATH)
  get_filename_component(want "${P}/include" REALPATH)
  if(NOT incdir STREQUAL want)
    message(FATAL_ERROR "pkg-config --cflags mtcs gave '${cflags}', expected -I${want}")
  endif()
  run("cc with pkg-config flags" "${CC}" -shared -fPIC -Wall -Wextra -Werror
      -Wno-unused-parameter ${cflags} -o "${W}/example_pc.so" "${P}/share/mtcs/examples/example.c")
else()
  message(FATAL_ERROR "pkg-config not found (.ci/setup.sh installs it)")
endif()

# the installed runner, its installed goldens (no --golden, no env)
unset(ENV{MTCS_GOLDEN_DIR})
run("the installed mtcs" "${P}/bin/mtcs" run --backend "${plugin}" --filter "neg.masked.f32.*"
    --filter "add.masked_masked.f32.*")
if(NOT last_out MATCHES "([1-9][0-9]*) passed, 0 failed")
  message(FATAL_ERROR "the installed mtcs did not pass the plugin:\n${last_out}")
endif()
if(NOT last_out MATCHES "${P}/bin/../share/mtcs/golden")
  message(FATAL_ERROR "the installed mtcs did not read the installed goldens:\n${last_out}")
endif()
message(STATUS "${last_out}")
