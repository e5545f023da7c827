# stepback_fuzz_target(): one parser's fuzz target, tests/fuzz/<NAME>_fuzz.cpp, with its
# checked-in corpus tests/fuzz/corpus/<NAME>/, in the shape of http1.cmake:
#   - <NAME>_replay runs the corpus through LLVMFuzzerTestOneInput (replay_main.cpp) with any
#     compiler, the cross builds under qemu included, as the ctest test
#     <COMPONENT>.<NAME>_fuzz_replay; it links the library (REPLAY_LIBS).
#   - With Clang (STEPBACK_BUILD_FUZZERS, the top-level CMakeLists.txt), <NAME>_fuzz is the
#     libFuzzer target, built with -fsanitize=fuzzer,address,undefined and the parser's own
#     sources (FUZZ_SOURCES) compiled into it so that libFuzzer's coverage instruments them;
#     FUZZ_LIBS give it what it needs besides (headers, uninstrumented dependencies).
# INCLUDES are private include directories of both (internal headers under https/src, ...).
# No timed fuzz run is registered with ctest; scripts/fuzz.sh runs the fuzzers by hand:
#   scripts/fuzz.sh -t <NAME> 120
#
# stepback_fuzz_target(NAME <name> COMPONENT <component>
#                      [REPLAY_LIBS <lib>...] [INCLUDES <dir>...]
#                      [FUZZ_SOURCES <file>...] [FUZZ_C_SOURCES <file>...] [FUZZ_LIBS <lib>...])
# FUZZ_C_SOURCES are third-party C sources (nanopb), compiled without our warnings; the
# including file enables C (enable_language() cannot be called from a function).
include_guard(GLOBAL)

function(stepback_fuzz_target)
  cmake_parse_arguments(arg "" "NAME;COMPONENT"
                        "REPLAY_LIBS;INCLUDES;FUZZ_SOURCES;FUZZ_C_SOURCES;FUZZ_LIBS" ${ARGN})
  set(dir "${PROJECT_SOURCE_DIR}/tests/fuzz")
  set(target_source "${dir}/${arg_NAME}_fuzz.cpp")

  add_executable(${arg_NAME}_replay "${target_source}" "${dir}/replay_main.cpp")
  target_include_directories(${arg_NAME}_replay PRIVATE ${arg_INCLUDES})
  target_link_libraries(${arg_NAME}_replay PRIVATE ${arg_REPLAY_LIBS} stepback_warnings)
  add_test(NAME ${arg_COMPONENT}.${arg_NAME}_fuzz_replay
    COMMAND ${arg_NAME}_replay "${dir}/corpus/${arg_NAME}")

  if(STEPBACK_BUILD_FUZZERS)
    if(arg_FUZZ_C_SOURCES)
      set_source_files_properties(${arg_FUZZ_C_SOURCES} PROPERTIES COMPILE_OPTIONS "-w")
    endif()
    add_executable(${arg_NAME}_fuzz "${target_source}" ${arg_FUZZ_SOURCES} ${arg_FUZZ_C_SOURCES})
    target_include_directories(${arg_NAME}_fuzz PRIVATE ${arg_INCLUDES})
    target_link_libraries(${arg_NAME}_fuzz PRIVATE ${arg_FUZZ_LIBS} stepback_warnings)
    target_compile_options(${arg_NAME}_fuzz PRIVATE
      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
    target_link_options(${arg_NAME}_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  endif()
endfunction()
