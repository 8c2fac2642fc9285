# harnesses.cmake - the libFuzzer harnesses and what each needs from the
# library. Included by fuzz/CMakeLists.txt (clang main build) and by
# fuzz/standalone (the nested clang build of a gcc main build).
#
# A harness is built only once every function it calls has a definition in
# src/*.c, so a library still being written never breaks the build; its
# ctest tests then report "skipped".

set(CSRF_FUZZ_HARNESSES cookie form multipart origin token inject inject_policy check html config)

set(CSRF_FUZZ_NEEDS_cookie csrf_cookie_get)
set(CSRF_FUZZ_NEEDS_form csrf_form_get csrf_form_decode csrf_body_field)
set(CSRF_FUZZ_NEEDS_multipart csrf_multipart_get csrf_body_field)
set(CSRF_FUZZ_NEEDS_origin csrf_origin_parse csrf_url_origin csrf_origin_equal)
set(CSRF_FUZZ_NEEDS_token csrf_ctx_new csrf_ctx_add_key csrf_token_issue csrf_token_verify
  csrf_secret_cookie_encode csrf_secret_cookie_decode csrf_field_name)
set(CSRF_FUZZ_NEEDS_html csrf_html_escape csrf_html_escape_attr)
set(CSRF_FUZZ_NEEDS_config csrf_ctx_new csrf_ctx_set_self_origin csrf_ctx_add_trusted_origin csrf_ctx_add_exemption
  csrf_ctx_set_field_name csrf_field_name csrf_check csrf_origin_parse)
set(CSRF_FUZZ_NEEDS_inject csrf_inject_size csrf_inject_init csrf_inject_feed csrf_inject_finish)
# inject_policy calls the injector's internal policy (src/inject_internal.h)
set(CSRF_FUZZ_NEEDS_inject_policy csrf_inject_init csrf_origin_parse csrf_charset_sniff)
set(CSRF_FUZZ_NEEDS_check csrf_ctx_new csrf_ctx_add_key csrf_ctx_set_self_origin csrf_ctx_add_trusted_origin
  csrf_ctx_add_exemption csrf_token_issue csrf_token_verify csrf_field_name csrf_secret_cookie_encode
  csrf_origin_parse csrf_check)

# csrf_fuzz_library(<target> <cflags...>): every file of src/ compiled again
# with the given instrumentation into a static library.
function(csrf_fuzz_library target)
  file(GLOB srcs CONFIGURE_DEPENDS ${CSRF_ROOT}/src/*.c)
  add_library(${target} STATIC ${srcs})
  target_include_directories(${target} PUBLIC ${CSRF_ROOT}/include PRIVATE ${CSRF_ROOT}/src)
  target_compile_definitions(${target} PRIVATE CSRF_BUILDING=1 _GNU_SOURCE)
  target_compile_options(${target} PRIVATE -fvisibility=hidden ${ARGN})
  target_link_libraries(${target} PUBLIC PkgConfig::LIBCRYPTO PkgConfig::SODIUM PkgConfig::HIREDIS Threads::Threads)
endfunction()

# The names of the harnesses whose functions all exist; the sources are
# watched so that a function landing later triggers a reconfigure.
function(csrf_fuzz_available out)
  file(GLOB srcs ${CSRF_ROOT}/src/*.c)
  set(text "")
  foreach(s ${srcs})
    file(READ ${s} t)
    string(APPEND text "${t}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${s})
  endforeach()
  set(ok "")
  foreach(h ${CSRF_FUZZ_HARNESSES})
    set(have TRUE)
    if(NOT EXISTS ${CSRF_ROOT}/fuzz/fuzz_${h}.c)
      continue()
    endif()
    foreach(fn ${CSRF_FUZZ_NEEDS_${h}})
      if(NOT text MATCHES "CSRF_API[^;{(]*[ *]${fn}\\(")
        set(have FALSE)
        message(STATUS "fuzz: ${h} skipped, ${fn} not written yet")
        break()
      endif()
    endforeach()
    if(have)
      list(APPEND ok ${h})
    endif()
  endforeach()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# csrf_fuzz_harness(<name> <library>): fuzz_<name> from fuzz/fuzz_<name>.c.
function(csrf_fuzz_harness name lib)
  add_executable(fuzz_${name} ${CSRF_ROOT}/fuzz/fuzz_${name}.c)
  target_include_directories(fuzz_${name} PRIVATE ${CSRF_ROOT}/fuzz ${CSRF_ROOT}/include ${CSRF_ROOT}/src)
  target_compile_definitions(fuzz_${name} PRIVATE _GNU_SOURCE)
  target_compile_options(fuzz_${name} PRIVATE -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_${name} PRIVATE ${lib})
endfunction()
