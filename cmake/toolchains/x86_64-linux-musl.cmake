# SPDX-License-Identifier: BSD-2-Clause
# x86_64-linux-musl.cmake - Debian's musl-gcc (musl-tools): a static
# x86-64 csrf-cgi linked against musl alone, the proof that the router
# build pulls in nothing but a libc (scripts/router.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER musl-gcc)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_C_FLAGS_INIT "-include ${CMAKE_CURRENT_LIST_DIR}/musl-compat.h")
# musl's own headers and libraries only (musl-gcc's specs); nothing from
# the host's /usr/include or /usr/lib.
set(CMAKE_FIND_ROOT_PATH /usr/lib/musl)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
