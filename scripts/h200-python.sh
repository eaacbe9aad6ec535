#!/usr/bin/env bash
# Runs on the GPU machine after scripts/h200-check.sh (see docs/GPU.md): the
# Python package over the carried static libGDNCAPI.so, its GPU tests (vs the
# fp64 reference, vs FLA and SGLang, CUDA graphs, 1000 repeats,
# torch.compile), the compile-time benchmark and the side-by-side benchmark
# against FLA, SGLang, FlashInfer and a device copy (or, with BENCH, the
# prefill benchmark against FLA, FlashQLA and FlashInfer). Needs
# .carry/libGDNCAPI.so.xz and the anchor site's parts .carry/anchors*.txz
# (scripts/anchor-site.sh). Writes logs and tables under $OUT.
#
# The anchors' parts may come in separate calls (one call's carry is 64 MiB):
# each part found is unpacked into .carry/anchor-site, which stays on the
# machine while it is warm. ANCHORS_ONLY=1 unpacks and stops (the call that
# carries .carry/anchors-cutedsl.txz).
set -u
out=${OUT:-/tmp}
mkdir -p "$out"
site=$PWD/.carry/anchor-site
mkdir -p "$site"
for part in .carry/anchors*.txz; do
  [ -e "$part" ] || continue
  stamp="$site/.unpacked-$(basename "$part")"
  id=$(stat -c %s-%Y "$part")
  [ "$(cat "$stamp" 2>/dev/null)" = "$id" ] && continue  # unpacked by an earlier call
  xz -dc "$part" | tar -x -C "$site" && echo "$id" > "$stamp" && echo "unpacked $part into $site"
done
if ! ls "$site"/nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/_mlir_libs/_cutlass_ir.*.so >/dev/null 2>&1; then
  echo "note: no CuTe-DSL compiler in $site (.carry/anchors-cutedsl.txz not unpacked on this" \
       "machine): FlashInfer's and SGLang's CuTe-DSL kernels will show as errors"
fi
[ "${ANCHORS_ONLY:-0}" = 1 ] && exit 0
mkdir -p /tmp/gdn-lib
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache
# The site first (its .pth puts nvidia-cutlass-dsl's dsl_packages on the path
# too: PYTHONPATH does not run .pth files, so that directory is named here).
export PYTHONPATH=$site:$site/nvidia_cutlass_dsl/dsl_packages:$PWD/python
# The image's versions of what the anchors import from it, and the anchors'
# (bench_gdn.py's log and table name each anchor's import error, if any).
python3 - <<'PY' 2>&1 | tee "$out/anchor-versions.log"
import importlib.metadata as md
for d in ["torch", "triton", "typing_extensions", "cuda-bindings", "cuda-python", "protobuf",
          "anyio", "psutil", "pillow", "requests", "nvidia-ml-py", "einops", "numpy",
          "transformers", "fla-core", "sglang", "flashinfer-python", "nvidia-cutlass-dsl",
          "apache-tvm-ffi", "pydantic", "ipython"]:
    try:
        print(f"{d} {md.version(d)}")
    except md.PackageNotFoundError:
        print(f"{d} not installed")
PY
# PYTEST=0: only the side-by-side benchmark (e.g. a schedule sweep), into
# BENCH_OUT (default $OUT); PYTEST_ARGS: the tests to run (default
# python/tests, e.g. "python/tests/test_torch.py python/tests/test_kda.py").
if [ "${PYTEST:-1}" != 0 ]; then
  python3 -m pytest -q -rs ${PYTEST_ARGS:-python/tests} 2>&1 | tee "$out/pytest-h200.log" | tail -15
  python3 bench/bench_compile.py --out "$out/compile-h200.md"
fi
# BENCH: the benchmark script (default bench/bench_gdn.py; bench/bench_prefill.py
# for the prefill grid, whose points can be split over calls with its --Ns,
# --Ts, --hv and --mixes and joined with its --from-json; none: no benchmark,
# e.g. a call that runs only the tests).
[ "${BENCH:-}" = none ] && exit 0
bout=${BENCH_OUT:-$out}
mkdir -p "$bout"
bench=${BENCH:-bench/bench_gdn.py}
log=bench.log
[ "$bench" = bench/bench_gdn.py ] || log=$(basename "$bench" .py).log
python3 "$bench" --out "$bout" ${BENCH_ARGS:-} 2>&1 | tee "$bout/$log" | tail -40
