# The URL parser's fuzz target (tests/fuzz/url_fuzz.cpp; see fuzz_target.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/fuzz_target.cmake)
stepback_fuzz_target(NAME url COMPONENT https
  REPLAY_LIBS stepback::https
  FUZZ_SOURCES ${PROJECT_SOURCE_DIR}/https/src/http/request_writer.cpp
  FUZZ_LIBS stepback::core
  INCLUDES ${PROJECT_SOURCE_DIR}/https/include)
