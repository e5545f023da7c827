# Android NDK: delegates to the NDK's own build/cmake/android.toolchain.cmake, which knows
# the NDK's clang, sysroot and STL better than any file of ours could.
#
#   cmake -B build/android -G Ninja -DCMAKE_TOOLCHAIN_FILE=toolchains/android.cmake \
#         -DANDROID_NDK_HOME=$HOME/Android/Sdk/ndk/<version> [-DANDROID_ABI=armeabi-v7a]
#
# The NDK is looked for in the CMake variables ANDROID_NDK_HOME and ANDROID_NDK (-D or
# cache), then in the environment variables ANDROID_NDK_HOME, ANDROID_NDK and
# ANDROID_NDK_ROOT; the first one set wins. The NDK reads ANDROID_ABI, ANDROID_PLATFORM and
# ANDROID_STL; those the user did not set default to arm64-v8a, android-24 (Android 7.0)
# and c++_static (no libc++_shared.so to ship; fine while the app has one native library
# that uses the STL, see the NDK's "C++ library support" page otherwise).
# Android Studio does not need this file: Gradle passes the NDK's toolchain file itself.

# Toolchain files run again for every try_compile project; these variables must reach it.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
  ANDROID_NDK_HOME ANDROID_NDK ANDROID_ABI ANDROID_PLATFORM ANDROID_STL)

set(_stepback_ndk "")
set(_stepback_ndk_origin "")
foreach(_stepback_var IN ITEMS ANDROID_NDK_HOME ANDROID_NDK)
  if(NOT _stepback_ndk AND NOT "${${_stepback_var}}" STREQUAL "")
    set(_stepback_ndk "${${_stepback_var}}")
    set(_stepback_ndk_origin "CMake variable ${_stepback_var}")
  endif()
endforeach()
foreach(_stepback_var IN ITEMS ANDROID_NDK_HOME ANDROID_NDK ANDROID_NDK_ROOT)
  if(NOT _stepback_ndk AND NOT "$ENV{${_stepback_var}}" STREQUAL "")
    set(_stepback_ndk "$ENV{${_stepback_var}}")
    set(_stepback_ndk_origin "environment variable ${_stepback_var}")
  endif()
endforeach()

if(NOT _stepback_ndk)
  message(FATAL_ERROR
    "stepback: no Android NDK found. Checked the CMake variables ANDROID_NDK_HOME and "
    "ANDROID_NDK (-D or cache) and the environment variables ANDROID_NDK_HOME, ANDROID_NDK "
    "and ANDROID_NDK_ROOT; none is set. Install the NDK (Android Studio: SDK Manager > SDK "
    "Tools > NDK (Side by side), or `sdkmanager \"ndk;<version>\"`, or a zip from "
    "https://developer.android.com/ndk/downloads) and pass its root, e.g. "
    "-DANDROID_NDK_HOME=$HOME/Android/Sdk/ndk/<version>.")
endif()

get_filename_component(_stepback_ndk "${_stepback_ndk}" ABSOLUTE)
set(_stepback_ndk_toolchain "${_stepback_ndk}/build/cmake/android.toolchain.cmake")
if(NOT EXISTS "${_stepback_ndk_toolchain}")
  message(FATAL_ERROR
    "stepback: ${_stepback_ndk_origin} = ${_stepback_ndk} is not an Android NDK: "
    "${_stepback_ndk_toolchain} does not exist. Point it at the NDK's root directory (the "
    "one that holds build/, toolchains/ and source.properties).")
endif()

# Cached, so that re-runs (a build that re-configures, an IDE) find the same NDK without
# the environment; a -D or cache value, chosen first above, is left as it is.
set(ANDROID_NDK_HOME "${_stepback_ndk}" CACHE PATH "Android NDK root (toolchains/android.cmake)")
set(ANDROID_NDK "${_stepback_ndk}")

# Defaults only for what the user left unset; -D values and presets always win.
if(NOT ANDROID_ABI)
  set(ANDROID_ABI arm64-v8a)
endif()
if(NOT ANDROID_PLATFORM)
  set(ANDROID_PLATFORM android-24)
endif()
if(NOT ANDROID_STL)
  set(ANDROID_STL c++_static)
endif()

include("${_stepback_ndk_toolchain}")
