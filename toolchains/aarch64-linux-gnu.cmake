# 64-bit ARM Linux (glibc) with Debian's cross compilers (g++-aarch64-linux-gnu). Test and
# program binaries run under qemu-user with the target's loader and libraries from the
# sysroot; binfmt is not needed. Describes the target only: profiles and options belong to
# CMakeLists.txt and CMakePresets.json.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries, headers and packages come from the target tree; programs (python3, openssl,
# nginx, which the tests run) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -cpu max: an emulated CPU with the crypto extensions (AES, PMULL), so that the ARMv8 AES-GCM
# engine (https/mbedtls/gcm/) runs in the tests.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;max;-L;/usr/aarch64-linux-gnu)
