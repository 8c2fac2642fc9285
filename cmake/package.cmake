# SPDX-License-Identifier: BSD-2-Clause
# package.cmake - installs the libraries as a relocatable CMake package, so
#   find_package(libcsrf 0.1 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE libcsrf::csrf)         # libcsrf.so.0
#   target_link_libraries(app PRIVATE libcsrf::csrf_static)  # libcsrf.a
# works from a `make install` prefix, a DESTDIR tree moved anywhere, and the
# libcsrf-dev package; and the tools' man pages. Included at the end of the
# top-level CMakeLists.txt.
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

# What the exported targets link publicly must be found again by whoever
# calls find_package: Threads, and each pkg-config module found here with
# IMPORTED_TARGET, under the same PkgConfig::<PREFIX> name.
set(CSRF_PACKAGE_DEPENDENCIES "")
set(pkg_deps "")
foreach(t csrf_shared csrf_static)
  get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS libs)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
    if(lib STREQUAL "Threads::Threads")
      string(FIND "${CSRF_PACKAGE_DEPENDENCIES}" "Threads" seen)
      if(seen EQUAL -1)
        string(APPEND CSRF_PACKAGE_DEPENDENCIES "find_dependency(Threads)\n")
      endif()
    elseif(lib MATCHES "^PkgConfig::(.+)$")
      set(prefix ${CMAKE_MATCH_1})
      if(NOT ${prefix}_MODULE_NAME)
        message(FATAL_ERROR "package.cmake: no pkg-config module is known for ${lib}")
      endif()
      list(APPEND pkg_deps "csrf_pkg_dependency(${prefix} ${${prefix}_MODULE_NAME})")
    elseif(lib)
      message(FATAL_ERROR "package.cmake: ${t} links ${lib}; say how libcsrfConfig.cmake finds it")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES pkg_deps)
if(pkg_deps)
  list(JOIN pkg_deps "\n" pkg_deps)
  string(APPEND CSRF_PACKAGE_DEPENDENCIES "find_dependency(PkgConfig)\n${pkg_deps}\n")
endif()

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/libcsrfConfig.cmake.in
  ${CMAKE_BINARY_DIR}/libcsrfConfig.cmake INSTALL_DESTINATION ${CSRF_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/libcsrfConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/libcsrfConfig.cmake ${CMAKE_BINARY_DIR}/libcsrfConfigVersion.cmake
  DESTINATION ${CSRF_CMAKE_DIR})
