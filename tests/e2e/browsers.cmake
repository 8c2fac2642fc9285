# SPDX-License-Identifier: BSD-2-Clause
# browsers.cmake - registers a node test file once per browser and origin
# mode (tests/e2e/browser.mjs's MODES): NAME.chromium and NAME.firefox in
# the loopback mode, NAME.MODE.chromium and NAME.MODE.firefox in the others
# (named, https), each with E2E_BROWSER and E2E_MODE set. All browser tests
# share one RESOURCE_LOCK, so at most one browser runs at a time on the
# 2-core machine. Include it where browser tests are registered (tests/e2e,
# tests/fleet, nginx/tests). Which suite runs in which modes, and why the
# others need not: docs/browsers.md.
#
#   csrf_browser_test(NAME e2e.flows FILE path/flows.test.mjs TIMEOUT 180
#                     LABELS "e2e" ENVIRONMENT "A=1;B=2" [PORT 28140]
#                     [MODES loopback named https])
#
# MODES defaults to loopback. PORT, when given, is DEMO_PORT_BASE for
# Chromium and PORT + 10 for Firefox in the loopback mode
# (tests/e2e/demo.mjs falls back to ports tests/nginx/net.mjs reserves
# when taken); the other modes take such reserved ports.
set(CSRF_BROWSERS chromium firefox)
set(CSRF_BROWSER_ENV "CHROMIUM=/usr/bin/chromium" "FIREFOX=/usr/bin/firefox-esr")

function(csrf_browser_test)
  cmake_parse_arguments(T "" "NAME;FILE;TIMEOUT;PORT" "LABELS;ENVIRONMENT;MODES" ${ARGN})
  find_program(CSRF_NODE node REQUIRED)
  if(NOT T_MODES)
    set(T_MODES loopback)
  endif()
  get_filename_component(dir ${T_FILE} DIRECTORY)
  foreach(m ${T_MODES})
    set(offset 0)
    foreach(b ${CSRF_BROWSERS})
      set(env ${T_ENVIRONMENT} ${CSRF_BROWSER_ENV} "E2E_BROWSER=${b}" "E2E_MODE=${m}")
      if(m STREQUAL "loopback")
        set(name ${T_NAME}.${b})
        if(T_PORT)
          math(EXPR port "${T_PORT} + ${offset}")
          list(APPEND env "DEMO_PORT_BASE=${port}")
        endif()
      else()
        set(name ${T_NAME}.${m}.${b})
      endif()
      add_test(NAME ${name} COMMAND ${CSRF_NODE} --test ${T_FILE} WORKING_DIRECTORY ${dir})
      set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS};browser;${b};${m}" TIMEOUT ${T_TIMEOUT}
        RESOURCE_LOCK browser ENVIRONMENT "${env}")
      math(EXPR offset "${offset} + 10")
    endforeach()
  endforeach()
endfunction()
