# The trust store (https/src/trust_store.cpp): OpenSSL's subject-name hashes against the
# openssl CLI, hashed directories and bundles of 150 roots generated at test time, colliding
# hashes, public-key pins, and the heap trap over lookups (tests/support/heap_trap.cpp
# replaces malloc for this binary only while a trap is armed).
find_program(STEPBACK_TRUST_TEST_OPENSSL openssl)
if(NOT STEPBACK_TRUST_TEST_OPENSSL)
  set(STEPBACK_TRUST_TEST_OPENSSL "")
endif()
stepback_add_test(trust_store_test ${CMAKE_CURRENT_LIST_DIR}/trust_store_test.cpp
                  ${PROJECT_SOURCE_DIR}/tests/support/heap_trap.cpp)
target_compile_definitions(trust_store_test PRIVATE
  STEPBACK_TEST_OPENSSL="${STEPBACK_TRUST_TEST_OPENSSL}")
set_target_properties(trust_store_test PROPERTIES ENABLE_EXPORTS ON)
target_link_libraries(trust_store_test PRIVATE ${CMAKE_DL_LIBS})

if(CMAKE_CROSSCOMPILING)
  target_compile_definitions(trust_store_test PRIVATE STEPBACK_EMULATED)
endif()
