# The fuzz target of the two range parsers (tests/fuzz/content_range_fuzz.cpp; see
# fuzz_target.cmake): a 206's Content-Range (https/src/http/content_range.hpp) and a 308's Range
# (transfer/src/held_range.hpp). Both are header-only, so the libFuzzer target needs no
# library source.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz_target.cmake)
stepback_fuzz_target(NAME content_range COMPONENT transfer
  REPLAY_LIBS stepback::https
  FUZZ_LIBS stepback::core
  INCLUDES ${PROJECT_SOURCE_DIR}/https/include ${PROJECT_SOURCE_DIR}/https/src/http
           ${PROJECT_SOURCE_DIR}/transfer/src)
