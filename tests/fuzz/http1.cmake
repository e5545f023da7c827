# The response parser's fuzz target. The replay executable runs the checked-in corpus on
# every ctest run with any compiler; with Clang the libFuzzer target is built as well:
#   http1_response_parser_fuzz -max_total_time=120 SCRATCH_DIR tests/fuzz/corpus/response
set(STEPBACK_HTTP1_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(http1_response_parser_replay
  ${STEPBACK_HTTP1_FUZZ_DIR}/response_parser_fuzz.cpp ${STEPBACK_HTTP1_FUZZ_DIR}/replay_main.cpp)
target_link_libraries(http1_response_parser_replay PRIVATE stepback::https stepback_warnings)
add_test(NAME https.http1_response_parser_fuzz_replay
  COMMAND http1_response_parser_replay ${STEPBACK_HTTP1_FUZZ_DIR}/corpus/response)

if(STEPBACK_BUILD_FUZZERS)
  # The parser is compiled into the target so that libFuzzer's coverage instruments it.
  add_executable(http1_response_parser_fuzz
    ${STEPBACK_HTTP1_FUZZ_DIR}/response_parser_fuzz.cpp
    ${PROJECT_SOURCE_DIR}/https/src/http/response_parser.cpp)
  target_include_directories(http1_response_parser_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/https/include)
  target_link_libraries(http1_response_parser_fuzz PRIVATE stepback_warnings)
  target_compile_options(http1_response_parser_fuzz PRIVATE
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  target_link_options(http1_response_parser_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
endif()
