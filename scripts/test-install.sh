#!/usr/bin/env bash
# Installs a build of gdn-mlir into a temporary prefix and builds two hosts
# against the installed tree only, never the source tree (docs/Embedding.md):
#   examples/embedding/my-opt   C++: find_package(MLIR) + find_package(GDN
#                               CONFIG), links GDN::MLIRGDNRegistration; then
#                               lowers examples/qwen3_next_decode.mlir and a
#                               tensor-form layer with it
#   examples/embedding/c-host   C: the C API through pkg-config (gdn.pc) and
#                               through find_package(GDN) + GDN::GDNCAPI;
#                               compiles and runs a tiny gdn.recurrent on the CPU
#   scripts/test-install.sh [build-dir]    (default build/, after scripts/build.sh)
# Ends with 'test-install: N passed, M failed'; exits non-zero on a failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" 2>/dev/null && pwd)
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "test-install: no CMake build in ${1:-$root/build} (run scripts/build.sh)"
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gdn-test-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
P=$work/prefix
export GDN_CACHE_DIR=off # no kernels cached on disk by this test
mlir_dir=/usr/lib/llvm-22/lib/cmake/mlir
# The compilers of scripts/build.sh.
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld
  -DMLIR_DIR="$mlir_dir" -DCMAKE_PREFIX_PATH="$P")

passed=0 failed=0 skipped=""
# check NAME CMD...: runs CMD (output to a log shown on failure).
check() {
  local name=$1
  shift
  if "$@" >"$work/log" 2>&1; then
    echo "PASS: $name"
    passed=$((passed + 1))
  else
    echo "FAIL: $name"
    tail -n 40 "$work/log" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
}
# Does file $1 contain (lack) the text $2?
contains() { grep -qF -- "$2" "$1" || { echo "no '$2' in $1"; return 1; }; }
lacks() { ! grep -qF -- "$2" "$1" || { echo "'$2' in $1"; return 1; }; }

install_tree() {
  # Up to date after `ninja -C build check-gdn`; builds what is missing.
  ninja -C "$build" gdn-opt gdn-run GDNCAPI &&
    cmake --install "$build" --prefix "$P" &&
    for f in bin/gdn-opt bin/gdn-run lib/libGDNCAPI.so \
        lib/libMLIRGDNRegistration.a lib/libMLIRGDNJIT.a lib/libGDNRuntime.a \
        include/gdn/InitAllGDN.h include/gdn-c/GDN.h \
        include/gdn/Dialect/GDN/IR/GDNOps.h.inc include/gdn/Conversion/Passes.h.inc \
        lib/cmake/gdn/GDNConfig.cmake lib/cmake/gdn/GDNConfigVersion.cmake \
        lib/cmake/gdn/GDNTargets.cmake lib/pkgconfig/gdn.pc; do
      [ -e "$P/$f" ] || { echo "missing $P/$f"; return 1; }
    done &&
    # The Python wheel's component stays out of a plain install.
    { [ ! -e "$P/gdn" ] || { echo "component python installed: $P/gdn"; false; }; }
}
check "cmake --install $(basename "$build") (gdn-sdk, not python)" install_tree
if [ "$failed" -ne 0 ]; then
  echo "test-install: $passed passed, $failed failed"
  exit 1
fi

installed_tools() {
  "$P/bin/gdn-opt" "$root/examples/qwen3_next_decode.mlir" -o "$work/rt.mlir" &&
    contains "$work/rt.mlir" "gdn.recurrent" &&
    "$P/bin/gdn-run" --emit=ptx "$root/examples/qwen3_next_decode.mlir" >"$work/decode.ptx" &&
    contains "$work/decode.ptx" ".target sm_90a"
}
check "installed gdn-opt, gdn-run" installed_tools

# The hosts' build must name nothing of the source or build tree but their
# own sources.
no_tree_paths() {
  lacks "$1" "$root/include" && lacks "$1" "$root/lib" && lacks "$1" "$build/"
}

build_my_opt() {
  cmake "${cmake_args[@]}" -S "$root/examples/embedding/my-opt" -B "$work/my-opt" &&
    ninja -C "$work/my-opt" && no_tree_paths "$work/my-opt/build.ninja"
}
check "my-opt: find_package(GDN CONFIG), GDN::MLIRGDNRegistration" build_my_opt
my_opt=$work/my-opt/my-opt

my_opt_cpu() {
  "$my_opt" "$root/examples/qwen3_next_decode.mlir" --gdn-lower-to-cpu -o "$work/cpu.mlir" &&
    contains "$work/cpu.mlir" "llvm.func @decode" && lacks "$work/cpu.mlir" "gdn.recurrent"
}
check "my-opt qwen3_next_decode.mlir --gdn-lower-to-cpu" my_opt_cpu

my_opt_tensor() {
  "$my_opt" "$root/examples/embedding/my-opt/layer.mlir" \
    --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
    --gdn-lower-to-cpu -o "$work/layer.mlir" &&
    contains "$work/layer.mlir" "llvm.func @layer" && lacks "$work/layer.mlir" "gdn.recurrent"
}
check "my-opt layer.mlir (tensor form) --one-shot-bufferize --gdn-lower-to-cpu" my_opt_tensor

my_opt_ptx() {
  "$my_opt" "$root/examples/qwen3_next_decode.mlir" --gdn-lower-to-ptx=chip=sm_90a \
    -o "$work/ptx.mlir" && contains "$work/ptx.mlir" ".target sm_90a"
}
check "my-opt qwen3_next_decode.mlir --gdn-lower-to-ptx=chip=sm_90a" my_opt_ptx

c_host_pkg_config() {
  local PKG_CONFIG_PATH=$P/lib/pkgconfig flags
  export PKG_CONFIG_PATH
  flags=$(pkg-config --cflags --libs gdn) && mkdir -p "$work/c-host-pc" || return 1
  # shellcheck disable=SC2086 # $flags: several words
  clang-22 -fuse-ld=lld -std=c11 -Wall -Wextra -Werror \
    "$root/examples/embedding/c-host/c-host.c" $flags \
    -Wl,-rpath,"$(pkg-config --variable=libdir gdn)" -lm -o "$work/c-host-pc/c-host" &&
    "$work/c-host-pc/c-host" >"$work/c-host-pc/out" && cat "$work/c-host-pc/out" &&
    contains "$work/c-host-pc/out" "OK"
}
if command -v pkg-config >/dev/null; then
  check "c-host: pkg-config gdn, compile and run on the CPU" c_host_pkg_config
else
  echo "SKIP: c-host with pkg-config (no pkg-config: apt-get install pkgconf)"
  skipped=" (skipped: c-host with pkg-config)"
fi

c_host_cmake() {
  cmake "${cmake_args[@]}" -S "$root/examples/embedding/c-host" -B "$work/c-host" &&
    ninja -C "$work/c-host" && no_tree_paths "$work/c-host/build.ninja" &&
    "$work/c-host/c-host" >"$work/c-host/out" && cat "$work/c-host/out" &&
    contains "$work/c-host/out" "OK"
}
check "c-host: find_package(GDN CONFIG), GDN::GDNCAPI, compile and run on the CPU" c_host_cmake

echo "test-install: $passed passed, $failed failed$skipped"
[ "$failed" -eq 0 ]
