# SPDX-License-Identifier: BSD-2-Clause
# mips-linux-gnu.cmake - Debian's cross compiler gcc-mips-linux-gnu (and its sysroot
# /usr/mips-linux-gnu from libc6-dev-*-cross): the router build for big-endian MIPS
# (OpenWrt's ath79 and other Atheros/Qualcomm routers; mipsel is ramips)
# (scripts/router.sh, cgi/README.md).
#   cmake -S . -B build-router/mips-linux-gnu -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mips-linux-gnu.cmake \
#     -DCSRF_ROUTER=ON -DCSRF_CRYPTO=builtin -DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mips)
set(CMAKE_C_COMPILER mips-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/mips-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# How the tests run its programs on this machine: qemu-user with the
# target's loader and libc (tests/router).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mips -L /usr/mips-linux-gnu)
