#!/usr/bin/env bash
# Build (once) the LiteLLM proxy the real-server tier puts in front of llama-server: litellm[proxy], pinned,
# in a venv of its own cached OUTSIDE the clone (never a dependency of the project), reused when present.
#   ${PAGEINDEX_REAL_LITELLM_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pageindex-bench/litellm-${LITELLM_VERSION}}
# On failure this exits non-zero with pip's error: the tier fails, it never passes by skipping.
set -euo pipefail
LITELLM_VERSION="1.108.7"
ENV_DIR="${PAGEINDEX_REAL_LITELLM_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pageindex-bench/litellm-${LITELLM_VERSION}}"
PY="${PY:-python3}"
if [ -f "$ENV_DIR/.complete" ] && [ -x "$ENV_DIR/bin/litellm" ]; then
  echo "$ENV_DIR"
  exit 0
fi
echo "installing litellm[proxy]==${LITELLM_VERSION} into $ENV_DIR (a few minutes, once)" >&2
rm -rf "$ENV_DIR"
mkdir -p "$(dirname "$ENV_DIR")"
"$PY" -m venv "$ENV_DIR"
if ! "$ENV_DIR/bin/pip" install -q "litellm[proxy]==${LITELLM_VERSION}" >"$ENV_DIR.install.log" 2>&1; then
  echo "error: installing litellm[proxy]==${LITELLM_VERSION} failed; pip said:" >&2
  tail -n 30 "$ENV_DIR.install.log" >&2
  exit 1
fi
touch "$ENV_DIR/.complete"
echo "$ENV_DIR"
