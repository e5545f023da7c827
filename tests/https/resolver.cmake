# The resolver seam's portable parts: the DNS answer parser AndroidResolver uses (c-ares's
# ares_dns_parse), FixedResolver, and the connector's handling of numeric hosts and lookup
# failures (scripted resolvers, no network). CaresResolver against a real DNS server is in
# tests/integration/resolver.cmake.
if(CMAKE_SYSTEM_NAME MATCHES "^(Linux|Android|Darwin|iOS)$")
  stepback_add_test(resolver_test resolver_test.cpp)
endif()

# AndroidResolver compiled on the host as if for Android API 29, against a stub of
# <android/multinetwork.h> written from the NDK's documentation (android_stub/): a compile
# check only (it is not linked or run). The real header and a device are not checked here.
# ares.h includes <jni.h> on Android: AOSP's, from android-libnativehelper-dev (which
# scripts/setup.sh installs for scripts/check_android.sh).
find_path(STEPBACK_AOSP_JNI_DIR jni.h PATHS /usr/include/android/nativehelper NO_DEFAULT_PATH)
if(STEPBACK_HAVE_CARES AND CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING
   AND STEPBACK_AOSP_JNI_DIR)
  add_library(android_resolver_compile_check OBJECT ${PROJECT_SOURCE_DIR}/https/src/android_resolver.cpp)
  target_include_directories(android_resolver_compile_check BEFORE PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/android_stub ${STEPBACK_AOSP_JNI_DIR})
  target_compile_definitions(android_resolver_compile_check PRIVATE
    __ANDROID__=1 __ANDROID_API__=29)
  target_link_libraries(android_resolver_compile_check PRIVATE stepback::https c-ares::cares
                                                               stepback_warnings)
  target_compile_options(android_resolver_compile_check PRIVATE -fno-exceptions -fno-rtti)
  # Built with the tests (`all`), so a compile error fails the build.
  set_target_properties(android_resolver_compile_check PROPERTIES EXCLUDE_FROM_ALL OFF)
elseif(STEPBACK_HAVE_CARES AND NOT CMAKE_CROSSCOMPILING)
  message(STATUS "AndroidResolver compile check skipped: no AOSP jni.h (android-libnativehelper-dev)")
endif()
