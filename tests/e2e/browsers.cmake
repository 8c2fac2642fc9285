# browsers.cmake - registers a node test file once per browser: NAME.chromium
# and NAME.firefox, each with E2E_BROWSER set (tests/e2e/browser.mjs reads
# it). All browser tests share one RESOURCE_LOCK, so at most one browser
# runs at a time on the 2-core machine. Include it where browser tests are
# registered (tests/e2e, tests/fleet, nginx/tests).
#
#   csrf_browser_test(NAME e2e.flows FILE path/flows.test.mjs TIMEOUT 180
#                     LABELS "e2e" ENVIRONMENT "A=1;B=2" [PORT 28140])
#
# PORT, when given, is DEMO_PORT_BASE for Chromium and PORT + 10 for
# Firefox (tests/e2e/demo.mjs falls back to random ports when taken).
set(CSRF_BROWSERS chromium firefox)
set(CSRF_BROWSER_ENV "CHROMIUM=/usr/bin/chromium" "FIREFOX=/usr/bin/firefox-esr")

function(csrf_browser_test)
  cmake_parse_arguments(T "" "NAME;FILE;TIMEOUT;PORT" "LABELS;ENVIRONMENT" ${ARGN})
  find_program(CSRF_NODE node REQUIRED)
  set(offset 0)
  foreach(b ${CSRF_BROWSERS})
    set(env ${T_ENVIRONMENT} ${CSRF_BROWSER_ENV} "E2E_BROWSER=${b}")
    if(T_PORT)
      math(EXPR port "${T_PORT} + ${offset}")
      list(APPEND env "DEMO_PORT_BASE=${port}")
    endif()
    get_filename_component(dir ${T_FILE} DIRECTORY)
    add_test(NAME ${T_NAME}.${b} COMMAND ${CSRF_NODE} --test ${T_FILE} WORKING_DIRECTORY ${dir})
    set_tests_properties(${T_NAME}.${b} PROPERTIES LABELS "${T_LABELS};browser;${b}" TIMEOUT ${T_TIMEOUT}
      RESOURCE_LOCK browser ENVIRONMENT "${env}")
    math(EXPR offset "${offset} + 10")
  endforeach()
endfunction()
