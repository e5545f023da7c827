# Long-running operations (google.longrunning.Operation) followed on the Client: the mutation,
# its Operation, polls per a polling policy until done (src/operation.cpp), and the bounded
# JSON reader of Operation and google.rpc.Status (src/operation_json.cpp). Included from
# transfer/CMakeLists.txt once stepback_transfer is defined; the sources join that library
# and its flags (no exceptions, no RTTI, our warnings).
target_sources(stepback_transfer PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/src/operation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/operation_json.cpp)
