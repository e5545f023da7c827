# Bare-metal Cortex-M4F (ARMv7E-M, Thumb-2, single-precision FPU, hard-float ABI) with the
# GNU Arm Embedded toolchain (Debian gcc-arm-none-eabi). The hard-float ABI matches the
# usual Cortex-M4F SDKs (STM32Cube, nRF5); objects built for the soft-float ABI cannot be
# linked with these, so a soft-float firmware needs -mfloat-abi=soft here instead.
# Only the freestanding core builds for this target (STEPBACK_CORE_ONLY=ON), as static
# libraries: nothing is linked, so no linker script or startup code is needed.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
set(CMAKE_CXX_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
# The compiler checks cannot link an executable without a board's linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
