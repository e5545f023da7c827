# Tests of the RetryInfo readers, their fuzz target's corpus replay, and the freshness check
# of the generated nanopb code.
stepback_add_test(retry_info_test
  retry_info_duration_test.cpp
  retry_info_json_test.cpp
  retry_info_proto_test.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/../fuzz/retry_info.cmake)

# Regenerates https/proto/*.pb.[ch] into a temporary folder and diffs: fails when they are
# stale. Without protoc or python3-protobuf it is skipped locally (exit 77) and fails in CI
# (CI set), so a CI machine that lacks them cannot pass silently.
find_program(STEPBACK_BASH bash)
if(STEPBACK_BASH)
  add_test(NAME https.retry_info_proto_fresh
    COMMAND "${STEPBACK_BASH}" "${PROJECT_SOURCE_DIR}/https/proto/generate.sh"
            --nanopb "${STEPBACK_NANOPB_DIR}" --check)
  set_tests_properties(https.retry_info_proto_fresh PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
