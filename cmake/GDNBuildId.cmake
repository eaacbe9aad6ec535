# Writes OUT (a header defining GDN_BUILD_ID) with a SHA-256 over the
# compiler's sources under SRC (lib/, include/), rewriting it only when that
# changes. The kernel cache keys on it, so kernels cached on disk by one build
# of the compiler are never served to a build whose code generation differs.
#   cmake -DSRC=<repo> -DOUT=<header> -P GDNBuildId.cmake
file(GLOB_RECURSE sources
  "${SRC}/lib/*.cpp" "${SRC}/lib/*.h" "${SRC}/include/*.h" "${SRC}/include/*.td"
  "${SRC}/lib/*.txt")
list(SORT sources)
set(all "")
foreach(f IN LISTS sources)
  file(SHA256 "${f}" h)
  file(RELATIVE_PATH rel "${SRC}" "${f}")
  string(APPEND all "${rel}:${h}\n")
endforeach()
string(SHA256 id "${all}")
set(content "#define GDN_BUILD_ID \"${id}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
