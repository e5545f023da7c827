# The RetryInfo readers' fuzz target (tests/fuzz/retry_info_fuzz.cpp; see
# fuzz_target.cmake): the readers, the generated descriptors and nanopb's decoder are
# compiled into the libFuzzer target.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz_target.cmake)
enable_language(C)  # nanopb
stepback_fuzz_target(NAME retry_info COMPONENT https
  REPLAY_LIBS stepback::https
  FUZZ_SOURCES ${PROJECT_SOURCE_DIR}/https/src/http/retry_info.cpp
               ${PROJECT_SOURCE_DIR}/https/src/http/retry_info_json.cpp
               ${PROJECT_SOURCE_DIR}/https/src/http/retry_info_proto.cpp
  FUZZ_C_SOURCES ${PROJECT_SOURCE_DIR}/https/proto/stepback_google_protobuf.pb.c
                 ${PROJECT_SOURCE_DIR}/https/proto/stepback_google_rpc.pb.c
                 ${STEPBACK_NANOPB_DIR}/pb_common.c ${STEPBACK_NANOPB_DIR}/pb_decode.c
  FUZZ_LIBS stepback::core
  INCLUDES ${PROJECT_SOURCE_DIR}/https/include)
if(TARGET retry_info_fuzz)
  target_include_directories(retry_info_fuzz PRIVATE ${PROJECT_SOURCE_DIR}/https/proto)
  target_include_directories(retry_info_fuzz SYSTEM PRIVATE "${STEPBACK_NANOPB_DIR}")
endif()
