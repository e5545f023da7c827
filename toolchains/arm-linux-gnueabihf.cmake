# 32-bit ARM Linux (glibc, hard-float ABI, ARMv7-A) with Debian's cross compilers
# (g++-arm-linux-gnueabihf), generating Thumb-2 code. Test and program binaries run under
# qemu-user with the target's loader and libraries from the sysroot; binfmt is not needed.
# Describes the target only: profiles and options belong to CMakeLists.txt and
# CMakePresets.json.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)

set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
# Debian's compiler defaults to Thumb-2 already; saying it keeps the footprint figures
# independent of that default.
set(CMAKE_C_FLAGS_INIT "-mthumb")
set(CMAKE_CXX_FLAGS_INIT "-mthumb")

# Libraries, headers and packages come from the target tree; programs (python3, openssl,
# nginx, which the tests run) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm;-L;/usr/arm-linux-gnueabihf)
