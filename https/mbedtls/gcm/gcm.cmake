# The pipelined AES-GCM behind mbedTLS's GCM API (MBEDTLS_GCM_ALT, set in the project's mbedTLS
# configuration), included by cmake/StepbackMbedTLS.cmake once mbedTLS's targets exist. Its
# objects go into mbedcrypto itself: mbedcrypto's own gcm.c compiles to nothing under GCM_ALT, and
# mbedcrypto is then complete (no new archive, no link cycle). They are compiled here, with
# our warnings and without exceptions or RTTI; mbedTLS's headers come in as system headers.
set(STEPBACK_GCM_DIR "${CMAKE_CURRENT_LIST_DIR}")
# The mbedTLS tree, for tests/https/gcm_test (its NIST vectors).
set(STEPBACK_MBEDTLS_TREE "${stepback_mbedtls_dir}" CACHE INTERNAL "mbedTLS source tree being built")
add_library(stepback_gcm_objects OBJECT
  ${STEPBACK_GCM_DIR}/src/gcm_alt.cpp
  ${STEPBACK_GCM_DIR}/src/gcm_x86.cpp
  ${STEPBACK_GCM_DIR}/src/gcm_arm.cpp
  ${STEPBACK_GCM_DIR}/src/gcm_soft.c)
target_include_directories(stepback_gcm_objects PRIVATE ${STEPBACK_GCM_DIR}/include)
target_include_directories(stepback_gcm_objects SYSTEM PRIVATE
  "$<TARGET_PROPERTY:mbedcrypto,INTERFACE_INCLUDE_DIRECTORIES>"
  "${stepback_mbedtls_dir}/library")
target_compile_definitions(stepback_gcm_objects PRIVATE
  "$<TARGET_PROPERTY:mbedcrypto,INTERFACE_COMPILE_DEFINITIONS>")
set_target_properties(stepback_gcm_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
if(NOT MSVC)
  target_compile_options(stepback_gcm_objects PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions;-fno-rtti>"
    # gcm_soft.c is mbedTLS's gcm.c: third-party code, built with mbedTLS's leniency.
    "$<$<COMPILE_LANGUAGE:C>:-w>")
endif()
target_compile_options(stepback_gcm_objects PRIVATE
  "$<$<COMPILE_LANGUAGE:CXX>:$<TARGET_PROPERTY:stepback_warnings,INTERFACE_COMPILE_OPTIONS>>")
target_sources(mbedcrypto PRIVATE $<TARGET_OBJECTS:stepback_gcm_objects>)

# gcm_alt.h is included by mbedtls/gcm.h, so everything that includes mbedTLS needs it.
foreach(target IN ITEMS mbedtls mbedx509 mbedcrypto)
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${STEPBACK_GCM_DIR}/include>")
endforeach()
if(STEPBACK_INSTALL)
  install(FILES "${STEPBACK_GCM_DIR}/include/gcm_alt.h" DESTINATION "${STEPBACK_VENDOR_INCLUDEDIR}")
  install(DIRECTORY "${STEPBACK_GCM_DIR}/include/stepback" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
endif()
