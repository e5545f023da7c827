# crc32c_bench: CRC-32C throughput of stepback's paths against Intel ISA-L's crc32_iscsi
# (Debian's libisal-dev; without it only stepback's paths are timed), and of a whole
# IntegrityCheck (CRC-32C + MD5) for scale.
add_executable(crc32c_bench ${CMAKE_CURRENT_LIST_DIR}/crc32c_bench.cpp)
target_link_libraries(crc32c_bench PRIVATE
  stepback::https benchmark::benchmark_main $<BUILD_INTERFACE:stepback_warnings>)
find_library(STEPBACK_ISAL_LIBRARY NAMES isal)
find_path(STEPBACK_ISAL_INCLUDE_DIR NAMES isa-l/crc.h)
if(STEPBACK_ISAL_LIBRARY AND STEPBACK_ISAL_INCLUDE_DIR)
  message(STATUS "crc32c_bench: against ISA-L (${STEPBACK_ISAL_LIBRARY})")
  target_compile_definitions(crc32c_bench PRIVATE STEPBACK_BENCH_HAVE_ISAL=1)
  target_include_directories(crc32c_bench SYSTEM PRIVATE ${STEPBACK_ISAL_INCLUDE_DIR})
  target_link_libraries(crc32c_bench PRIVATE ${STEPBACK_ISAL_LIBRARY})
else()
  message(STATUS "crc32c_bench: ISA-L not found (apt-get install libisal-dev), timing stepback only")
endif()
