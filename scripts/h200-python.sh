#!/usr/bin/env bash
# Runs on the GPU machine after scripts/h200-check.sh (see docs/GPU.md): the
# Python package over the carried static libGDNCAPI.so, its GPU tests (vs the
# fp64 reference, vs FLA, CUDA graphs, 1000 repeats, torch.compile), the
# compile-time benchmark and the side-by-side benchmark against FLA, SGLang
# and a device copy. Needs .carry/libGDNCAPI.so.xz and .whl/ (fla-core and
# sglang wheels). Writes logs and tables under $OUT.
set -u
out=${OUT:-/tmp}
mkdir -p /tmp/gdn-lib /tmp/sgl
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-*.whl
export PYTHONPATH=/tmp/site:$PWD/python GDN_SGLANG_DIR=/tmp/sgl
# SGLang's kernel file needs only torch and triton: take it from the wheel.
python3 - <<'PY'
import glob, zipfile
z = zipfile.ZipFile(glob.glob(".whl/sglang-*.whl")[0])
z.extractall("/tmp/sgl", [m for m in z.namelist() if m.endswith("fla/fused_sigmoid_gating_recurrent.py")])
PY
# PYTEST=0: only the side-by-side benchmark (e.g. a schedule sweep), into
# BENCH_OUT (default $OUT).
if [ "${PYTEST:-1}" != 0 ]; then
  python3 -m pytest -q -rs python/tests 2>&1 | tee "$out/pytest-h200.log" | tail -15
  python3 bench/bench_compile.py --out "$out/compile-h200.md"
fi
bout=${BENCH_OUT:-$out}
mkdir -p "$bout"
python3 bench/bench_gdn.py --sglang /tmp/sgl --out "$bout" ${BENCH_ARGS:-} 2>&1 | tee "$bout/bench.log" | tail -40
