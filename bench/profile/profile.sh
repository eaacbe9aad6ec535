#!/usr/bin/env bash
# Nsight Compute profiles of gdn kernels on the GPU machine (docs/GPU.md):
# one launch of each kernel, run by the carried static gdn-run, under each
# schedule given. Clocks are left alone (--clock-control none, as the device
# notes ask). Writes $OUT/ncu-<example>-<schedule>.txt and prints the key
# lines (duration, DRAM throughput, occupancy, registers, top stall).
#   bash bench/profile/profile.sh FILE.mlir "gdn-run flags" ["flags" ...]
# ("": the default schedule). A set of flags is split into words as a shell
# would, so quote a schedule:
#   bash bench/profile/profile.sh F.mlir "" "--schedule='#gdn.schedule<columns_per_lane = 4>'"
set -u
# words FLAGS: one gdn-run argument a line, split as a POSIX shell would
# (shlex): quote a schedule, "--schedule='#gdn.schedule<warps = 1>'".
words() {
  python3 -c 'import shlex, sys; print("\n".join(shlex.split(sys.argv[1])))' "$1"
}
out=${OUT:-/tmp}
bin=/tmp/gdn-bin
mkdir -p "$bin"
[ -x "$bin/gdn-run" ] || xz -dc .carry/gdn-run.xz > "$bin/gdn-run"
chmod +x "$bin/gdn-run"
f=$1; shift
for flags in "$@"; do
  tag=$(basename "$f" .mlir)-$(echo "$flags" | tr -c 'a-z0-9\n' '_' | tr -s '_' | sed 's/^_*//; s/_*$//')
  args=()
  [ -n "$flags" ] && mapfile -t args < <(words "$flags")
  ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats \
      -k regex:recurrent -c 1 "$bin/gdn-run" --target=cuda ${args[@]+"${args[@]}"} "$f" > "$out/ncu-$tag.txt" 2>&1
  echo "== $tag"
  grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit Registers|Warp Cycles Per Issued Instruction|L1/TEX Hit Rate|L2 Hit Rate) " "$out/ncu-$tag.txt"
done
