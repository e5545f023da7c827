# c-ares, the asynchronous DNS resolver behind CaresResolver (https/src/dns/cares_resolver.cpp),
# for the HTTPS layer (https/CMakeLists.txt). Sets STEPBACK_HAVE_CARES (also in the cache, for
# the tests) and, when it is ON, defines the target c-ares::cares.
#
# Where c-ares comes from, in this order of preference:
#   1. -DSTEPBACK_CARES_SOURCE_DIR=/path: a source tree the user brings (an Android app's own
#      checkout).
#   2. third_party/c-ares, fetched by scripts/fetch_deps.sh (Debian trixie source package, or
#      its pinned upstream tarball; see there).
# Either is built here, with this project's toolchain, as one static, position-independent
# archive (it can go into an Android .so), without threads (stepback steps it from the app's
# loop: no event thread, no locks), tools, tests or install rules of its own. Nothing found
# stops the configure and says to run scripts/fetch_deps.sh. -DSTEPBACK_CARES=OFF leaves
# c-ares out: names then need the app's own Resolver (a FixedResolver with addresses it resolved itself).
#
# The subdirectory is SYSTEM: our warnings-as-errors never apply to c-ares sources or headers.
include_guard(GLOBAL)

option(STEPBACK_CARES "Build the c-ares resolver (CaresResolver)" ON)
set(STEPBACK_CARES_SOURCE_DIR "" CACHE PATH
  "c-ares 1.34 source tree to build (default: third_party/c-ares)")

# Sets <out> to the ARES_VERSION_STR of the source tree <dir>, or "" if there is none.
function(stepback_cares_tree_version dir out)
  set(version "")
  if(EXISTS "${dir}/include/ares_version.h" AND EXISTS "${dir}/CMakeLists.txt")
    file(STRINGS "${dir}/include/ares_version.h" line REGEX "^#define ARES_VERSION_STR +\"[0-9.]+\"")
    string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" version "${line}")
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

if(NOT STEPBACK_CARES OR NOT CMAKE_SYSTEM_NAME MATCHES "^(Linux|Android|Darwin|iOS)$")
  set(STEPBACK_HAVE_CARES OFF)
  set(STEPBACK_HAVE_CARES OFF CACHE INTERNAL "CaresResolver is built")
  return()
endif()

set(stepback_cares_dir "")
if(STEPBACK_CARES_SOURCE_DIR)
  get_filename_component(stepback_cares_dir "${STEPBACK_CARES_SOURCE_DIR}" ABSOLUTE)
  set(stepback_cares_origin "STEPBACK_CARES_SOURCE_DIR")
elseif(EXISTS "${PROJECT_SOURCE_DIR}/third_party/c-ares/CMakeLists.txt")
  get_filename_component(stepback_cares_dir "${PROJECT_SOURCE_DIR}/third_party/c-ares" REALPATH)
  set(stepback_cares_origin "third_party/c-ares")
else()
  message(FATAL_ERROR "c-ares not found. Run scripts/fetch_deps.sh c-ares (fetches it into "
    "third_party/), or configure with -DSTEPBACK_CARES_SOURCE_DIR=/path/to/c-ares-1.34, or "
    "with -DSTEPBACK_CARES=OFF to bring your own Resolver.")
endif()

stepback_cares_tree_version("${stepback_cares_dir}" stepback_cares_version)
# 1.34: ares_process_fds(), ares_dns_record, CARES_THREADS and the CMake options below.
if(NOT stepback_cares_version MATCHES "^1\\.(3[4-9]|[4-9][0-9])\\.")
  message(FATAL_ERROR "${stepback_cares_origin} = ${stepback_cares_dir} is not a c-ares 1.34 or "
    "later source tree (found version '${stepback_cares_version}'). Run scripts/fetch_deps.sh c-ares.")
endif()
message(STATUS "c-ares ${stepback_cares_version} from ${stepback_cares_origin} (${stepback_cares_dir})")

# c-ares's own options, forced: they describe how we build a dependency, not user choices.
set(CARES_STATIC ON CACHE BOOL "c-ares: static library" FORCE)
set(CARES_SHARED OFF CACHE BOOL "c-ares: shared library" FORCE)
set(CARES_STATIC_PIC ON CACHE BOOL "c-ares: position-independent static library" FORCE)
set(CARES_INSTALL OFF CACHE BOOL "c-ares: install rules" FORCE)
set(CARES_BUILD_TOOLS OFF CACHE BOOL "c-ares: adig, ahost" FORCE)
set(CARES_BUILD_TESTS OFF CACHE BOOL "c-ares: tests" FORCE)
set(CARES_BUILD_CONTAINER_TESTS OFF CACHE BOOL "c-ares: container tests" FORCE)
set(CARES_THREADS OFF CACHE BOOL "c-ares: thread safety and the event thread" FORCE)
set(CARES_SYMBOL_HIDING OFF CACHE BOOL "c-ares: symbol hiding (shared only)" FORCE)
add_subdirectory("${stepback_cares_dir}" "${PROJECT_BINARY_DIR}/third_party/c-ares"
                 EXCLUDE_FROM_ALL SYSTEM)
# c-ares spends its time waiting on the network, so it is compiled for size in every build type
# (an app's release build is often -O2), and with a section per function and object so that an
# app's --gc-sections keeps only what CaresResolver reaches, whatever flags the app passes.
# (A generator expression, evaluated for c-ares's C sources: C is a language c-ares's own
# project() enables, not ours.)
target_compile_options(c-ares PRIVATE
  "$<$<COMPILE_LANG_AND_ID:C,GNU,Clang,AppleClang>:-Os;-ffunction-sections;-fdata-sections>")
set(STEPBACK_HAVE_CARES ON)
set(STEPBACK_HAVE_CARES ON CACHE INTERNAL "CaresResolver is built")

# Installed with stepback, as stepback::cares, beside mbedTLS in lib/stepback/vendor, with
# its headers (ares.h and the generated ares_build.h) in include/stepback/vendor.
if(STEPBACK_INSTALL)
  set_property(TARGET c-ares PROPERTY INTERFACE_INCLUDE_DIRECTORIES
    "$<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/third_party/c-ares>"
    "$<BUILD_INTERFACE:${stepback_cares_dir}/include>"
    "$<INSTALL_INTERFACE:${STEPBACK_VENDOR_INCLUDEDIR}>")
  set_target_properties(c-ares PROPERTIES EXPORT_NAME cares)
  stepback_install(TARGETS c-ares DESTINATION "${STEPBACK_VENDOR_LIBDIR}")
  set_property(GLOBAL APPEND PROPERTY STEPBACK_VENDOR_ARCHIVES c-ares)
  install(FILES "${stepback_cares_dir}/include/ares.h" "${stepback_cares_dir}/include/ares_dns.h"
                "${stepback_cares_dir}/include/ares_dns_record.h"
                "${stepback_cares_dir}/include/ares_nameser.h"
                "${stepback_cares_dir}/include/ares_version.h"
                "${PROJECT_BINARY_DIR}/third_party/c-ares/ares_build.h"
          DESTINATION "${STEPBACK_VENDOR_INCLUDEDIR}")
endif()
