#!/usr/bin/env bash
# Runs on the GPU machine (see docs/GPU.md): unpacks the carried static
# binaries, runs the CUDA unit tests, times each example under the default
# schedule (CUDA-graph replays, rotating input sets) and checks every example
# on the GPU against the fp64 reference (gdn-run --check's tolerances:
# RMS-relative <= 2e-3 on o, 3.7e-3 after bf16 products; on the state <= 1e-5
# for f32, 2.5e-3 after tf32 or bf16 products, 4e-3 for bf16, 1e-3 for f16)
# under the default and
# 17 other schedules (and producer-warp, two-tokens-a-step and chunked-solve
# schedules, on CUDA and tensor cores, where the example takes them), each a
# gdn-run --schedule='#gdn.schedule<...>'. Writes the log to
# $OUT/h200-check.log and prints a short table last.
set -u
out=${OUT:-/tmp}
bin=/tmp/gdn-bin
mkdir -p "$bin"
for f in .carry/*.xz; do xz -dc "$f" > "$bin/$(basename "$f" .xz)"; chmod +x "$bin/$(basename "$f" .xz)"; done
log="$out/h200-check.log"
: > "$log"
fails=0
run() { echo "\$ $*" >> "$log"; "$@" >> "$log" 2>&1; local rc=$?; [ $rc -ne 0 ] && { echo "FAILED (rc=$rc): $*" >> "$log"; fails=$((fails+1)); }; return $rc; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$log" 2>&1
LD_LIBRARY_PATH="$bin" run "$bin/GDNUnitTests"
# Timed runs one at a time (the GPU to itself); then the schedule checks,
# whose cost is the CPU's fp64 reference, 8 at a time, each into its own log
# so the combined log keeps their order.
# (and four T = 12 final-state shapes: N = 8, whose default is the
# tensor-core solve, N = 64, the same with the L2 prefetch of a later CTA's
# staged inputs, and N = 1, the token loop fed by a producer warp; and two
# N = 1 decodes, whose default is 2 lanes along V, and the N = 64 bf16 pool
# decode, 2 lanes along V with 4 columns a lane; and a replayed verify,
# whose k, v, g and beta windows --check compares with the reference)
for f in examples/*.mlir bench/sweeps/fla_t12_n8_kv.mlir bench/profile/fla_t12_n64_kv.mlir \
         bench/sweeps/fla_t12_n1_kv.mlir \
         bench/sweeps/fused_t12_n1_vk.mlir \
         bench/sweeps/decode_n1_f32.mlir bench/sweeps/decode_n1_bf16_pool.mlir \
         bench/sweeps/decode_n64_bf16_pool.mlir \
         bench/sweeps/verify_t4_n1_f32.mlir bench/sweeps/verify_t12_n8_f32.mlir \
         bench/sweeps/replay_verify_t4_n8.mlir; do
  run "$bin/gdn-run" --target=cuda --check --bench "$f"
  line=$("$bin/gdn-run" --target=cuda --check --bench --json "$f" 2>&1 | tail -1)
  echo "$line" >> "$log"
done
# SCHEDULES=0: the default schedules only (a short run after a cost-model
# change whose kernels the full matrix already checked).
if [ "${SCHEDULES:-1}" = 0 ]; then
  python3 scripts/h200-summary.py "$log" | tee -a "$log"
  grep -c "check .* ok" "$log" | sed 's/^/checks ok: /'
  grep -c "FAILED" "$log" | sed 's/^/FAILED lines: /'
  exit $fails
fi
# The schedules: parameters of a #gdn.schedule (the rest the cost model's),
# passed as gdn-run --schedule='#gdn.schedule<...>'. Each job is one line of
# words for xargs, whose quotes keep the attribute one argument. First the
# thread mappings (columns_per_lane, warps, lanes_along_v) and staged_tokens
# (0: none), each valid for every example: V / (columns_per_lane *
# lanes_along_v * warps) is whole.
jobs=$(mktemp -d)
i=0
job() {  # job SEED FILE PARAMETERS: one gdn-run --check line
  i=$((i+1))
  echo "$(printf %04d $i) $bin/gdn-run --target=cuda --check '--schedule=#gdn.schedule<$3>' --seed=$1 $2"
}
for f in examples/*.mlir; do
  for sched in "columns_per_lane = 1, warps = 4" "columns_per_lane = 2, warps = 4" \
               "columns_per_lane = 4, warps = 1" "columns_per_lane = 4, warps = 2" \
               "columns_per_lane = 4, warps = 4" "columns_per_lane = 8, warps = 1" \
               "columns_per_lane = 8, warps = 2" "columns_per_lane = 1, warps = 2" \
               "columns_per_lane = 2, warps = 2" \
               "columns_per_lane = 4, lanes_along_v = 1, warps = 4" \
               "columns_per_lane = 4, lanes_along_v = 2, warps = 2" \
               "columns_per_lane = 2, lanes_along_v = 8, warps = 2" \
               "staged_tokens = 0" "staged_tokens = 1" "staged_tokens = 3" \
               "columns_per_lane = 8, warps = 1, staged_tokens = 32" \
               "columns_per_lane = 1, warps = 1, staged_tokens = 5"; do
    job 3 "$f" "$sched"
  done
  # Staged kernels only: a producer warp (ring of 2-3 slots, several chunks
  # a sequence so slots are reused and phases flip, setmaxnreg) and the
  # chunked (WY) solve (final state only: partial chunks, 1-4 columns a lane;
  # on tensor cores also chunk_parallel, its scan split in two segments and
  # the warp-specialized solve).
  # The chunked solve on tensor cores (solve = tensor_cores) also on the
  # decode examples, staged (a chunk of 8 rows holding one token: padding
  # rows).
  case $(basename "$f") in
    qwen3_next_mtp.mlir|kv_k128_v64.mlir|sglang_varlen_extend*.mlir) extra=chunked ;;
    sglang_verify_t4.mlir|sglang_verify_tree.mlir|kimi_linear_kda_verify_t4.mlir) extra=ws ;;
    qwen3_next_decode.mlir|qwen35_27b_gqa3.mlir|sglang_pool_decode*.mlir) extra=decode ;;
    *) extra= ;;
  esac
  if [ "$extra" = decode ]; then
    job 5 "$f" "staged_tokens = 8, solve = tensor_cores"
    continue
  fi
  [ -n "$extra" ] && for sched in "producer_stages = 2" \
      "staged_tokens = 2, producer_stages = 3" "staged_tokens = 1, producer_stages = 2" \
      "columns_per_lane = 2, warps = 4, producer_stages = 2, consumer_registers = 128" \
      "reductions = token_pairs" \
      "staged_tokens = 3, reductions = token_pairs, producer_stages = 2"; do
    job 5 "$f" "$sched"
  done
  [ "$extra" = chunked ] && for sched in "solve = cuda_cores" \
      "staged_tokens = 3, solve = cuda_cores" "columns_per_lane = 1, solve = cuda_cores" \
      "columns_per_lane = 2, staged_tokens = 8, solve = cuda_cores" \
      "solve = tensor_cores" "staged_tokens = 8, solve = tensor_cores" \
      "warps = 2, solve = tensor_cores" "warps = 1, staged_tokens = 8, solve = tensor_cores" \
      "solve = chunk_parallel" "warps = 2, solve = chunk_parallel" \
      "solve = tensor_cores, producer_stages = 2"; do
    job 5 "$f" "$sched"
  done
  # The scan split along T (context-parallel segments) where each segment
  # holds tokens: a varlen batch of 64 tokens in two of 32.
  case $(basename "$f") in
    sglang_varlen_extend*.mlir) job 5 "$f" "solve = chunk_parallel, segments = 2" ;;
  esac
done | xargs -P 8 -L 1 sh -c 'id=$0; { echo "\$ $*"; "$@" 2>&1 || echo "FAILED (rc=$?): $*"; } > '"$jobs"'/$id.log'
cat "$jobs"/*.log >> "$log"
fails=$((fails + $(grep -c "^FAILED" "$jobs"/*.log | awk -F: '{s+=$2} END {print s+0}')))
rm -rf "$jobs"
echo "=== summary (failures: $fails)"
python3 scripts/h200-summary.py "$log" | tee -a "$log"
grep -c "check .* ok" "$log" | sed 's/^/checks ok: /'
grep -c "FAILED" "$log" | sed 's/^/FAILED lines: /'
exit $fails
