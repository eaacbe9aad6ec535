#!/usr/bin/env bash
# A/B of two builds on the GPU machine: .carry/base/gdn-run.xz (before) and
# .carry/gdn-run.xz (after), every FILE timed by bench/sweep_flags.sh under
# its default schedule and checked against the fp64 reference, the builds in
# turn, ROUNDS times (default 2), so drift shows as a difference between
# rounds rather than between builds. Prints one markdown table a round.
#   bash scripts/h200-ab.sh FILE...
set -u
bin=/tmp/gdn-ab
mkdir -p "$bin/base" "$bin/new"
xz -dc .carry/base/gdn-run.xz > "$bin/base/gdn-run" && xz -dc .carry/gdn-run.xz > "$bin/new/gdn-run" ||
  { echo "needs .carry/base/gdn-run.xz and .carry/gdn-run.xz" >&2; exit 2; }
chmod +x "$bin/base/gdn-run" "$bin/new/gdn-run"
for round in $(seq "${ROUNDS:-2}"); do
  for build in base new; do
    echo "## round $round, $build"
    bash bench/sweep_flags.sh "$bin/$build/gdn-run" "" "$@"
  done
done
