# Builds one consumer project the way a user would, for the CTest tests consumers.*.
#
#   cmake -DGENERATOR=<name> -DSOURCE=<dir> -DBINARY=<dir> -DINITIAL_CACHE=<file> [-DCONFIG=<cfg>]
#         [-DEXPECT=pass|configure_fail|build_fail] [-DREGEX=<regex>]
#         [-DELF=<file> -DELF_MACHINE=<hex> [-DSIZE_TOOL=<exe>]] -P run_consumer.cmake
#   cmake -DINSTALL_TREE=<build dir> -DPREFIX=<dir> [-DCONFIG=<cfg>] -P run_consumer.cmake
#
# The first form starts from an empty BINARY, configures with -C INITIAL_CACHE (the
# compilers, flags, toolchain and package locations of the build under test), builds, and
# with EXPECT=pass (the default) runs the project's own tests with ctest. With *_fail that
# step must fail and its output match REGEX, so an unrelated failure does not pass.
# ELF (under BINARY) names a program built for a target nothing here runs: it must be an ELF
# file for the machine ELF_MACHINE (e_machine as its two bytes in hex, little-endian: 2800 is
# ARM), and SIZE_TOOL prints its section sizes.
# The second form installs INSTALL_TREE into an emptied PREFIX.
cmake_minimum_required(VERSION 3.25)

if(NOT CONFIG)
  set(CONFIG Release)
endif()

if(DEFINED INSTALL_TREE)
  file(REMOVE_RECURSE "${PREFIX}")
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${INSTALL_TREE}" --prefix "${PREFIX}"
                          --config "${CONFIG}"
                  COMMAND_ECHO STDOUT RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${result})")
  endif()
  return()
endif()

if(NOT EXPECT)
  set(EXPECT pass)
endif()

# run(<step> <command>...): runs a step, echoing its output; returns its result and output.
macro(run step)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output COMMAND_ECHO STDOUT)
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  message("${output}")
  message("-- ${step}: exit ${result}, ${seconds} s")
  if(EXPECT STREQUAL "${step}_fail")
    if(result EQUAL 0)
      message(FATAL_ERROR "${step} succeeded, but it must fail")
    elseif(NOT output MATCHES "${REGEX}")
      message(FATAL_ERROR "${step} failed, but without the expected message /${REGEX}/")
    endif()
    message("-- ${step} failed as expected: /${REGEX}/ found")
    return()
  elseif(NOT result EQUAL 0)
    message(FATAL_ERROR "${step} failed (${result})")
  endif()
endmacro()

file(REMOVE_RECURSE "${BINARY}")
run(configure "${CMAKE_COMMAND}" -G "${GENERATOR}" -S "${SOURCE}" -B "${BINARY}" -C "${INITIAL_CACHE}")
run(build "${CMAKE_COMMAND}" --build "${BINARY}" --config "${CONFIG}")
if(EXPECT STREQUAL "pass" AND EXISTS "${BINARY}/CTestTestfile.cmake")
  run(test "${CMAKE_CTEST_COMMAND}" --test-dir "${BINARY}" -C "${CONFIG}" --output-on-failure
      --no-tests=error)
endif()
if(EXPECT STREQUAL "pass" AND ELF)
  set(elf "${BINARY}/${ELF}")
  if(NOT EXISTS "${elf}")
    message(FATAL_ERROR "the build made no ${ELF}")
  endif()
  file(READ "${elf}" head LIMIT 20 HEX)
  string(SUBSTRING "${head}" 36 4 machine)
  if(NOT head MATCHES "^7f454c46" OR NOT machine STREQUAL "${ELF_MACHINE}")
    message(FATAL_ERROR "${ELF} is not an ELF file for machine ${ELF_MACHINE}: it starts ${head}")
  endif()
  message("-- ${ELF}: an ELF file for machine ${ELF_MACHINE}")
  if(SIZE_TOOL)
    run(size "${SIZE_TOOL}" "${elf}")
  endif()
endif()
