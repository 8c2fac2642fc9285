# SPDX-License-Identifier: BSD-2-Clause
# aarch64-linux-gnu.cmake - Debian's cross compiler gcc-aarch64-linux-gnu (and its sysroot
# /usr/aarch64-linux-gnu from libc6-dev-*-cross): the router build for aarch64
# (scripts/router.sh, cgi/README.md).
#   cmake -S . -B build-router/aarch64-linux-gnu -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DCSRF_ROUTER=ON -DCSRF_CRYPTO=builtin -DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# How the tests run its programs on this machine: qemu-user with the
# target's loader and libc (tests/router).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
