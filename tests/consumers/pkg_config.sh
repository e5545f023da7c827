#!/bin/sh
# The pkg-config smoke test: compiles and links a consumer (consumer.cpp, or the C API's
# c_consumer.c with a C compiler) against an installed stepback with nothing but
# `pkg-config --cflags --libs stepback`, then runs it.
#
# Usage: pkg_config.sh PKG_CONFIG PC_DIR COMPILER STD FLAGS LDFLAGS OUT_DIR SOURCE [EMULATOR...]
# STD is the language standard (c++17, c99); FLAGS and LDFLAGS are the build's own
# (sanitizers, target flags), each one string.
set -eu
pkg_config=$1 pc_dir=$2 cxx=$3 std=$4 cxxflags=$5 ldflags=$6 out=$7 source=$8
shift 8
emulator="$*"

mkdir -p "$out"
flags=$(PKG_CONFIG_PATH="$pc_dir" "$pkg_config" --cflags --libs stepback)
echo "pkg-config --cflags --libs stepback: $flags"
# pkg-config escapes shell characters (the MBEDTLS_CONFIG_FILE=<...> definition) for a
# shell to parse, as make's recipes do; hence eval rather than a plain $flags.
# One command compiles and links, so LDFLAGS come first: the compile flags after them win.
# (The asan-ubsan preset links with -fsanitize=address,undefined and compiles with
# -fno-sanitize=vptr; vptr checks on the library's classes, which are built without RTTI,
# would need their typeinfo, which does not exist.)
eval "set -x; \"\$cxx\" -std=$std $ldflags $cxxflags -o \"\$out/consumer\" \"\$source\" $flags"
set +x
# shellcheck disable=SC2086  # the emulator is a command and its arguments
$emulator "$out/consumer"
