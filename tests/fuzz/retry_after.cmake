# The HTTP-date and Retry-After parsers' fuzz target (tests/fuzz/retry_after_fuzz.cpp; see
# fuzz_target.cmake). The heap-free gmtime it checks dates with comes with them.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz_target.cmake)
if(TARGET stepback_mbedtls_time)
  set(stepback_fuzz_gmtime ${PROJECT_SOURCE_DIR}/https/mbedtls/mbedtls_time.cpp)
endif()
stepback_fuzz_target(NAME retry_after COMPONENT https
  REPLAY_LIBS stepback::https
  FUZZ_SOURCES ${PROJECT_SOURCE_DIR}/https/src/http/http_date.cpp ${stepback_fuzz_gmtime}
  FUZZ_LIBS stepback::core MbedTLS::mbedcrypto
  INCLUDES ${PROJECT_SOURCE_DIR}/https/include)
