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
# Under qemu-aarch64 -cpu max (toolchains/aarch64-linux-gnu.cmake) the ARMv8 engine must be the
# one detected: the test fails if detection silently fell back to software.
if(TARGET gcm_test AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$"
   AND "${CMAKE_CROSSCOMPILING_EMULATOR}" MATCHES "-cpu;max")
  target_compile_definitions(gcm_test PRIVATE STEPBACK_EXPECT_GCM_ENGINE="armv8-aes-pmull")
endif()
