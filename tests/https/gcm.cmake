# The pipelined AES-GCM (https/gcm/). NIST's vectors are read from mbedTLS's test suite in the
# tree being built; OpenSSL is the differential reference on the host (libssl-dev, test only).
if(TARGET stepback_gcm_objects)
  stepback_add_test(gcm_test gcm_test.cpp)
  target_compile_definitions(gcm_test PRIVATE
    STEPBACK_MBEDTLS_TEST_SUITES="${STEPBACK_MBEDTLS_TREE}/tests/suites")
  if(NOT CMAKE_CROSSCOMPILING)
    find_package(OpenSSL REQUIRED COMPONENTS Crypto)
    target_link_libraries(gcm_test PRIVATE OpenSSL::Crypto)
    target_compile_definitions(gcm_test PRIVATE STEPBACK_GCM_TEST_OPENSSL)
  endif()
endif()
