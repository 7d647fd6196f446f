# install.cmake - the SDK a plugin author installs (`cmake --install`):
#   bin/mtcs                                 the runner
#   include/mt/*.h, *.def                    the public contract (spec/include)
#   share/mtcs/golden/*.h5, MANIFEST         the committed goldens (the installed
#                                            mtcs reads them by default)
#   share/mtcs/examples/example.c            the example plugin
#   share/doc/mtcs/*.md                      the spec pages
#   lib/cmake/mtcs/mtcsConfig*.cmake         find_package(mtcs): mtcs::headers,
#                                            mtcs::mtcs, mtcs_add_plugin()
#   lib/pkgconfig/mtcs.pc                    pkg-config --cflags mtcs
# tests/sdk_install.cmake builds the example against an installed prefix
# alone (CMake package, pkg-config, a C++ translation unit) and runs it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MTCS_GOLDEN_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/mtcs/golden")
set(MTCS_EXAMPLES_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/mtcs/examples")
set(MTCS_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/mtcs")

install(TARGETS mtcs RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY spec/include/mt DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
file(GLOB MTCS_GOLDEN_FILES CONFIGURE_DEPENDS golden/*.h5)
install(FILES ${MTCS_GOLDEN_FILES} golden/MANIFEST DESTINATION "${MTCS_GOLDEN_INSTALL_DIR}")
install(FILES conformance/plugins/example.c DESTINATION "${MTCS_EXAMPLES_INSTALL_DIR}")
file(GLOB MTCS_SPEC_PAGES CONFIGURE_DEPENDS spec/*.md)
install(FILES ${MTCS_SPEC_PAGES} DESTINATION "${CMAKE_INSTALL_DOCDIR}")

configure_package_config_file(cmake/mtcsConfig.cmake.in
  "${CMAKE_BINARY_DIR}/sdk/mtcsConfig.cmake"
  INSTALL_DESTINATION "${MTCS_CMAKE_INSTALL_DIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR MTCS_GOLDEN_INSTALL_DIR
            MTCS_EXAMPLES_INSTALL_DIR)
write_basic_package_version_file("${CMAKE_BINARY_DIR}/sdk/mtcsConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/sdk/mtcsConfig.cmake"
              "${CMAKE_BINARY_DIR}/sdk/mtcsConfigVersion.cmake"
        DESTINATION "${MTCS_CMAKE_INSTALL_DIR}")
# relocatable: the prefix is found from the .pc file's own directory
file(RELATIVE_PATH MTCS_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/mtcs.pc.in "${CMAKE_BINARY_DIR}/sdk/mtcs.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/sdk/mtcs.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
