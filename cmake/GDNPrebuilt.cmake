# The Python wheel around a libGDNCAPI.so that is already built: no LLVM, no
# compiler build. Used when GDN_CAPI_LIBRARY is set (a CMake variable, or the
# environment variable of that name), or, under scikit-build-core
# (`pip install ./python`), when the source tree's build/ already holds
# build/lib/libGDNCAPI.so (scripts/build.sh): pip then packages that library
# instead of rebuilding the compiler (GDN_BUILD_FROM_SOURCE=1 rebuilds).
# scripts/build-wheel.sh sets it to the static build's library to make the
# binary wheel. Defines the target GDNCAPI (nothing to build) and installs
# the library into the wheel's package directory (component python).
if(NOT DEFINED GDN_CAPI_LIBRARY AND DEFINED ENV{GDN_CAPI_LIBRARY})
  set(GDN_CAPI_LIBRARY "$ENV{GDN_CAPI_LIBRARY}")
endif()
if(NOT DEFINED GDN_CAPI_LIBRARY AND DEFINED SKBUILD AND
   NOT "$ENV{GDN_BUILD_FROM_SOURCE}" STREQUAL "1" AND
   EXISTS "${PROJECT_SOURCE_DIR}/build/lib/libGDNCAPI.so")
  set(GDN_CAPI_LIBRARY "${PROJECT_SOURCE_DIR}/build/lib/libGDNCAPI.so")
  message(STATUS "gdn: packaging the existing ${GDN_CAPI_LIBRARY} "
                 "(GDN_BUILD_FROM_SOURCE=1 rebuilds the compiler instead)")
endif()
if(GDN_CAPI_LIBRARY)
  if(NOT EXISTS "${GDN_CAPI_LIBRARY}")
    message(FATAL_ERROR "GDN_CAPI_LIBRARY=${GDN_CAPI_LIBRARY} does not exist")
  endif()
  message(STATUS "gdn: wheel around the prebuilt ${GDN_CAPI_LIBRARY}")
  add_custom_target(GDNCAPI)
  install(FILES "${GDN_CAPI_LIBRARY}" DESTINATION gdn RENAME libGDNCAPI.so
          PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                      GROUP_EXECUTE WORLD_READ WORLD_EXECUTE
          COMPONENT python)
endif() # the top-level CMakeLists.txt stops after this when it is set
