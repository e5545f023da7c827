# mbedTLS 3.6 LTS for the HTTPS layer (https/CMakeLists.txt includes this first). Defines the
# targets MbedTLS::mbedtls, MbedTLS::mbedx509 and MbedTLS::mbedcrypto, and the cache variable
# STEPBACK_MBEDTLS_FROM_PACKAGE (the top-level CMakeLists.txt writes find_dependency(MbedTLS)
# into stepbackConfig.cmake when it is ON).
#
# Where mbedTLS comes from, in this order of preference:
#   1. -DSTEPBACK_MBEDTLS_SOURCE_DIR=/path: a source tree the user brings (an Android app's
#      own checkout); built here with our configuration.
#   2. third_party/mbedtls, fetched by scripts/fetch_deps.sh (Debian trixie source package);
#      built here with our configuration.
#   3. An installed MbedTLS 3.6 CMake package (find_package(MbedTLS 3.6 CONFIG)). It keeps the
#      configuration it was built with, so features of ours may be missing (tls_arena_init()
#      reports kError without MBEDTLS_PLATFORM_MEMORY).
# Nothing found stops the configure and says to run scripts/fetch_deps.sh.
#
# Source trees go through mbedTLS's own CMake (static libraries only, no programs, no tests,
# its warnings not fatal) with MBEDTLS_CONFIG_FILE = https/mbedtls/stepback_mbedtls_config.h,
# which mbedTLS also exports as a public definition so that our code sees the same
# configuration.
# The subdirectory is SYSTEM: our warnings-as-errors never apply to mbedTLS sources or headers.
# Such a build also gets our heap-free gmtime (https/mbedtls/mbedtls_time.cpp) behind mbedx509 and
# the pipelined AES-GCM (https/mbedtls/gcm/gcm.cmake) inside mbedcrypto, and is installed with stepback.
include_guard(GLOBAL)

set(STEPBACK_MBEDTLS_SOURCE_DIR "" CACHE PATH
  "mbedTLS 3.6 source tree to build (default: third_party/mbedtls, then an installed package)")
set(STEPBACK_MBEDTLS_CONFIG_FILE "${PROJECT_SOURCE_DIR}/https/mbedtls/stepback_mbedtls_config.h")

# The TLS record buffers (plaintext bytes; the configuration file turns them into
# MBEDTLS_SSL_IN_CONTENT_LEN and MBEDTLS_SSL_OUT_CONTENT_LEN). The input buffer must take the
# largest record a server sends: 16384 unless servers honour max_fragment_length
# (TlsClientConfig::set_max_fragment_length) or are configured for small records; the
# `small-ram` preset builds with 4096 (docs/small_ram.md).
set(STEPBACK_TLS_IN_CONTENT_LEN 16384 CACHE STRING
  "Plaintext bytes of the TLS input buffer, 512..16384 (a full TLS record is 16384)")
set(STEPBACK_TLS_OUT_CONTENT_LEN 4096 CACHE STRING
  "Plaintext bytes of the TLS output buffer, 512..16384 (records sent are at most this long)")
foreach(var IN ITEMS STEPBACK_TLS_IN_CONTENT_LEN STEPBACK_TLS_OUT_CONTENT_LEN)
  if(NOT ${var} MATCHES "^[0-9]+$" OR ${var} LESS 512 OR ${var} GREATER 16384)
    message(FATAL_ERROR "${var}='${${var}}' is not a buffer size in bytes from 512 to 16384")
  endif()
endforeach()
# mbedTLS trading handshake CPU for RAM (the configuration file says how), and the stepback
# program's small buffers; the `small-ram` preset sets it with 4 KiB record buffers.
option(STEPBACK_SMALL_RAM "Build for devices with a few tens of KiB for a download (mbedTLS and tools)" OFF)
if(STEPBACK_SMALL_RAM)
  set(stepback_small_ram 1)
else()
  set(stepback_small_ram 0)
endif()
# mbedTLS's server side (TLS server, session-ticket keys, writing keys and certificates): the
# library is a client and never calls it; the tests and `stepback demo` run in-process
# servers. AUTO: ON when the tests or the tools are built, OFF otherwise (an app's build, as
# bench/apk_footprint.sh's), which leaves out what a client never runs.
set(STEPBACK_TLS_SERVER AUTO CACHE STRING
  "Build mbedTLS's server side too (needed by the tests and tools): AUTO, ON or OFF")
set_property(CACHE STEPBACK_TLS_SERVER PROPERTY STRINGS AUTO ON OFF)
if(STEPBACK_TLS_SERVER STREQUAL "AUTO")
  if(STEPBACK_BUILD_TESTS OR STEPBACK_BUILD_TOOLS)
    set(stepback_tls_server 1)
  else()
    set(stepback_tls_server 0)
  endif()
elseif(STEPBACK_TLS_SERVER)
  set(stepback_tls_server 1)
else()
  set(stepback_tls_server 0)
  if(STEPBACK_BUILD_TESTS OR STEPBACK_BUILD_TOOLS)
    message(FATAL_ERROR "STEPBACK_TLS_SERVER=OFF leaves out the TLS server that the tests and "
      "`stepback demo` run: also set STEPBACK_BUILD_TESTS=OFF and STEPBACK_BUILD_TOOLS=OFF, "
      "or STEPBACK_TLS_SERVER=AUTO")
  endif()
endif()
message(STATUS "TLS record buffers: ${STEPBACK_TLS_IN_CONTENT_LEN} in, "
               "${STEPBACK_TLS_OUT_CONTENT_LEN} out; small-RAM build: ${STEPBACK_SMALL_RAM}; "
               "TLS server side: ${stepback_tls_server}")
# Public definitions of the mbedTLS targets, so that the library and everything that includes
# its headers read the same configuration (stepback::https's kTlsInputBufferBytes, the tools).
set(STEPBACK_MBEDTLS_DEFINITIONS
  "STEPBACK_TLS_IN_CONTENT_LEN=${STEPBACK_TLS_IN_CONTENT_LEN}"
  "STEPBACK_TLS_OUT_CONTENT_LEN=${STEPBACK_TLS_OUT_CONTENT_LEN}"
  "STEPBACK_SMALL_RAM=${stepback_small_ram}"
  "STEPBACK_TLS_SERVER=${stepback_tls_server}")
set_property(GLOBAL PROPERTY STEPBACK_MBEDTLS_DEFINITIONS ${STEPBACK_MBEDTLS_DEFINITIONS})

# Sets <out> to the MBEDTLS_VERSION_STRING of the source tree <dir>, or "" if there is none.
function(stepback_mbedtls_tree_version dir out)
  set(version "")
  if(EXISTS "${dir}/include/mbedtls/build_info.h" AND EXISTS "${dir}/CMakeLists.txt")
    file(STRINGS "${dir}/include/mbedtls/build_info.h" line
         REGEX "^#define MBEDTLS_VERSION_STRING +\"[0-9.]+\"")
    string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" version "${line}")
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

set(stepback_mbedtls_dir "")
if(STEPBACK_MBEDTLS_SOURCE_DIR)
  get_filename_component(stepback_mbedtls_dir "${STEPBACK_MBEDTLS_SOURCE_DIR}" ABSOLUTE)
  set(stepback_mbedtls_origin "STEPBACK_MBEDTLS_SOURCE_DIR")
elseif(EXISTS "${PROJECT_SOURCE_DIR}/third_party/mbedtls/CMakeLists.txt")
  get_filename_component(stepback_mbedtls_dir "${PROJECT_SOURCE_DIR}/third_party/mbedtls" REALPATH)
  set(stepback_mbedtls_origin "third_party/mbedtls")
endif()

if(stepback_mbedtls_dir)
  stepback_mbedtls_tree_version("${stepback_mbedtls_dir}" stepback_mbedtls_version)
  if(NOT stepback_mbedtls_version MATCHES "^3\\.6\\.")
    message(FATAL_ERROR "${stepback_mbedtls_origin} = ${stepback_mbedtls_dir} is not an mbedTLS "
      "3.6 source tree (found version '${stepback_mbedtls_version}'). Point "
      "STEPBACK_MBEDTLS_SOURCE_DIR at an mbedTLS 3.6.x checkout, or run scripts/fetch_deps.sh.")
  endif()
  message(STATUS "mbedTLS ${stepback_mbedtls_version} from ${stepback_mbedtls_origin} "
                 "(${stepback_mbedtls_dir}), built with ${STEPBACK_MBEDTLS_CONFIG_FILE}")
  # mbedTLS's own options, forced: they describe how we build a dependency, not user choices.
  set(ENABLE_PROGRAMS OFF CACHE BOOL "mbedTLS: build its programs" FORCE)
  set(ENABLE_TESTING OFF CACHE BOOL "mbedTLS: build its tests" FORCE)
  set(MBEDTLS_FATAL_WARNINGS OFF CACHE BOOL "mbedTLS: warnings as errors" FORCE)
  set(USE_STATIC_MBEDTLS_LIBRARY ON CACHE BOOL "mbedTLS: static libraries" FORCE)
  set(USE_SHARED_MBEDTLS_LIBRARY OFF CACHE BOOL "mbedTLS: shared libraries" FORCE)
  set(DISABLE_PACKAGE_CONFIG_AND_INSTALL ON CACHE BOOL "mbedTLS: install rules" FORCE)
  set(GEN_FILES OFF CACHE BOOL "mbedTLS: regenerate generated sources" FORCE)
  set(MBEDTLS_CONFIG_FILE "${STEPBACK_MBEDTLS_CONFIG_FILE}" CACHE FILEPATH
      "mbedTLS configuration file (set by stepback)" FORCE)
  add_subdirectory("${stepback_mbedtls_dir}" "${PROJECT_BINARY_DIR}/third_party/mbedtls"
                   EXCLUDE_FROM_ALL SYSTEM)
  foreach(target IN ITEMS mbedtls mbedx509 mbedcrypto)
    target_compile_definitions(${target} PUBLIC ${STEPBACK_MBEDTLS_DEFINITIONS})
  endforeach()
  # The config sets MBEDTLS_PLATFORM_GMTIME_R_ALT: mbedx509 checks certificate dates with our
  # heap-free UTC conversion, linked behind it so every user of mbedx509 gets it.
  add_library(stepback_mbedtls_time STATIC ${PROJECT_SOURCE_DIR}/https/mbedtls/mbedtls_time.cpp)
  target_link_libraries(stepback_mbedtls_time PRIVATE MbedTLS::mbedcrypto $<BUILD_INTERFACE:stepback_warnings>)
  if(NOT MSVC)
    target_compile_options(stepback_mbedtls_time PRIVATE -fno-exceptions -fno-rtti)
  endif()
  target_link_libraries(mbedx509 PUBLIC stepback_mbedtls_time)
  set(STEPBACK_MBEDTLS_FROM_PACKAGE OFF CACHE INTERNAL "mbedTLS is an installed package")

  # Installed with stepback, as stepback::mbedtls, stepback::mbedx509, stepback::mbedcrypto.
  # mbedTLS's own install stays off: it would export MBEDTLS_CONFIG_FILE as the path into our
  # source tree, and put a library built with our configuration into the shared include/
  # and lib/, over any system mbedTLS. Instead the archives go to lib/stepback/vendor, the
  # headers and our configuration file to include/stepback/vendor, and the exported
  # definition names the configuration file relative to that directory.
  if(STEPBACK_INSTALL)
    foreach(target IN ITEMS mbedtls mbedx509 mbedcrypto)
      set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES
        "$<BUILD_INTERFACE:${stepback_mbedtls_dir}/include>"
        "$<INSTALL_INTERFACE:${STEPBACK_VENDOR_INCLUDEDIR}>")
      set_property(TARGET ${target} PROPERTY INTERFACE_COMPILE_DEFINITIONS
        "$<BUILD_INTERFACE:MBEDTLS_CONFIG_FILE=\"${STEPBACK_MBEDTLS_CONFIG_FILE}\">"
        "$<INSTALL_INTERFACE:MBEDTLS_CONFIG_FILE=\"stepback_mbedtls_config.h\">"
        ${STEPBACK_MBEDTLS_DEFINITIONS})
    endforeach()
    set_target_properties(stepback_mbedtls_time PROPERTIES EXPORT_NAME mbedtls_time)
    set(stepback_mbedtls_archives mbedtls mbedx509 stepback_mbedtls_time mbedcrypto)
    # Upstream trees (not Debian's) also build these two and link them into mbedcrypto.
    foreach(target IN ITEMS everest p256m)
      if(TARGET ${target})
        list(APPEND stepback_mbedtls_archives ${target})
      endif()
    endforeach()
    stepback_install(TARGETS ${stepback_mbedtls_archives} DESTINATION "${STEPBACK_VENDOR_LIBDIR}")
    # In link order, for the pkg-config file (top-level CMakeLists.txt).
    set_property(GLOBAL PROPERTY STEPBACK_VENDOR_ARCHIVES ${stepback_mbedtls_archives})
    install(DIRECTORY "${stepback_mbedtls_dir}/include/mbedtls" "${stepback_mbedtls_dir}/include/psa"
            DESTINATION "${STEPBACK_VENDOR_INCLUDEDIR}" FILES_MATCHING PATTERN "*.h")
    install(FILES "${STEPBACK_MBEDTLS_CONFIG_FILE}" DESTINATION "${STEPBACK_VENDOR_INCLUDEDIR}")
  endif()
  # The pipelined AES-GCM (MBEDTLS_GCM_ALT), compiled into mbedcrypto; after the include
  # directories above, which it extends.
  include(${PROJECT_SOURCE_DIR}/https/mbedtls/gcm/gcm.cmake)
  # p256-m, mbedTLS's P-256 driver (3rdparty/p256-m): Debian's tree leaves 3rdparty/ out of
  # mbedTLS's CMake, so its two sources are compiled into mbedcrypto here. They compile to
  # nothing unless the configuration sets MBEDTLS_PSA_P256M_DRIVER_ENABLED.
  set(stepback_p256m_dir "${stepback_mbedtls_dir}/3rdparty/p256-m")
  if(NOT TARGET p256m AND EXISTS "${stepback_p256m_dir}/p256-m/p256-m.c")
    target_sources(mbedcrypto PRIVATE "${stepback_p256m_dir}/p256-m_driver_entrypoints.c"
                                      "${stepback_p256m_dir}/p256-m/p256-m.c")
    target_include_directories(mbedcrypto PRIVATE "${stepback_p256m_dir}")
  endif()
  # mbedTLS's time source (MBEDTLS_PLATFORM_STD_TIME): the wall clock of the handshake's
  # TlsClientConfig, compiled into mbedcrypto as the GCM engine is (platform.c names it).
  add_library(stepback_certificate_clock OBJECT ${PROJECT_SOURCE_DIR}/https/mbedtls/certificate_clock.cpp)
  target_include_directories(stepback_certificate_clock PRIVATE ${PROJECT_SOURCE_DIR}/core/include)
  target_include_directories(stepback_certificate_clock SYSTEM PRIVATE
    "$<TARGET_PROPERTY:mbedcrypto,INTERFACE_INCLUDE_DIRECTORIES>")
  target_compile_definitions(stepback_certificate_clock PRIVATE
    "$<TARGET_PROPERTY:mbedcrypto,INTERFACE_COMPILE_DEFINITIONS>")
  set_target_properties(stepback_certificate_clock PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(NOT MSVC)
    target_compile_options(stepback_certificate_clock PRIVATE -fno-exceptions -fno-rtti)
  endif()
  target_compile_options(stepback_certificate_clock PRIVATE
    "$<TARGET_PROPERTY:stepback_warnings,INTERFACE_COMPILE_OPTIONS>")
  target_sources(mbedcrypto PRIVATE $<TARGET_OBJECTS:stepback_certificate_clock>)
  set(STEPBACK_CERTIFICATE_CLOCK ON)
else()
  find_package(MbedTLS 3.6 CONFIG QUIET)
  if(NOT MbedTLS_FOUND OR NOT MbedTLS_VERSION VERSION_LESS 3.7)
    message(FATAL_ERROR "mbedTLS 3.6 not found. Run scripts/fetch_deps.sh (fetches it into "
      "third_party/), or configure with -DSTEPBACK_MBEDTLS_SOURCE_DIR=/path/to/mbedtls-3.6, "
      "or install an MbedTLS 3.6 CMake package (MbedTLS_DIR).")
  endif()
  message(STATUS "mbedTLS ${MbedTLS_VERSION} from the installed package (${MbedTLS_DIR}), "
                 "with the configuration it was built with")
  # The installed stepback package then finds it with find_dependency(MbedTLS).
  set(STEPBACK_MBEDTLS_FROM_PACKAGE ON CACHE INTERNAL "mbedTLS is an installed package")
endif()
