set -u
t0=$(date +%s)
PYTEST=0 BENCH_OUT=$OUT/bench BENCH_ARGS="--only FLA-style --Ts 12 --hv 32 --Ns 8,16,64,128,256,1024" bash scripts/h200-python.sh > $OUT/bench-run.log 2>&1
echo "bench done in $(( $(date +%s) - t0 )) s"
grep -A14 "final state only" $OUT/bench/bench_gdn.md | head -24
t1=$(date +%s)
SCHEDULES=1 timeout 400 bash scripts/h200-check.sh > $OUT/check-run.log 2>&1; echo "check rc=$? in $(( $(date +%s) - t1 )) s"
tail -25 $OUT/check-run.log
