#!/usr/bin/env bash
# Builds the anchors' site for the GPU machine (docs/GPU.md): FLA, SGLang and
# FlashInfer installed as packages (pip install --no-deps --target) with the
# import-time dependencies the machine's image lacks, pruned to the files
# reachable from the entry points that bench/bench_gdn.py and the tests call,
# and packed with xz into .carry/ in parts that each fit one call's carry.
# Nothing is stubbed: every module an entry point imports is the real one.
#
#   scripts/anchor-site.sh            # site in /tmp/anchor-site, parts in .carry/
#
# Environment: SITE (default /tmp/anchor-site), WHEELS (/tmp/anchor-wheels),
# PYVER (3.12, the GPU machine's python3), OUTDIR (.carry), CUTEDSL=0 (leave
# out nvidia-cutlass-dsl: FlashInfer's and SGLang's CuTe-DSL kernels then show
# as errors in the table), EXTRA_ENTRIES (more entry modules kept by the
# pruning, space-separated), XZ_OPT (default -9e -T0), SGL_KERNEL_VERSION
# (default 0.4.6, see below).
#
# Parts (each carried in its own call, or together where they fit):
#   .carry/anchors.txz         FLA, FlashInfer, their dependencies and the
#                              CuTe-DSL Python packages and runtime library
#   .carry/anchors-sglang.txz  SGLang (its kernels, and the server modules
#                              its attention backends and test kit import)
#                              and the dependencies only SGLang imports
#   .carry/anchors-sglkernel.txz sgl_kernel (sglang-kernel's ops for sm_90)
#   .carry/anchors-cutedsl.txz the CuTe-DSL compiler extension
#                              (_cutlass_ir.cu13...so, 193 MB unpacked)
#   .carry/anchors-qla.txz     FlashQLA (flash_qla) and TileLang, its
#                              compiler (tilelang, z3, torch-c-dlpack-ext;
#                              bench/bench_prefill.py's FlashQLA rows)
# The .txz suffix keeps them out of scripts/h200-check.sh's .carry/*.xz.
# On the GPU machine scripts/h200-python.sh unpacks every part it finds into
# .carry/anchor-site, which stays between calls while the machine is warm.
set -euo pipefail
SITE=${SITE:-/tmp/anchor-site}
WHEELS=${WHEELS:-/tmp/anchor-wheels}
PYVER=${PYVER:-3.12}
OUTDIR=${OUTDIR:-.carry}
CUTEDSL=${CUTEDSL:-1}
export XZ_OPT=${XZ_OPT:--9e -T0}
here=$(cd "$(dirname "$0")" && pwd)

# The anchors (docs/anchors.md).
ANCHORS=(fla-core==0.6.0 sglang==0.5.23 flashinfer-python==0.7.2.post1)
# What importing their entry points needs beyond the GPU image (KINDS.md of
# the device tool lists the image's packages: torch, triton, numpy, einops,
# packaging, requests, tqdm, pillow, psutil, aiohttp and its dependencies,
# anyio, pygments, protobuf, cuda-bindings, nvidia-ml-py, transformers ...).
DEPS=(
  # flashinfer/__init__.py imports tvm_ffi; sglang 0.5.23 pins 0.1.11.
  apache-tvm-ffi==0.1.11
  # sglang/__init__.py -> sglang.srt.utils (common, network, msgspec_utils):
  orjson==3.13.0 pybase64==1.5.1 starlette==1.10.0 msgspec==0.23.0 pyzmq==27.3.0
  pydantic==2.12.5 pydantic-core==2.41.5 typing-inspection==0.4.2
  # sglang/__init__.py -> sglang.lang.api -> sglang.utils imports IPython,
  # which imports these (IPython 8: no psutil>=7 as IPython 9 requires):
  ipython==8.37.0 traitlets==5.14.3 decorator==5.2.1 stack-data==0.6.3 executing==2.2.1
  asttokens==3.0.0 pure-eval==0.2.3 prompt-toolkit==3.0.52 wcwidth==0.2.14
  jedi==0.19.2 parso==0.8.5
  # SGLang's GDNAttnBackend and attention test kit (test_sglang_backend.py)
  # import its server: sglang.srt.server_args, model_executor, managers.
  dill==0.4.1 compressed-tensors==0.20.1 loguru==0.7.3 gguf==0.19.0 openai==3.57.0
  distro==1.9.0 jiter==0.19.0 sniffio==1.3.1 partial-json-parser==0.2.1.1.post7
  uvicorn==0.54.0 fastapi==0.165.0 opentelemetry-api==1.45.2 httpx2==2.16.2
  annotated-types==0.7.0
)
# SGLang's import path on CUDA (its attention backends and test kit, not its
# Triton kernels) loads sgl_kernel, the AOT extension of sglang-kernel.
# sglang 0.5.23 pins 0.4.10, whose ops library needs torch symbols newer than
# the GPU machine's torch 2.11 (c10::cuda::CUDAErrorLogCapture), so it does
# not load there; 0.4.6 is the newest release whose sm_90 ops link against
# torch 2.11 (scripts/torch-abi-check.py). SGL_KERNEL_VERSION picks another.
# Packed in its own part.
SGL_KERNEL=(sglang-kernel==${SGL_KERNEL_VERSION:-0.4.6})
SGL_KERNEL_ONLY=(sgl_kernel triton_kernels sglang_kernel)
# The top-level names in the site that only SGLang imports: packed with
# sglang/ into anchors-sglang.txz.
SGLANG_ONLY=(sglang orjson pybase64 starlette msgspec zmq pyzmq pydantic pydantic_core
  typing_inspection IPython traitlets decorator stack_data executing asttokens
  pure_eval prompt_toolkit wcwidth jedi parso dill compressed_tensors loguru gguf
  openai distro jiter sniffio partial_json_parser uvicorn fastapi opentelemetry httpx2
  annotated_types)
# FlashInfer's GDN kernels (gdn_kernels/*) and SGLang's cutedsl_gdn*.py are
# CuTe-DSL: nvidia-cutlass-dsl[cu13], the version sglang 0.5.23 pins
# (FlashInfer 0.7.2.post1 takes >= 4.7).
CUTLASS=(nvidia-cutlass-dsl==4.8.0 nvidia-cutlass-dsl-libs-base==4.8.0
         nvidia-cutlass-dsl-libs-core==4.8.0 nvidia-cutlass-dsl-libs-cu13==4.8.0)
[ "$CUTEDSL" = 0 ] && CUTLASS=()
# FlashQLA 0.1.3, a prefill anchor (issue 23), and what it imports beyond the
# image: TileLang 0.1.15 (TVM, CUTLASS headers; its generated CUDA is built
# with the image's nvcc) and TileLang's z3-solver and torch-c-dlpack-ext.
# QLA=0 leaves them out (FlashQLA's rows then show the import error).
QLA_PKGS=(flash-qla==0.1.3 tilelang==0.1.15 z3-solver==4.15.4.0 torch-c-dlpack-ext==0.1.5)
QLA_ONLY=(flash_qla tilelang z3 z3_solver torch_c_dlpack_ext)
[ "${QLA:-1}" = 0 ] && QLA_PKGS=()
# The modules bench/bench_gdn.py and the tests import; the pruning keeps what
# they reach (python3 scripts/anchor-site-prune.py --help).
ENTRIES=(
  fla.ops.gated_delta_rule fla.ops.kda
  sglang.kernels.ops.attention.linear.fused_sigmoid_gating_recurrent
  sglang.kernels.ops.attention.fla.fused_recurrent
  sglang.kernels.ops.attention.cutedsl_gdn
  sglang.kernels.ops.attention.cutedsl_gdn_mtp_ring
  flashinfer.gdn_decode
  # bench/bench_prefill.py's FlashInfer prefill; gdn_prefill imports its qk
  # L2 norm inside the call, which the pruning's import walk does not see.
  flashinfer.gdn_prefill flashinfer.gdn_kernels.qk_l2norm
  # gdn.integrations.sglang and python/tests/test_sglang_backend.py
  sglang.srt.layers.attention.linear.gdn_backend
  sglang.srt.layers.attention.linear.kda_backend
  sglang.srt.layers.attention.linear.utils
  sglang.srt.layers.attention.linear.kernels.kernel_backend
  sglang.srt.model_executor.forward_batch_info
  sglang.srt.runtime_context sglang.srt.server_args sglang.srt.plugins
  sglang.srt.plugins.hook_registry
  sglang.srt.arg_groups.choices sglang.srt.arg_groups.overrides
  sglang.test.kits.attention_unittest.attention_methods.gdn_attention
  sglang.test.kits.attention_unittest.runner_modes.speculative_target_verify_runner
  ${EXTRA_ENTRIES:-}
)

plat=(--only-binary=:all: --python-version "$PYVER" --implementation cp)
for p in 2_5 2_17 2_24 2_26 2_27 2_28 2_31 2_34 2_35; do
  plat+=(--platform "manylinux_${p}_x86_64")
done
plat+=(--platform manylinux2014_x86_64 --platform manylinux1_x86_64)
reqs=("${ANCHORS[@]}" "${DEPS[@]}" "${CUTLASS[@]}" "${SGL_KERNEL[@]}" "${QLA_PKGS[@]}")

mkdir -p "$WHEELS"
python3 -m pip download -q --no-deps "${plat[@]}" -d "$WHEELS" "${reqs[@]}"
rm -rf "$SITE"
python3 -m pip install -q --no-deps --no-compile --no-index --find-links "$WHEELS" \
  "${plat[@]}" --target "$SITE" "${reqs[@]}"
rm -rf "$SITE/bin"  # console scripts (and z3's 22 MB executable)
# TVM's C++ sources and CUTLASS's tools: TileLang compiles against headers.
rm -rf "$SITE/tilelang/3rdparty/tvm/src" "$SITE/tilelang/3rdparty/cutlass/tools"

prune=(--prune sglang --prune flashinfer --prune sgl_kernel)
for e in "${ENTRIES[@]}"; do prune+=(--entry "$e"); done
# FlashInfer's GDN kernel modules and its CuTe-DSL loader import lazily in
# functions; SGLang's JIT utilities check at import that include/ and csrc/
# exist beside them.
python3 "$here/anchor-site-prune.py" "$SITE" "${prune[@]}" \
  --deep 'flashinfer.gdn_kernels.*' --deep 'flashinfer.jit.cute_dsl_core' \
  --keep sglang/kernels/jit/include --keep sglang/kernels/jit/csrc \
  --keep sgl_kernel/sm90 \
  --drop 'sgl_kernel/flash_ops*.so' --drop 'sgl_kernel/flashmla_ops*.so' \
  --drop 'sgl_kernel/infllm_ops*.so'
# (sgl_kernel loads its ops from sm90/ by a computed path; its FlashAttention,
# FlashMLA and InfLLM extensions, 1.2 GB, load lazily, in attention backends
# that the tests do not build: dropped, so a call that needs one fails with
# ModuleNotFoundError.)

mkdir -p "$OUTDIR"
ir=$(cd "$SITE" && find . -path '*/_mlir_libs/_cutlass_ir.*.so' | sed 's|^\./||')
# The site's top-level entries (packages, modules, .dist-info) whose name,
# without version and suffix, case and '-' vs '_' aside, is one of "$@".
site_entries() {
  local f base n
  for f in $(cd "$SITE" && ls); do
    base=${f%%-[0-9]*}; base=${base%.py}; base=${base//-/_}
    for n in "$@"; do
      [ "${base,,}" = "${n,,}" ] && echo "$f" && break
    done
  done
}
mapfile -t sg < <(site_entries "${SGLANG_ONLY[@]}")
mapfile -t sk < <(site_entries "${SGL_KERNEL_ONLY[@]}")
mapfile -t ql < <(site_entries "${QLA_ONLY[@]}")
(cd "$SITE" && tar -cf - "${sg[@]}") | xz > "$OUTDIR/anchors-sglang.txz"
(cd "$SITE" && tar -cf - "${sk[@]}") | xz > "$OUTDIR/anchors-sglkernel.txz"
if [ ${#ql[@]} -gt 0 ]; then
  (cd "$SITE" && tar -cf - "${ql[@]}") | xz > "$OUTDIR/anchors-qla.txz"
else
  rm -f "$OUTDIR/anchors-qla.txz"
fi
excl=(--exclude='*/_mlir_libs/_cutlass_ir.*.so')
for f in "${sg[@]}" "${sk[@]}" "${ql[@]}"; do excl+=(--exclude="./$f"); done
(cd "$SITE" && tar "${excl[@]}" -cf - .) | xz > "$OUTDIR/anchors.txz"
# The compiler extension (the slow part to compress) is packed again only
# when it changed: its sha256 is kept beside the part.
if [ -n "$ir" ]; then
  sum=$(cd "$SITE" && sha256sum $ir)
  if [ "$(cat "$OUTDIR/anchors-cutedsl.sha256" 2>/dev/null)" != "$sum" ] ||
     [ ! -s "$OUTDIR/anchors-cutedsl.txz" ]; then
    (cd "$SITE" && tar -cf - $ir) | xz > "$OUTDIR/anchors-cutedsl.txz"
    echo "$sum" > "$OUTDIR/anchors-cutedsl.sha256"
  fi
else
  rm -f "$OUTDIR/anchors-cutedsl.txz" "$OUTDIR/anchors-cutedsl.sha256"
fi

# One call carries the working tree (tracked and untracked-not-ignored files)
# plus the carried paths, 64 MiB in all.
limit=$((64 << 20))
tree=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null | awk '{s+=$1} END {print s+0}')
lib=$(stat -c %s .carry/libGDNCAPI.so.xz 2>/dev/null || echo 0)
echo "site: $(du -sh "$SITE" | cut -f1) unpacked in $SITE"
for f in "$OUTDIR"/anchors*.txz; do
  echo "$f: $(stat -c %s "$f") bytes"
done
a=$(stat -c %s "$OUTDIR/anchors.txz")
g=$(stat -c %s "$OUTDIR/anchors-sglang.txz")
k=$(stat -c %s "$OUTDIR/anchors-sglkernel.txz")
c=$(stat -c %s "$OUTDIR/anchors-cutedsl.txz" 2>/dev/null || echo 0)
x=$(stat -c %s "$OUTDIR/anchors-qla.txz" 2>/dev/null || echo 0)
fits() { [ "$1" -le "$limit" ] && echo "fits" || echo "does NOT fit"; }
echo "working tree: $tree bytes; .carry/libGDNCAPI.so.xz: $lib bytes; limit: $limit bytes a call"
echo "one call with everything: $((tree + lib + a + g + k + c + x)) bytes: $(fits $((tree + lib + a + g + k + c + x)))"
echo "call 1 (anchors-cutedsl.txz): $((tree + c)) bytes: $(fits $((tree + c)))"
echo "call 2 (anchors.txz + anchors-sglang.txz): $((tree + a + g)) bytes: $(fits $((tree + a + g)))"
echo "call 3 (anchors-sglkernel.txz + anchors-qla.txz): $((tree + k + x)) bytes: $(fits $((tree + k + x)))"
echo "call 4 (libGDNCAPI.so.xz, the run): $((tree + lib)) bytes: $(fits $((tree + lib)))"
