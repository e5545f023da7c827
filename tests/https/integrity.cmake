# CRC-32C vectors and paths, MD5 vectors, x-goog-hash / Content-MD5 parsing and whole checks,
# with the heap trap around a whole check.
stepback_add_test(integrity_test ${CMAKE_CURRENT_LIST_DIR}/integrity_test.cpp
  ${PROJECT_SOURCE_DIR}/tests/support/heap_trap.cpp)
