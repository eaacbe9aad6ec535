#!/usr/bin/env bash
# Times gdn-run --bench (CUDA-graph replay medians, rotating input sets) for
# every (file, schedule flags) pair and prints a markdown table, the kernel
# `--check`ed against the fp64 reference each time. For schedule questions
# the side-by-side benchmark (bench_gdn.py --sweep) does not cover.
#   bench/sweep_flags.sh GDN_RUN "FLAGS1;FLAGS2;..." FILE...
# ("" in the list: the default schedule). A set of flags is split into words
# as a shell would, so quote a schedule, e.g.
#   bench/sweep_flags.sh build/bin/gdn-run \
#     ";--schedule='#gdn.schedule<columns_per_lane = 4, warps = 1>';--schedule='#gdn.schedule<reductions = in_turn>' --sm-count=66" \
#     bench/sweeps/verify_t4_n1.mlir
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 GDN_RUN \"FLAGS1;FLAGS2;...\" FILE... (on a machine with a GPU;" \
       "e.g. FLAGS1 = --schedule='#gdn.schedule<warps = 1>')" >&2
  exit 2
fi
# words FLAGS: one gdn-run argument a line, split as a POSIX shell would
# (shlex): quote a schedule, "--schedule='#gdn.schedule<warps = 1>'".
words() {
  python3 -c 'import shlex, sys; print("\n".join(shlex.split(sys.argv[1])))' "$1"
}
run=$1; IFS=';' read -r -a sets <<< "$2"; shift 2
[ ${#sets[@]} -eq 0 ] && sets=("")  # "": the default schedule alone
echo "| file | flags | us | check |"
echo "|---|---|---|---|"
for f in "$@"; do
  for flags in "${sets[@]}"; do
    args=()
    [ -n "$flags" ] && mapfile -t args < <(words "$flags")
    line=$($run --target=cuda --check --bench --json ${args[@]+"${args[@]}"} "$f" 2>&1 | tail -1)
    us=$(echo "$line" | python3 -c '
import json, sys
try:
    r = json.loads(sys.stdin.read())
    print("%.2f | %s" % (r["us"], r["check"]))
except Exception:
    print("— | error")')
    # A failed run prints why (a diagnostic, no GPU) on stderr.
    [[ "$us" == *error* ]] && echo "$line" | sed 's/^/# /' >&2
    echo "| $(basename "$f") | ${flags:-default} | $us |"
  done
done
