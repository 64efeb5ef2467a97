#!/usr/bin/env bash
# Real-model kit, step 2: serve one GGUF model over the OpenAI API on 127.0.0.1.
#
#   bench/realmodel/serve.sh MODEL PORT [--python] [-- EXTRA SERVER ARGS]
#   bench/realmodel/serve.sh --stop PORT
#
# MODEL is a name known to fetch_model.py (qwen-coder-0.5b, ...) or a path to a .gguf file; it is
# served under that name (the `id` of /v1/models), so Vance uses VANCE_MODEL=openai/MODEL and
# VANCE_API_BASE=http://127.0.0.1:PORT/v1. Default server: llama.cpp's llama-server with --jinja
# (tool calls parsed by the model's own chat template), one slot (the whole context for the one
# request at a time that Vance sends, and one prompt cache to reuse), --metrics for the token
# counters eval.py reads. --python serves with llama-cpp-python's `python -m llama_cpp.server`
# instead (setup.sh python-server first). The script waits until /v1/models answers, then prints
# the server's PID on stdout and returns; the server keeps running until `--stop PORT` (or kill
# PID). Its log: $VANCE_REALMODEL_CACHE/logs/serve-PORT.log.
#
# Environment: VANCE_SERVE_CTX (context tokens, default 8192), VANCE_SERVE_THREADS (default: one
# core fewer than the machine has, at least 1: ggml's threads wait for each other at every step,
# so a thread that loses its core to another process stalls the rest; on this 2-core machine,
# shared, 1 thread generated 12-17 tokens/s and 2 threads 2-4), VANCE_SERVE_WAIT (seconds to wait for /v1/models, default 180),
# VANCE_SERVE_CACHE_RAM (MiB of prompt cache kept in RAM by llama-server, default 1024; the
# machine is shared), VANCE_REALMODEL_CACHE (default ~/.cache/vance-realmodel).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${VANCE_REALMODEL_CACHE:-$HOME/.cache/vance-realmodel}"
py="${PYTHON:-python3}"
say() { printf 'serve: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
usage() { sed -n '4,5p' "$0" | sed 's/^# *//' >&2; exit 2; }

pidfile() { echo "$cache/run/serve-$1.pid"; }

# Is PID one of ours: a llama-server or llama_cpp.server process (never kill a stranger's pid
# that a stale pid file happens to name)?
ours() {
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qE 'llama-server|llama_cpp\.server'
}

stop() {
  local port="$1" file pid
  file="$(pidfile "$port")"
  [ -f "$file" ] || die "no server of this kit on port $port ($file is missing)"
  pid="$(cat "$file")"
  if ours "$pid"; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do ours "$pid" || break; sleep 0.2; done
    if ours "$pid"; then say "pid $pid did not stop within 10 s; killing it"; kill -KILL "$pid" || true; fi
    say "stopped pid $pid (port $port)"
  else
    say "pid $pid (port $port) is not running any more"
  fi
  rm -f "$file"
}

[ $# -ge 1 ] || usage
if [ "$1" = "--stop" ]; then
  [ $# -eq 2 ] || usage
  stop "$2"
  exit 0
fi
[ $# -ge 2 ] || usage
model="$1" port="$2"
shift 2
kind=llama-server label=llama-server
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --python) kind=python label="llama-cpp-python (llama_cpp.server)" ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option $1 (server arguments go after --)" ;;
  esac
  shift
done
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65535 ] || die "PORT must be a number from 1024 to 65535, not '$port'"

if [ -f "$model" ]; then
  gguf="$(cd "$(dirname "$model")" && pwd)/$(basename "$model")"
  name="$(basename "$model" .gguf)"
else
  gguf="$("$py" "$here/fetch_model.py" --cache "$cache" --path "$model")" || exit 1
  name="$model"
fi

base="http://127.0.0.1:$port"
if curl -s -o /dev/null --max-time 2 "$base/"; then
  die "something already answers on $base; stop it first (bench/realmodel/serve.sh --stop $port) or pick another port"
fi

ctx="${VANCE_SERVE_CTX:-8192}"
cores="$(nproc)"
threads="${VANCE_SERVE_THREADS:-$((cores > 1 ? cores - 1 : 1))}"
mkdir -p "$cache/logs" "$cache/run"
log="$cache/logs/serve-$port.log"
if [ "$kind" = llama-server ]; then
  bin="$cache/bin/llama-server"
  [ -x "$bin" ] || die "$bin is not built yet; run: bench/realmodel/setup.sh server"
  cmd=("$bin" -m "$gguf" --alias "$name" --host 127.0.0.1 --port "$port" --jinja
       -c "$ctx" -np 1 -t "$threads" -tb "$threads" --metrics
       --cache-ram "${VANCE_SERVE_CACHE_RAM:-1024}" --no-webui)
  envs=()
else
  src="$cache/src/llama_cpp_python-0.3.36" lib="$cache/pyserver/lib" venv="$cache/pyserver/venv"
  [ -f "$lib/libllama.so" ] && [ -x "$venv/bin/python" ] \
    || die "llama-cpp-python's server is not set up yet; run: bench/realmodel/setup.sh python-server"
  cmd=("$venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias "$name"
       --host 127.0.0.1 --port "$port" --n_ctx "$ctx" --n_threads "$threads" --n_threads_batch "$threads")
  envs=(PYTHONPATH="$src" LLAMA_CPP_LIB_PATH="$lib" LD_LIBRARY_PATH="$lib")
fi
cmd+=("${extra[@]}")

printf '== %s serve.sh: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${cmd[*]}" >"$log"
env "${envs[@]}" nohup "${cmd[@]}" >>"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$(pidfile "$port")"

wait_s="${VANCE_SERVE_WAIT:-180}"
start=$SECONDS
until curl -sf -o /dev/null --max-time 5 "$base/v1/models"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$(pidfile "$port")"
    tail -15 "$log" >&2
    die "the server exited before it answered (log: $log)"
  fi
  if [ $((SECONDS - start)) -ge "$wait_s" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    rm -f "$(pidfile "$port")"
    die "no answer from $base/v1/models within ${wait_s}s; stopped pid $pid (log: $log)"
  fi
  sleep 0.5
done
say "$label serves $name on $base/v1 (pid $pid, ${ctx} tokens of context, $threads threads, up after $((SECONDS - start))s; log: $log)"
say "use: VANCE_MODEL=openai/$name VANCE_API_BASE=$base/v1; stop: bench/realmodel/serve.sh --stop $port"
echo "$pid"
