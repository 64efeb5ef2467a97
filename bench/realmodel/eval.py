"""Measure Vance on a real model: the fixed task suite of cases.py through the real `vance` CLI.

Each case runs as a person would run it: its own VANCE_HOME and workspace, VANCE_MODEL=openai/<name>
and VANCE_API_BASE=http://127.0.0.1:PORT/v1, the `vance` command of this environment, Vance's
shipped settings (or --vance-config). Success is checked mechanically (cases.py says how). Per
case and in total it reports success, model calls and tokens (summed over the case's process
files, or `structure --json`'s usage), the server's own counters for the case (llama-server's
/metrics: prompt tokens processed and reused from its cache, tokens generated, seconds), and
wall time. Results go to OUT/results.json (written after every case) and OUT/results.md.

    python bench/realmodel/eval.py --model qwen-coder-0.5b [--port 8090] [--only chat|structure|benjy]
                                   [--cases ID,ID/benjy,...] [--timeout S] [--out DIR] [--vance-config FILE]
    python bench/realmodel/eval.py --list

When nothing answers on --port, the server is started with serve.sh for the run and stopped
after it (also on Ctrl+C); a server already there is used and left running.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import cases as suite  # noqa: E402  (beside this file, not a package)

SECTIONS = ("chat", "structure", "benjy")
DEFAULT_TIMEOUT = {"chat": 240.0, "structure": 150.0, "benjy": 300.0}
# Outside $HOME: a ~/.vance folder (made by any vance run without VANCE_HOME) is a project scope
# for every folder under $HOME, and not under /tmp, which exec_run's sandbox replaces.
DEFAULT_OUT = Path("/var/tmp/vance-realmodel-eval")


# --- the server ---------------------------------------------------------------------------------


def http_get(url: str, timeout: float = 5.0) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read()
    except (urllib.error.URLError, OSError, TimeoutError):
        return None


def served_models(base: str) -> list[str] | None:
    body = http_get(f"{base}/v1/models")
    if body is None:
        return None
    try:
        return [m["id"] for m in json.loads(body).get("data", [])]
    except (ValueError, KeyError, TypeError):
        return []


def metrics(base: str) -> dict[str, float]:
    """llama-server's Prometheus counters (empty when the server has no /metrics)."""
    body = http_get(f"{base}/metrics")
    out: dict[str, float] = {}
    for line in (body or b"").decode("utf-8", "replace").splitlines():
        m = re.match(r"^llamacpp:(\w+)\s+([-+0-9.eE]+)$", line.strip())
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def server_props(base: str) -> dict:
    body = http_get(f"{base}/props")
    try:
        props = json.loads(body) if body else {}
    except ValueError:
        return {}
    gen = props.get("default_generation_settings", {})
    params = gen.get("params", {})
    return {
        "model_alias": props.get("model_alias"),
        "model_path": props.get("model_path"),
        "n_ctx": gen.get("n_ctx"),
        "total_slots": props.get("total_slots"),
        "default_temperature": params.get("temperature"),
        "default_seed": params.get("seed"),
        "build_info": props.get("build_info"),
    }


def wait_idle(base: str, limit: float = 120.0) -> None:
    """Wait until the server works on no request, so one case's tokens do not count for the next."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if metrics(base).get("requests_processing", 0) == 0:
            return
        time.sleep(1)


def server_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float] | None:
    if not before or not after:
        return None

    def d(key: str) -> float:
        return round(after.get(key, 0.0) - before.get(key, 0.0), 3)

    return {
        "prompt_processed": int(d("prompt_tokens_total")),
        "prompt_cached": int(d("prompt_tokens_cached_total")),
        "predicted": int(d("tokens_predicted_total")),
        "prompt_s": d("prompt_seconds_total"),
        "predicted_s": d("tokens_predicted_seconds_total"),
    }


# --- running vance ------------------------------------------------------------------------------


def vance_command(explicit: str | None) -> list[str]:
    if explicit:
        return shlex.split(explicit)
    beside = Path(sys.executable).parent / "vance"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("vance")
    if not found:
        raise SystemExit("eval: no `vance` command found; install Vance in this environment (pip install -e .)")
    return [found]


class Run:
    """One `vance` command of a case: exit code, output, wall time, whether the timeout stopped it."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float, log: Path) -> None:
        start = time.monotonic()
        self.timed_out = False
        with open(log.with_suffix(".stdout"), "wb") as out, open(log.with_suffix(".stderr"), "wb") as err:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.timed_out = True
                stop_group(proc)
        self.wall = time.monotonic() - start
        self.rc = proc.returncode
        self.stdout = log.with_suffix(".stdout").read_text("utf-8", "replace")
        self.stderr = log.with_suffix(".stderr").read_text("utf-8", "replace")

    def last_error(self) -> str:
        lines = [ln.strip() for ln in self.stderr.splitlines() if ln.strip()]
        return lines[-1][:200] if lines else ""


def stop_group(proc: subprocess.Popen) -> None:
    """Ctrl+C (Vance stops at its next safe point and saves the process SUSPENDED), a second Ctrl+C
    (at once: a model call on this CPU can outlast the first grace), then SIGTERM, then SIGKILL."""
    for sig, grace in ((signal.SIGINT, 10), (signal.SIGINT, 10), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def case_env(home: Path, model: str, api_base: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VANCE_")}
    env.update(
        VANCE_HOME=str(home),
        VANCE_MODEL=f"openai/{model}",
        VANCE_API_BASE=api_base,
        NO_COLOR="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def processes(home: Path) -> list[dict]:
    out = []
    for f in sorted((home / "processes").glob("*.json")):
        try:
            out.append(json.loads(f.read_text("utf-8")))
        except (OSError, ValueError):
            continue
    return out


def usage_of(procs: list[dict]) -> dict[str, int]:
    total = Counter()
    for p in procs:
        u = p.get("usage") or {}
        for k in ("calls", "prompt_tokens", "completion_tokens"):
            total[k] += int(u.get(k) or 0)
    return {k: total[k] for k in ("calls", "prompt_tokens", "completion_tokens")}


def show_json(vance: list[str], pid: str, cwd: Path, env: dict[str, str]) -> dict | None:
    """The process as `vance show ID --json` prints it (what a person would read)."""
    r = subprocess.run([*vance, "show", pid, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    try:
        return json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        return None


def events(stdout: str) -> list[dict]:
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def tools_called(procs: list[dict]) -> list[str]:
    names = []
    for p in procs:
        for m in p.get("history", []):
            for call in m.get("tool_calls") or []:
                names.append(call.get("name"))
    return names


def corrections_of(procs: list[dict]) -> int:
    return sum(1 for p in procs for m in p.get("history", []) if (m.get("meta") or {}).get("kind") == "correction")


# --- comparing extracted values -------------------------------------------------------------


def norm(value):
    """Strings case-folded with whitespace collapsed; numbers as numbers (12 == 12.0); else as is."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, bool):
        return ("bool", value)  # True == 1.0 in Python; in JSON a boolean is no number
    if value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [norm(v) for v in value]
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items()}
    return value


def differences(got, want, where: str = "") -> list[str]:
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in sorted(set(want) | set(got)):
            if k not in got:
                out.append(f"{where}/{k} missing")
            elif k not in want:
                out.append(f"{where}/{k} not expected ({json.dumps(got[k])[:40]})")
            else:
                out += differences(got[k], want[k], f"{where}/{k}")
        return out
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True)) for d in differences(g, w, f"{where}/{i}")]
    if norm(got) != norm(want):
        return [f"{where or '/'} {json.dumps(got)[:60]} != {json.dumps(want)[:60]}"]
    return []


def leaves(value) -> list:
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [value]


# --- the sections -----------------------------------------------------------------------------


class Harness:
    def __init__(self, args: argparse.Namespace, base: str, out: Path) -> None:
        self.args = args
        self.base = base
        self.api_base = f"{base}/v1"
        self.out = out
        self.vance = vance_command(args.vance)
        self.results: list[dict] = []
        self.meta: dict = {}

    def timeout(self, section: str, case: dict) -> float:
        t = self.args.timeout if self.args.timeout else DEFAULT_TIMEOUT[section]
        return t * float(case.get("timeout_factor", 1.0))

    def prepare(self, name: str) -> tuple[Path, Path, Path, dict[str, str]]:
        root = self.out / "cases" / name.replace("/", "--")
        if root.exists():
            shutil.rmtree(root)
        home, ws = root / "home", root / "ws"
        home.mkdir(parents=True)
        ws.mkdir()
        if self.args.vance_config:
            shutil.copy(self.args.vance_config, home / "config.toml")
        return root, home, ws, case_env(home, self.args.model, self.api_base)

    def record(self, result: dict, before: dict[str, float], load0: float) -> None:
        wait_idle(self.base)
        result["server"] = server_delta(before, metrics(self.base))
        result["load"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
        self.results.append(result)
        mark = "ok  " if result["ok"] else "FAIL"
        u = result.get("usage") or {}
        print(
            f"  {mark} {result['section']:9} {result['case']:28} {result['wall_s']:7.1f}s "
            f"calls={u.get('calls', 0)} tokens={u.get('prompt_tokens', 0)}+{u.get('completion_tokens', 0)}"
            f"{'' if result['ok'] else '  ' + result['why']}",
            file=sys.stderr,
            flush=True,
        )
        self.save()

    def save(self) -> None:
        data = {"meta": self.meta, "results": self.results, "totals": totals(self.results)}
        tmp = self.out / "results.json.tmp"
        tmp.write_text(json.dumps(data, indent=1), "utf-8")
        os.replace(tmp, self.out / "results.json")

    # chat: `vance chat -p PROMPT --json` with Arthur
    def chat(self, case: dict) -> None:
        root, home, ws, env = self.prepare(f"chat/{case['id']}")
        write_files(ws, case.get("files", {}))
        before, load0 = metrics(self.base), os.getloadavg()[0]
        run = Run(
            [*self.vance, "chat", "-p", case["prompt"], "--json"], ws, env, self.timeout("chat", case), root / "chat"
        )
        evs = events(run.stdout)
        pid = next((e["process_id"] for e in evs if e.get("process_id")), None)
        procs = processes(home)
        shown = show_json(self.vance, pid, ws, env) if pid else None
        messages = [e["text"] for e in evs if e.get("type") == "message"]
        why = []
        status = (shown or {}).get("status")
        if run.timed_out:
            why.append(f"timeout after {run.wall:.0f}s")
        elif run.rc != 0:
            why.append(f"exit {run.rc}: {run.last_error()}")
        if shown is None:
            why.append("no process to show")
        if pid and not (home / "processes" / f"{pid}.json").is_file():
            why.append(f"process {pid} is not in the case's VANCE_HOME: usage unknown")
        else:
            if status != "BLOCKED":
                why.append(f"status {status} ({shown.get('status_reason')})")
            respond = last_delivery(shown)
            if respond != "respond":
                why.append(f"delivered {respond}, not a respond call")
        text = messages[-1] if messages else ""
        missing = [f for f in case.get("facts", []) if not re.search(f, text, re.IGNORECASE)]
        if missing:
            why.append("missing " + ", ".join(missing))
        called = tools_called(procs)
        for tool in case.get("tools", []):
            if tool not in called:
                why.append(f"{tool} not called")
        if case.get("min_tool_calls") and sum(1 for t in called if t != "respond") < case["min_tool_calls"]:
            why.append(f"fewer than {case['min_tool_calls']} tool calls")
        if case.get("file"):
            f = ws / case["file"]["path"]
            if not f.is_file():
                why.append(f"{case['file']['path']} not written")
            elif not re.search(case["file"]["matches"], f.read_text("utf-8", "replace")):
                why.append(f"{case['file']['path']} has other content")
        self.record(
            {
                "section": "chat",
                "case": case["id"],
                "ok": not why,
                "why": "; ".join(why),
                "status": status,
                "exit": run.rc,
                "message": text[:300],
                "corrections": corrections_of(procs),
                "tools": called,
                "processes": len(procs),
                "usage": usage_of(procs),
                "wall_s": round(run.wall, 1),
            },
            before,
            load0,
        )

    # structure: `vance structure TEXT --schema S --json`
    def structure(self, case: dict) -> None:
        root, home, ws, env = self.prepare(f"structure/{case['id']}")
        argv = [*self.vance, "structure", case["text"], "--json"]
        if "schema" in case:
            path = root / "schema.json"
            path.write_text(json.dumps(case["schema"], indent=1), "utf-8")
            argv += ["--schema", str(path)]
        elif "named" in case:
            name = case["named"]
            if name == "expense":  # the example named schema with its manual, into the user scope
                ex = REPO / "examples" / "schemas"
                subprocess.run(
                    [*self.vance, "schemas", "add", name, str(ex / "expense.json"), "--manual",
                     str(ex / "expense.manual.md"), "--scope", "user"],
                    cwd=ws, env=env, check=True, capture_output=True, timeout=60,
                )  # fmt: skip
            argv += ["--schema", name, "--mode", "named"]
        else:
            argv += ["--schema", case["describe"], "--mode", "text"]
        before, load0 = metrics(self.base), os.getloadavg()[0]
        run = Run(argv, ws, env, self.timeout("structure", case), root / "structure")
        try:
            result = json.loads(run.stdout)
        except ValueError:
            result = {}
        why = []
        want_status = case.get("status", "ok")
        status = result.get("status")
        if run.timed_out:
            why.append(f"timeout after {run.wall:.0f}s")
        elif not result:
            why.append(f"exit {run.rc}, no JSON: {run.last_error()}")
        elif status != want_status:
            detail = result.get("errors") or result.get("need") or result.get("data")
            why.append(f"status {status}, expected {want_status}: {json.dumps(detail)[:120]}")
        elif status == "ok" and "expect" in case:
            why += differences(result.get("data"), case["expect"])
        elif status == "ok" and "expect_values" in case:
            got = Counter(json.dumps(norm(v)) for v in leaves(result.get("data")))
            want = Counter(json.dumps(norm(v)) for v in case["expect_values"])
            if got != want:
                why.append(f"values {json.dumps(result.get('data'))[:100]} != {case['expect_values']}")
        u = result.get("usage") or {}
        self.record(
            {
                "section": "structure",
                "case": case["id"],
                "ok": not why,
                "why": "; ".join(why)[:400],
                "status": status,
                "exit": run.rc,
                "data": result.get("data"),
                "iterations": result.get("iterations"),
                "outputMode": result.get("outputMode"),
                "formatFallbacks": result.get("formatFallbacks"),
                "notes": result.get("notes"),
                "usage": {
                    "calls": int(u.get("calls") or 0),
                    "prompt_tokens": int(u.get("promptTokens") or 0),
                    "completion_tokens": int(u.get("completionTokens") or 0),
                },
                "wall_s": round(run.wall, 1),
            },
            before,
            load0,
        )

    # benjy: the same task by `vance benjy run` and by the `coding` recipe alone
    def coding(self, case: dict, variant: str) -> None:
        root, home, ws, env = self.prepare(f"benjy/{case['id']}/{variant}")
        write_files(ws, case.get("files", {}))
        check_name = f"check_{case['id'].replace('-', '_')}.py"
        (root / check_name).write_text(case["check"], "utf-8")  # pristine: the ground truth
        (ws / check_name).write_text(case["check"], "utf-8")  # a copy the model may read
        goal = (
            f"{case['goal']}\n\nThe work is checked by running `python3 {check_name}` in this folder "
            "(the file is there to read); it must exit 0."
        )
        check_cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(root / check_name))}"
        if variant == "benjy":
            argv = [*self.vance, "benjy", "run", goal, "--workspace", str(ws), "--check", check_cmd, "--plain"]
        else:
            argv = [*self.vance, "chat", "--recipe", "coding", "-p", goal, "--json"]
        before, load0 = metrics(self.base), os.getloadavg()[0]
        run = Run(argv, ws, env, self.timeout("benjy", case), root / variant)
        check = subprocess.run(
            [sys.executable, str(root / check_name)], cwd=ws, capture_output=True, text=True, timeout=60
        )
        procs = processes(home)
        top = next((p for p in procs if not p.get("parent")), {})
        why = []
        if not procs:
            why.append(f"no process file in the case's VANCE_HOME ({home}): usage unknown")
        if check.returncode != 0:
            said = [ln.strip() for ln in (check.stdout + check.stderr).splitlines() if ln.strip()]
            why.append("check failed: " + (said[-1][:160] if said else f"exit {check.returncode}"))
        if run.timed_out:
            why.append(f"timeout after {run.wall:.0f}s")
        elif variant == "benjy" and run.rc == 0 and check.returncode != 0:
            why.append("run DONE (exit 0) with the check failing")
        self.record(
            {
                "section": "benjy",
                "case": f"{case['id']}/{variant}",
                "task": case["id"],
                "variant": variant,
                "ok": check.returncode == 0,
                "why": "; ".join(why),
                "status": top.get("status"),
                "status_reason": top.get("status_reason"),
                "exit": run.rc,
                "timed_out": run.timed_out,
                "workers": sum(1 for p in procs if p.get("parent")),
                "corrections": corrections_of(procs),
                "files": sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file()),
                "usage": usage_of(procs),
                "wall_s": round(run.wall, 1),
            },
            before,
            load0,
        )


def last_delivery(shown: dict) -> str:
    """How the turn's message reached the person: 'respond' (a real call) or 'plain text'."""
    for m in reversed(shown.get("history", [])):
        meta = m.get("meta") or {}
        if m.get("role") == "tool" and m.get("name") == "respond" and meta.get("delivered"):
            return "respond"
        if m.get("role") == "assistant" and meta.get("delivered"):
            return "plain text"
    return "nothing"


# --- report -----------------------------------------------------------------------------------


def totals(results: list[dict]) -> dict:
    out: dict = {}
    groups: dict[str, list[dict]] = {}
    for r in results:
        key = r["section"] if r["section"] != "benjy" else f"benjy/{r['variant']}"
        groups.setdefault(key, []).append(r)
    for key, rs in groups.items():
        solved = sum(1 for r in rs if r["ok"])
        g = {
            "cases": len(rs),
            "ok": solved,
            "calls": sum(r["usage"]["calls"] for r in rs),
            "prompt_tokens": sum(r["usage"]["prompt_tokens"] for r in rs),
            "completion_tokens": sum(r["usage"]["completion_tokens"] for r in rs),
            "wall_s": round(sum(r["wall_s"] for r in rs), 1),
        }
        servers = [r["server"] for r in rs if r.get("server")]
        if servers:
            g["server"] = {k: round(sum(s[k] for s in servers), 1) for k in servers[0]}
        if solved:
            g["per_solved"] = {
                "tokens": round((g["prompt_tokens"] + g["completion_tokens"]) / solved),
                "calls": round(g["calls"] / solved, 1),
                "wall_s": round(g["wall_s"] / solved, 1),
            }
        out[key] = g
    return out


def markdown(meta: dict, results: list[dict]) -> str:
    lines = [
        f"# Vance on {meta['model']} ({meta['date']})",
        "",
        (
            f"Server: llama-server {meta['server']['build_info']}, {meta['server'].get('n_ctx')} tokens of context, "
            f"default temperature {meta['server'].get('default_temperature')}; "
            if meta["server"].get("build_info")
            else "Server: no /props (not llama-server: no server-side figures); "
        )
        + f"vance {meta['vance_rev']}; "
        f"load average {meta['load_start']} at the start; timeouts {meta['timeouts']}.",
        "",
        "| section | case | ok | calls | prompt tok | completion tok | server: processed / cached / generated | s | why |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        s = r.get("server")
        srv = f"{s['prompt_processed']} / {s['prompt_cached']} / {s['predicted']}" if s else "-"
        u = r["usage"]
        why = r["why"].replace("|", "\\|")
        lines.append(
            f"| {r['section']} | {r['case']} | {'✓' if r['ok'] else '✗'} | {u['calls']} | {u['prompt_tokens']} | "
            f"{u['completion_tokens']} | {srv} | {r['wall_s']} | {why} |"
        )
    lines += ["", "| group | solved | calls | prompt tok | completion tok | cached prompt tok | s | per solved: tokens, calls, s |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for key, g in totals(results).items():
        per = g.get("per_solved")
        per_text = f"{per['tokens']}, {per['calls']}, {per['wall_s']}" if per else "-"
        cached = g.get("server", {}).get("prompt_cached", "-")
        lines.append(
            f"| {key} | {g['ok']}/{g['cases']} | {g['calls']} | {g['prompt_tokens']} | {g['completion_tokens']} | "
            f"{cached} | {g['wall_s']} | {per_text} |"
        )
    return "\n".join(lines) + "\n"


# --- main -------------------------------------------------------------------------------------


def selected(args: argparse.Namespace) -> list[tuple[str, dict, str | None]]:
    wanted = {c.strip() for c in args.cases.split(",")} if args.cases else None
    plan: list[tuple[str, dict, str | None]] = []
    for section in SECTIONS:
        if args.only and section != args.only:
            continue
        if section == "chat":
            plan += [("chat", c, None) for c in suite.CHAT]
        elif section == "structure":
            plan += [("structure", c, None) for c in suite.STRUCTURE]
        else:
            plan += [("benjy", c, v) for c in suite.CODING for v in ("benjy", "coding")]
    if wanted is not None:
        plan = [p for p in plan if p[1]["id"] in wanted or f"{p[1]['id']}/{p[2]}" in wanted]
        known = {p[1]["id"] for p in plan} | {f"{p[1]['id']}/{p[2]}" for p in plan}
        unknown = wanted - known
        if unknown:
            raise SystemExit(f"eval: unknown case(s) {', '.join(sorted(unknown))}; see --list")
    return plan


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="the served model id (a fetch_model.py name: qwen-coder-0.5b, ...)")
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--only", choices=SECTIONS)
    ap.add_argument("--cases", help="comma-separated case ids (a coding task runs both variants; ID/benjy one)")
    ap.add_argument("--timeout", type=float, help=f"seconds per case (default {DEFAULT_TIMEOUT})")
    ap.add_argument("--out", help=f"results folder (default {DEFAULT_OUT}/<date>-<model>)")
    ap.add_argument("--vance-config", help="a config.toml copied into every case's VANCE_HOME (default: none)")
    ap.add_argument("--vance", help="the vance command (default: the one beside this Python)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()
    if args.list:
        for section, case, variant in selected(args):
            print(f"{section:10} {case['id']}{'/' + variant if variant else ''}")
        return 0
    plan = selected(args)
    base = f"http://127.0.0.1:{args.port}"
    started_pid = None
    models = served_models(base)
    if models is None:
        if not args.model:
            raise SystemExit(f"eval: nothing answers on {base}; give --model to start a server")
        r = subprocess.run([str(HERE / "serve.sh"), args.model, str(args.port)], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            return 1
        started_pid = int(r.stdout.strip().splitlines()[-1])
        models = served_models(base) or []
    if args.model and args.model not in models:
        raise SystemExit(f"eval: {base} serves {models}, not {args.model!r}")
    args.model = args.model or models[0]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = (Path(args.out) if args.out else DEFAULT_OUT / f"{stamp}-{args.model}").resolve()
    above = next((d / ".vance" for d in (out, *out.parents) if (d / ".vance").is_dir()), None)
    if above is not None:
        # Vance would take that folder as the project scope of every case (its processes, its
        # settings), whatever VANCE_HOME says: ~/.vance does this for any folder under $HOME.
        if started_pid is not None:
            subprocess.run([str(HERE / "serve.sh"), "--stop", str(args.port)], check=False)
        raise SystemExit(f"eval: {above} is above {out}: the cases would run in its project scope; pick another --out")
    out.mkdir(parents=True, exist_ok=True)
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    harness = Harness(args, base, out)
    harness.meta = {
        "model": args.model,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "server": server_props(base),
        "vance_rev": rev.stdout.strip() or "?",
        "vance_config": args.vance_config,
        "nproc": os.cpu_count(),
        "load_start": round(os.getloadavg()[0], 2),
        "timeouts": {s: (args.timeout or DEFAULT_TIMEOUT[s]) for s in SECTIONS},
    }
    print(f"eval: {len(plan)} case(s) on {args.model} at {base}; results in {out}", file=sys.stderr)
    try:
        for section, case, variant in plan:
            if section == "chat":
                harness.chat(case)
            elif section == "structure":
                harness.structure(case)
            else:
                harness.coding(case, variant)
    except KeyboardInterrupt:
        print("eval: interrupted; the results so far are kept", file=sys.stderr)
    finally:
        if started_pid is not None:
            subprocess.run([str(HERE / "serve.sh"), "--stop", str(args.port)], check=False)
        harness.meta["load_end"] = round(os.getloadavg()[0], 2)
        harness.save()
        md = markdown(harness.meta, harness.results)
        (out / "results.md").write_text(md, "utf-8")
        print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
