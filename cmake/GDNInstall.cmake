# Install rules and the CMake package (docs/Embedding.md): after
#   cmake --install build --prefix <P>
# a host compiler does find_package(MLIR) and find_package(GDN CONFIG) and
# links GDN::MLIRGDNRegistration (or the C API, GDN::GDNCAPI, also through
# pkg-config: gdn.pc). Everything here is component "gdn-sdk"; the Python
# wheel installs only component "python" (lib/CAPI/CMakeLists.txt), which a
# plain `cmake --install` leaves out.
#
#   <P>/bin                  gdn-opt, gdn-run
#   <P>/include              gdn/ (with the generated *.inc), gdn-c/GDN.h
#   <P>/lib                  libMLIRGDN*.a, libGDNReference.a, libGDNRuntime.a,
#                            libGDNCAPI.so
#   <P>/lib/cmake/gdn        GDNConfig.cmake, GDNConfigVersion.cmake,
#                            GDNTargets*.cmake
#   <P>/lib/pkgconfig        gdn.pc
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GDN_INSTALL_COMPONENT gdn-sdk)
set(GDN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gdn)

# The libraries of the link interface of MLIRGDNRegistration, MLIRGDNJIT and
# GDNCAPI (add_mlir_library's own install rules are off: DISABLE_INSTALL).
set(GDN_MLIR_LIBRARIES
  MLIRGDNSupport MLIRGDNDialect MLIRGDNTransforms MLIRGDNKernelMath
  MLIRGDNToCPU MLIRGDNToGPU MLIRGDNGPUModuleToPTX MLIRGDNPipelines MLIRGDNRegistration MLIRGDNJIT)
set(GDN_INSTALLED_LIBRARIES ${GDN_MLIR_LIBRARIES} GDNReference GDNRuntime)

# The tools find libMLIR/libLLVM where the build found them.
if(NOT GDN_STATIC)
  set_target_properties(gdn-opt gdn-run PROPERTIES
    INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
endif()

install(TARGETS ${GDN_INSTALLED_LIBRARIES} GDNCAPI gdn-opt gdn-run
  EXPORT GDNTargets
  COMPONENT ${GDN_INSTALL_COMPONENT}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  # Every imported library brings <P>/include (gdn's and the generated headers).
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gdn ${PROJECT_SOURCE_DIR}/include/gdn-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT ${GDN_INSTALL_COMPONENT}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
# The tablegen'd declarations (and definitions) the headers include.
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/gdn
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT ${GDN_INSTALL_COMPONENT}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT GDNTargets
  NAMESPACE GDN::
  FILE GDNTargets.cmake
  DESTINATION ${GDN_INSTALL_CMAKEDIR}
  COMPONENT ${GDN_INSTALL_COMPONENT})

if(MLIR_LINK_MLIR_DYLIB)
  set(GDN_LINK_MLIR_DYLIB ON)
else()
  set(GDN_LINK_MLIR_DYLIB OFF)
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/GDNConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/install/GDNConfig.cmake
  INSTALL_DESTINATION ${GDN_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/install/GDNConfigVersion.cmake
  VERSION ${GDN_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/install/GDNConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/install/GDNConfigVersion.cmake
  DESTINATION ${GDN_INSTALL_CMAKEDIR}
  COMPONENT ${GDN_INSTALL_COMPONENT})

# pkg-config, for C hosts: relocatable (paths relative to the .pc file).
set(GDN_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH GDN_PC_TO_PREFIX "/prefix/${GDN_PC_DIR}" "/prefix")
string(REGEX REPLACE "/$" "" GDN_PC_TO_PREFIX "${GDN_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/gdn.pc.in
  ${PROJECT_BINARY_DIR}/cmake/install/gdn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/install/gdn.pc
  DESTINATION ${GDN_PC_DIR}
  COMPONENT ${GDN_INSTALL_COMPONENT})
