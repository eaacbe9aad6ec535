#!/usr/bin/env bash
# The main job for a newcomer: install the dependencies, build, then compile
# the Qwen3-Next decode example and run it -- on the GPU if there is one, on
# the CPU otherwise -- checked against the fp64 reference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/build/bin/gdn-run" --check "$root/examples/qwen3_next_decode.mlir"
