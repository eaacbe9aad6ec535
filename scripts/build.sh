#!/usr/bin/env bash
# Configures and builds gdn-mlir against Debian's LLVM/MLIR 22.
#   scripts/build.sh            -> build/         (shared libMLIR/libLLVM: fast links)
#   scripts/build.sh --static   -> build-static/  (portable: no LLVM needed at run time)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/build
extra=(-DMLIR_LINK_MLIR_DYLIB=ON)
if [ "${1:-}" = "--static" ]; then
  dir=$root/build-static
  extra=(-DGDN_STATIC=ON)
fi
cmake -G Ninja -S "$root" -B "$dir" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  "${extra[@]}" >/dev/null
ninja -C "$dir" gdn-opt gdn-run GDNUnitTests
