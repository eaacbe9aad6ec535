#!/usr/bin/env bash
# On the GPU machine (docs/GPU.md): the integrations' tests on CUDA over the
# carried static libGDNCAPI.so. test_transformers.py (its bf16 test: four
# tiny random-weight models with the real head shapes, gdn against the path
# transformers bound, FLA 0.6.0's Triton kernels, both judged against the
# fp32 model), test_sglang_backend.py (SGLang's own code is skipped unless
# sglang 0.5.23 imports) and test_strided.py. Needs .carry/libGDNCAPI.so.xz
# (scripts/carry-static.sh; carry that file alone, not all of .carry/, to
# stay under 64 MiB) and in .whl/ the transformers 5.17.0 and
# fla-core 0.6.0 wheels, fetched here with
#   pip download --no-deps transformers==5.17.0 fla-core==0.6.0 -d .whl
# plus any of their dependencies that the GPU machine lacks (the log's first
# lines check them; an sglang wheel there is left out). Writes
# $OUT/pytest-integrations.log (or /tmp/...) and exits with pytest's status.
set -u
out=${OUT:-/tmp}
log=$out/pytest-integrations.log
mkdir -p /tmp/gdn-lib "$out"
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so || exit 1
wheels=$(ls .whl/*.whl | grep -v '/sglang-')
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --root-user-action=ignore --target /tmp/site-integrations $wheels || exit 1
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache \
  PYTHONPATH=/tmp/site-integrations:$PWD/python PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 - <<'PY'
import importlib, importlib.metadata as md, platform, sys
print("python", platform.python_version(), sys.executable)
for name in ("torch", "triton", "transformers", "fla-core", "einops"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name} MISSING")
import torch, transformers
print("torch cuda", torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name())
print("transformers from", transformers.__file__)
# The carried wheels went in with --no-deps: are their runtime needs here?
from packaging.requirements import Requirement
for dist in ("transformers", "fla-core"):
    for line in md.requires(dist) or []:
        req = Requirement(line)
        if req.marker and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            have = md.version(req.name)
            ok = req.specifier.contains(have, prereleases=True)
            print(f"  {dist} needs {req}: {have}{'' if ok else ' (OUT OF RANGE)'}")
        except md.PackageNotFoundError:
            print(f"  {dist} needs {req}: MISSING")
try:
    importlib.import_module("fla.ops.gated_delta_rule")
    importlib.import_module("fla.ops.kda")
    print("fla.ops imports: transformers binds FLA's kernels")
except Exception as e:  # noqa: BLE001
    print(f"fla.ops does not import ({type(e).__name__}: {e}): transformers binds its torch reference")
PY
} > "$log" 2>&1
cat "$log"
python3 -m pytest -q -rs -s python/tests/test_transformers.py python/tests/test_sglang_backend.py \
  python/tests/test_strided.py 2>&1 | tee -a "$log" | grep -iE "^\[bf16|passed|failed|error|skipped"
exit "${PIPESTATUS[0]}"
