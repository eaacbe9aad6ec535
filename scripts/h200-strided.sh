#!/usr/bin/env bash
# On the GPU machine (docs/GPU.md): strided operands against dense ones in
# one run. Each workload (examples/, bench/sweeps/) and its strided twin
# (scripts/strided-variant.py: q, k, v views of SGLang's mixed_qkv, a and b
# views of a packed ba, pools and buffers with a slot pitch) run under
# gdn-run --check --bench, alternating dense / strided twice (the faster of
# each pair's medians kept); then test_strided.py and test_entry_points.py
# on the GPU. Needs .carry/ (scripts/carry-static.sh). Writes strided.md
# (the table), strided-logs.tar.xz (every run's JSON and log) and
# pytest-strided.log under $OUT: few files, as the device tool returns few.
set -u
out=${OUT:-/tmp}
logs=/tmp/strided-logs  # tarred into $OUT at the end (the tool returns few files)
mkdir -p /tmp/bin /tmp/gdn-lib "$logs"
xz -dc .carry/gdn-run.xz > /tmp/bin/gdn-run && chmod +x /tmp/bin/gdn-run
xz -dc .carry/libGDNCAPI.so.xz > /tmp/gdn-lib/libGDNCAPI.so
files="examples/sglang_pool_decode_bf16.mlir examples/sglang_verify_t4.mlir
  examples/sglang_varlen_extend.mlir examples/sglang_verify_tree.mlir
  bench/sweeps/decode_n1_bf16_pool.mlir bench/sweeps/decode_n64_bf16_pool.mlir
  bench/sweeps/verify_t4_n1.mlir bench/sweeps/verify_t4_n64.mlir
  bench/sweeps/verify_t12_n512.mlir bench/sweeps/fused_t12_n1_vk.mlir"
for f in $files; do
  b=$(basename "$f" .mlir)
  python3 scripts/strided-variant.py "$f" > "$logs/$b.strided.mlir"
  # --check where gdn-run can hold the fp64 check in host memory; it
  # refuses at once where it cannot (verify_t12_n512: 121 GiB), and then
  # the workload is timed without it (the table says "no check").
  check=--check
  for round in 1 2; do
    for kind in dense strided; do
      src=$f
      [ $kind = strided ] && src=$logs/$b.strided.mlir
      log=$logs/$b.$kind.$round
      /tmp/bin/gdn-run $check --bench --json "$src" > "$log.json" 2> "$log.log"
      if [ -n "$check" ] && grep -q -- "--max-gib" "$log.log"; then
        check=
        /tmp/bin/gdn-run --bench --json "$src" > "$log.json" 2> "$log.log"
      fi
    done
  done
done
LOGS="$logs" FILES="$files" python3 - <<'PY' | tee "$out/strided.md"
import json, os
out = os.environ["LOGS"]
print("| workload | dense µs | strided µs | strided / dense | check dense | check strided |")
print("|---|---|---|---|---|---|")
for f in os.environ["FILES"].split():
    b = os.path.basename(f)[:-5]
    row = []
    for kind in ("dense", "strided"):
        runs = []
        for r in (1, 2):
            try:
                runs.append(json.load(open(f"{out}/{b}.{kind}.{r}.json")))
            except Exception as e:  # a failed run is an error in the table
                runs.append({"us": float("nan"), "check": f"error: {e}"})
        row.append((min(x.get("us", float("nan")) for x in runs),
                    ",".join(x.get("check", "no check") for x in runs)))
    (d, dc), (s, sc) = row
    print(f"| {b} | {d:.2f} | {s:.2f} | {s / d:.3f} | {dc} | {sc} |")
PY
tar -C "$logs" -cJf "$out/strided-logs.tar.xz" .
export GDN_LIBRARY=/tmp/gdn-lib/libGDNCAPI.so GDN_CACHE_DIR=/tmp/gdn-cache PYTHONPATH=$PWD/python
python3 -m pytest -q -rs python/tests/test_strided.py python/tests/test_entry_points.py \
  2>&1 | tee "$out/pytest-strided.log" | tail -5
