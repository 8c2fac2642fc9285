# SPDX-License-Identifier: BSD-2-Clause
# The CMake project of a program using libcsrf's CMake package: the README's
# handler.c linked with the shared and with the static library. The tests
# (readme.example, package.deb) copy it as CMakeLists.txt beside handler.c.
cmake_minimum_required(VERSION 3.18)
project(handler C)
find_package(libcsrf 0.1 CONFIG REQUIRED)
add_executable(handler handler.c)
target_link_libraries(handler PRIVATE libcsrf::csrf)
add_executable(handler-static handler.c)
target_link_libraries(handler-static PRIVATE libcsrf::csrf_static)
