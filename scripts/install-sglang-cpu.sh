#!/usr/bin/env bash
# SGLang 0.5.23 importable on a CPU-only machine, next to the torch already
# installed (sglang pins another torch and transformers, so it and the
# packages that would pull them come without their dependencies): what
# python/tests/test_sglang_backend.py needs to drive SGLang's own
# GDNAttnBackend and KDA backend through gdn (docs/sglang.md). About 130 MB.
# The pins are sglang 0.5.23's own requirements.
#   scripts/install-sglang-cpu.sh
set -euo pipefail
export PIP_ROOT_USER_ACTION=ignore
pip=(python3 -m pip install -q --disable-pip-version-check)
"${pip[@]}" psutil pybase64 pillow starlette msgspec 'pyzmq>=25.1.2' aiohttp
"${pip[@]}" --no-deps sglang==0.5.23 dill sentencepiece==0.2.1 einops \
  compressed-tensors==0.18.0 loguru gguf openai==2.8.0 distro httpx2 \
  partial-json-parser 'uvicorn>=0.51' fastapi opentelemetry-api \
  apache-tvm-ffi==0.1.11 torchvision
# What the backend tests import first: an error here names the missing piece.
python3 -c "from sglang.srt.layers.attention.linear import gdn_backend, kda_backend; print('sglang', __import__('sglang').__version__, 'imports')"
