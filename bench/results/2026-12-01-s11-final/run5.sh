set -u
PYTEST=0 BENCH_OUT=$OUT/bench BENCH_ARGS="--only FLA-style --Ts 12 --hv 32 --Ns 32,512" bash scripts/h200-python.sh > $OUT/bench-run.log 2>&1
grep "final state only" $OUT/bench/bench_gdn.md | head -4
