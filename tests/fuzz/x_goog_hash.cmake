# The fuzz target of the digest parsers (tests/fuzz/x_goog_hash_fuzz.cpp; see
# fuzz_target.cmake): IntegrityCheck's x-goog-hash and Content-MD5 readers and the upload's
# metadata JSON scan. mbedTLS (MD5) is linked uninstrumented.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz_target.cmake)
stepback_fuzz_target(NAME x_goog_hash COMPONENT transfer
  REPLAY_LIBS stepback::transfer
  FUZZ_SOURCES ${PROJECT_SOURCE_DIR}/https/src/integrity/integrity.cpp
               ${PROJECT_SOURCE_DIR}/https/src/integrity/base64.cpp
               ${PROJECT_SOURCE_DIR}/https/src/integrity/crc32c.cpp
               ${PROJECT_SOURCE_DIR}/transfer/src/metadata_scan.cpp
  FUZZ_LIBS stepback::core MbedTLS::mbedcrypto
  INCLUDES ${PROJECT_SOURCE_DIR}/https/include ${PROJECT_SOURCE_DIR}/transfer/include)
