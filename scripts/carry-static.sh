#!/usr/bin/env bash
# Packs the static (-DGDN_STATIC=ON) binaries for a machine without LLVM, such
# as the H200 test machine: stripped and xz-compressed into .carry/ (ignored by
# git), well under the 64 MiB carry limit.
#   scripts/carry-static.sh [build-static-dir]
set -euo pipefail
build=${1:-build-static}
mkdir -p .carry
for t in gdn-run gdn-opt; do
  strip -o ".carry/$t" "$build/bin/$t"
  xz -T0 -6 -f ".carry/$t"
done
if [ -f "$build/lib/libGDNCAPI.so" ]; then
  strip -o .carry/libGDNCAPI.so "$build/lib/libGDNCAPI.so"
  xz -T0 -6 -f .carry/libGDNCAPI.so
fi
if [ -x "$build/unittests/GDNUnitTests" ]; then
  strip -o .carry/GDNUnitTests "$build/unittests/GDNUnitTests"
  xz -T0 -6 -f .carry/GDNUnitTests
fi
ls -la .carry
