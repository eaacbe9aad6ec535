#!/usr/bin/env bash
# Tests a binary wheel (scripts/build-wheel.sh) as a serving user meets it:
# a fresh virtual environment, `pip install` of the wheel (numpy its only
# dependency), then, outside the source tree: import gdn; compile a kernel
# for CUDA (PTX for sm_90a, no GPU needed); run one on the CPU against the
# fp64 reference (python/tests/reference.py); and `ldd` of the installed
# library shows no LLVM or MLIR library.
#   scripts/test-wheel.sh [WHEEL]        (default: dist/gdn_mlir-*.whl)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wheel=${1:-$(ls "$root"/dist/gdn_mlir-*manylinux*.whl | head -1)}
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel"
lib=$("$venv/bin/python" -c "import gdn, os; print(os.path.join(os.path.dirname(gdn.__file__), 'libGDNCAPI.so'))")
if ldd "$lib" | grep -iE "llvm|mlir"; then
  echo "test-wheel: $lib links LLVM/MLIR dynamically" >&2
  exit 1
fi
cd "$venv"  # not the source tree: the installed package must be the one imported
env -u GDN_LIBRARY -u PYTHONPATH GDN_CACHE_DIR="$venv/cache" \
  "$venv/bin/python" - "$root/python/tests" "$lib" <<'PY'
import sys
import numpy as np
import gdn
sys.path.insert(0, sys.argv[1])
from reference import recurrent, rms_rel

assert gdn.__file__.startswith(sys.prefix), gdn.__file__
c = gdn.Compiler()
ptx = c.compile(N=1, T=1, H=2, HV=4, K=64, V=32, decay="log_space", beta="given",
                target="cuda").ptx
assert ".target sm_90a" in ptx and ".entry" in ptx
N, T, H, HV, K, V = 2, 3, 2, 4, 32, 16
k = c.compile(N=N, T=T, H=H, HV=HV, K=K, V=V, input_dtype="float32", decay="log_space",
              beta="given", qk_l2norm=True, initial_state=True, final_state=True)
rng = np.random.default_rng(0)
q, kk = (rng.standard_normal((N, T, H, K)).astype(np.float32) for _ in range(2))
v = rng.standard_normal((N, T, HV, V)).astype(np.float32)
g = np.log(rng.uniform(0.5, 1, (N, T, HV))).astype(np.float32)
beta = rng.uniform(0, 1, (N, T, HV)).astype(np.float32)
h0 = rng.standard_normal((N, HV, K, V)).astype(np.float32)
ht = np.full_like(h0, np.nan)
o = np.full((N, T, HV, V), np.nan, np.float32)
k.run_host([q, kk, v, g, beta, h0, ht, o])
ro, rs = recurrent(q, kk, v, g=g, beta=beta, initial_state=h0, qk_l2norm=True)
assert rms_rel(o, ro) < 1e-5 and rms_rel(ht, rs) < 1e-5, (rms_rel(o, ro), rms_rel(ht, rs))
print(f"test-wheel: gdn {gdn.version()} from {sys.argv[2]}: PTX ok, CPU run ok "
      f"(o rms-rel {rms_rel(o, ro):.1e})")
PY
