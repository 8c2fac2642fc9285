# SPDX-License-Identifier: BSD-2-Clause
# package.cmake - installs the libraries as a relocatable CMake package, so
#   find_package(libcsrf 0.1 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE libcsrf::csrf)         # libcsrf.so.0
#   target_link_libraries(app PRIVATE libcsrf::csrf_static)  # libcsrf.a
# (the core: libcrypto only) and, for the optional session part,
#   find_package(libcsrf 0.1 CONFIG REQUIRED COMPONENTS session)
#   target_link_libraries(app PRIVATE libcsrf::csrf_session)         # libcsrf-session.so.0
#   target_link_libraries(app PRIVATE libcsrf::csrf_session_static)  # libcsrf-session.a
# (with the core, libsodium and hiredis, found only when the component is
# asked for) work from a `make install` prefix, a DESTDIR tree moved
# anywhere, and the libcsrf-dev package; and the tools' man pages.
# Included at the end of the top-level CMakeLists.txt.
include(CMakePackageConfigHelpers)

install(FILES ${CMAKE_SOURCE_DIR}/man/csrf-key.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# csrf-cgi (cgi/) is installed, with its man page, once it is built here.
if(TARGET csrf-cgi)
  install(TARGETS csrf-cgi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/man/csrf-cgi.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

set(CSRF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/libcsrf)
set_target_properties(csrf_shared PROPERTIES EXPORT_NAME csrf)
set_target_properties(csrf_static PROPERTIES EXPORT_NAME csrf_static)
install(TARGETS csrf_shared csrf_static EXPORT libcsrfTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT libcsrfTargets NAMESPACE libcsrf:: FILE libcsrfTargets.cmake DESTINATION ${CSRF_CMAKE_DIR})

if(TARGET csrf_session_shared)
  set_target_properties(csrf_session_shared PROPERTIES EXPORT_NAME csrf_session)
  set_target_properties(csrf_session_static PROPERTIES EXPORT_NAME csrf_session_static)
  install(TARGETS csrf_session_shared csrf_session_static EXPORT libcsrf-sessionTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT libcsrf-sessionTargets NAMESPACE libcsrf:: FILE libcsrf-sessionTargets.cmake
    DESTINATION ${CSRF_CMAKE_DIR})
endif()

# What the exported targets link publicly must be found again by whoever
# calls find_package: Threads, and each pkg-config module found here with
# IMPORTED_TARGET, under the same PkgConfig::<PREFIX> name, through the
# config file's macro `call` (csrf_pkg_dependency for the core,
# csrf_session_dependency for the session component). Our own targets
# (the session part links the core) are the core's export.
function(csrf_package_dependencies out call)
  set(deps "")
  set(pkg_deps "")
  foreach(t ${ARGN})
    get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS libs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(lib STREQUAL "Threads::Threads")
        string(FIND "${deps}" "Threads" seen)
        if(seen EQUAL -1)
          string(APPEND deps "find_dependency(Threads)\n")
        endif()
      elseif(lib MATCHES "^PkgConfig::(.+)$")
        set(prefix ${CMAKE_MATCH_1})
        if(NOT ${prefix}_MODULE_NAME)
          message(FATAL_ERROR "package.cmake: no pkg-config module is known for ${lib}")
        endif()
        list(APPEND pkg_deps "${call}(${prefix} ${${prefix}_MODULE_NAME})")
      elseif(lib STREQUAL "csrf_static" OR lib STREQUAL "csrf_shared")
      elseif(lib)
        message(FATAL_ERROR "package.cmake: ${t} links ${lib}; say how libcsrfConfig.cmake finds it")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES pkg_deps)
  if(pkg_deps)
    list(JOIN pkg_deps "\n" pkg_deps)
    string(APPEND deps "find_dependency(PkgConfig)\n${pkg_deps}\n")
  endif()
  set(${out} "${deps}" PARENT_SCOPE)
endfunction()
csrf_package_dependencies(CSRF_PACKAGE_DEPENDENCIES csrf_pkg_dependency csrf_shared csrf_static)
set(CSRF_SESSION_PACKAGE_DEPENDENCIES "")
if(TARGET csrf_session_shared)
  csrf_package_dependencies(CSRF_SESSION_PACKAGE_DEPENDENCIES csrf_session_dependency csrf_session_shared
    csrf_session_static)
endif()

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/libcsrfConfig.cmake.in
  ${CMAKE_BINARY_DIR}/libcsrfConfig.cmake INSTALL_DESTINATION ${CSRF_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/libcsrfConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/libcsrfConfig.cmake ${CMAKE_BINARY_DIR}/libcsrfConfigVersion.cmake
  DESTINATION ${CSRF_CMAKE_DIR})
