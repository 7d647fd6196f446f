# cli_help_env.cmake - every MTCS_* environment variable that the runner or a
# backend reads (a getenv("MTCS_...") in conformance/ or impl/) is named in
# the "environment:" section of `mtcs --help`, so a new one cannot go
# undocumented.
#   cmake -DMTCS=path/to/mtcs -DSRC=source-dir -DBIN=build-dir -P tests/cli_help_env.cmake

cmake_minimum_required(VERSION 3.25)
foreach(v MTCS SRC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cli_help_env.cmake needs -D${v}=...")
  endif()
endforeach()

execute_process(COMMAND ${MTCS} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mtcs --help exited ${rc}")
endif()
string(FIND "${help}" "\nenvironment:\n" at)
if(at LESS 0)
  message(FATAL_ERROR "mtcs --help has no \"environment:\" section:\n${help}")
endif()
string(SUBSTRING "${help}" ${at} -1 env_section)

file(GLOB_RECURSE srcs ${SRC}/conformance/*.c ${SRC}/conformance/*.h ${SRC}/impl/*.c
     ${SRC}/impl/*.h ${SRC}/impl/*.cu)
set(names "")
foreach(f IN LISTS srcs)
  file(STRINGS "${f}" lines REGEX "getenv\\(\"MTCS_[A-Z0-9_]+\"\\)")
  foreach(l IN LISTS lines)
    string(REGEX MATCHALL "getenv\\(\"MTCS_[A-Z0-9_]+\"\\)" calls "${l}")
    foreach(c IN LISTS calls)
      string(REGEX REPLACE "getenv\\(\"(MTCS_[A-Z0-9_]+)\"\\)" "\\1" n "${c}")
      list(APPEND names ${n})
    endforeach()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES names)
list(LENGTH names count)
if(count LESS 5) # six today: the pattern itself would be stale
  message(FATAL_ERROR "found only ${count} getenv(\"MTCS_...\") under ${SRC} (${names}): "
                      "is this test's pattern stale?")
endif()
set(missing "")
foreach(n IN LISTS names)
  string(FIND "${env_section}" "\n  ${n} " pos)
  if(pos LESS 0)
    list(APPEND missing ${n})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "mtcs --help's environment section does not name: ${missing}")
endif()
message(STATUS "mtcs --help names all ${count} variables read: ${names}")
