# SPDX-License-Identifier: BSD-2-Clause
# harnesses.cmake - the libFuzzer harnesses, one fuzz/fuzz_<name>.c each.
# Included by fuzz/CMakeLists.txt (clang main build) and by
# fuzz/standalone (the nested clang build of a gcc main build).

set(CSRF_FUZZ_HARNESSES cookie form multipart origin token inject inject_policy check html config cache crypto response)

# csrf_fuzz_library(<target> <cflags...>): every file of src/ and of the
# session part (src/session/, which the valgrind unit tests need) compiled
# again with the given instrumentation into a static library.
function(csrf_fuzz_library target)
  file(GLOB srcs CONFIGURE_DEPENDS ${CSRF_ROOT}/src/*.c ${CSRF_ROOT}/src/session/*.c)
  add_library(${target} STATIC ${srcs})
  target_include_directories(${target} PUBLIC ${CSRF_ROOT}/include PRIVATE ${CSRF_ROOT}/src ${CSRF_ROOT}/src/session)
  target_compile_definitions(${target} PRIVATE CSRF_BUILDING=1 _GNU_SOURCE)
  target_compile_options(${target} PRIVATE -fvisibility=hidden ${ARGN})
  target_link_libraries(${target} PUBLIC PkgConfig::LIBCRYPTO PkgConfig::SODIUM PkgConfig::HIREDIS Threads::Threads)
endfunction()

# csrf_fuzz_harness(<name> <library>): fuzz_<name> from fuzz/fuzz_<name>.c.
# fuzz_crypto compares the builtin backend with OpenSSL: it links its own
# copy of mac.c, sha256.c and util.c built with CSRF_CRYPTO_BUILTIN, and
# libcrypto for the reference, instead of the library.
function(csrf_fuzz_harness name lib)
  if(name STREQUAL "crypto")
    if(NOT TARGET ${lib}_builtin_crypto)
      add_library(${lib}_builtin_crypto STATIC ${CSRF_ROOT}/src/mac.c ${CSRF_ROOT}/src/sha256.c ${CSRF_ROOT}/src/util.c)
      target_include_directories(${lib}_builtin_crypto PUBLIC ${CSRF_ROOT}/include PRIVATE ${CSRF_ROOT}/src)
      target_compile_definitions(${lib}_builtin_crypto PRIVATE CSRF_BUILDING=1 _GNU_SOURCE PUBLIC CSRF_CRYPTO_BUILTIN=1)
      get_target_property(opts ${lib} COMPILE_OPTIONS)
      target_compile_options(${lib}_builtin_crypto PRIVATE ${opts})
      target_link_libraries(${lib}_builtin_crypto PUBLIC PkgConfig::LIBCRYPTO)
    endif()
    set(lib ${lib}_builtin_crypto)
  endif()
  add_executable(fuzz_${name} ${CSRF_ROOT}/fuzz/fuzz_${name}.c)
  target_include_directories(fuzz_${name} PRIVATE ${CSRF_ROOT}/fuzz ${CSRF_ROOT}/include ${CSRF_ROOT}/src)
  target_compile_definitions(fuzz_${name} PRIVATE _GNU_SOURCE)
  target_compile_options(fuzz_${name} PRIVATE -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_${name} PRIVATE ${lib})
endfunction()
