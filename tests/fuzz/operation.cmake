# The Operation JSON reader's fuzz target (tests/fuzz/operation_json_fuzz.cpp). As for the
# response parser (http1.cmake): the replay executable runs the checked-in corpus on every
# ctest run with any compiler; with Clang the libFuzzer target is built as well, and ctest
# runs it for 20 s (transfer.operation_json_fuzz_short; new inputs go to a scratch folder in
# the build tree, never into the checked-in corpus). A longer run, by hand:
#   mkdir -p /tmp/opfuzz && build/asan-ubsan/tests/transfer/operation_json_fuzz \
#     -max_total_time=600 /tmp/opfuzz tests/fuzz/corpus/operation
set(STEPBACK_OPERATION_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(operation_json_replay
  ${STEPBACK_OPERATION_FUZZ_DIR}/operation_json_fuzz.cpp ${STEPBACK_OPERATION_FUZZ_DIR}/replay_main.cpp)
target_link_libraries(operation_json_replay PRIVATE stepback::transfer
                                                    stepback_warnings)
add_test(NAME transfer.operation_json_fuzz_replay
  COMMAND operation_json_replay ${STEPBACK_OPERATION_FUZZ_DIR}/corpus/operation)

if(STEPBACK_BUILD_FUZZERS)
  # The reader is compiled into the target so that libFuzzer's coverage instruments it; the
  # RetryInfo reader it is checked against comes from the library.
  add_executable(operation_json_fuzz
    ${STEPBACK_OPERATION_FUZZ_DIR}/operation_json_fuzz.cpp
    ${PROJECT_SOURCE_DIR}/transfer/src/operation_json.cpp)
  target_include_directories(operation_json_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/transfer/include)
  target_link_libraries(operation_json_fuzz PRIVATE stepback::https stepback_warnings)
  target_compile_options(operation_json_fuzz PRIVATE
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  target_link_options(operation_json_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  set(STEPBACK_OPERATION_FUZZ_SCRATCH ${CMAKE_CURRENT_BINARY_DIR}/operation_json_fuzz_scratch)
  file(MAKE_DIRECTORY ${STEPBACK_OPERATION_FUZZ_SCRATCH})
  add_test(NAME transfer.operation_json_fuzz_short
    COMMAND operation_json_fuzz -max_total_time=20 -timeout=10 -max_len=4096
            ${STEPBACK_OPERATION_FUZZ_SCRATCH} ${STEPBACK_OPERATION_FUZZ_DIR}/corpus/operation)
  set_tests_properties(transfer.operation_json_fuzz_short PROPERTIES TIMEOUT 120)
endif()
