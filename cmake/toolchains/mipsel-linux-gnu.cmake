# SPDX-License-Identifier: BSD-2-Clause
# mipsel-linux-gnu.cmake - Debian's cross compiler gcc-mipsel-linux-gnu (and its sysroot
# /usr/mipsel-linux-gnu from libc6-dev-*-cross): the router build for mipsel
# (scripts/router.sh, cgi/README.md).
#   cmake -S . -B build-router/mipsel-linux-gnu -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mipsel-linux-gnu.cmake \
#     -DCSRF_ROUTER=ON -DCSRF_CRYPTO=builtin -DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mipsel)
set(CMAKE_C_COMPILER mipsel-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/mipsel-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# A 32-bit target: 64-bit time_t (and off_t, which glibc requires with
# it), so that tokens and key files keep working after January 2038.
set(CMAKE_C_FLAGS_INIT "-D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64")
# How the tests run its programs on this machine: qemu-user with the
# target's loader and libc (tests/router).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mipsel -L /usr/mipsel-linux-gnu)
