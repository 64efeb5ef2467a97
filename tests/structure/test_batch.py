"""`vance structure --batch`: records in, one result line each, through the real CLI and the local server.

The server answers every request from the record's own text (``answer``), so a test can tell from
the requests which records were sent, and how often.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import json_lines, run_cli

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["title", "n"],
    "additionalProperties": False,
}


def user_text(body: dict) -> str:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def answer(body: dict) -> dict | None:
    """The record's text back as data; "NEED" in it asks for more input. A body without messages
    (a client killed while sending it: the crash tests) gets the default reply."""
    if not body.get("messages"):
        return None
    text = user_text(body)
    if "NEED" in text:
        return {"text": json.dumps({"result": None, "_need": "which ticket?"})}
    return {"text": json.dumps({"result": {"title": text, "n": len(text)}, "_need": None}),
            "usage": {"prompt_tokens": 7, "completion_tokens": 3}}


@pytest.fixture
def served(fake_openai, monkeypatch, tmp_path):
    monkeypatch.setenv("VANCE_MODEL", "openai/test-model")
    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    monkeypatch.setenv("VANCE_API_KEY", "test")
    fake_openai.responder = answer
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    return fake_openai


def sent(server) -> list[str]:
    """The record texts the server was asked about, in order."""
    return [user_text(body) for body in server.requests if body.get("messages")]


def batch(tmp_path: Path, source: Path, *args: str):
    return run_cli("structure", "--batch", str(source), "--schema", str(tmp_path / "schema.json"), *args)


def by_id(path: Path) -> dict[str, dict]:
    lines = json_lines(path.read_text())
    ids = [line["id"] for line in lines]
    assert len(ids) == len(set(ids)), f"an id twice in {path}: {ids}"
    return {line["id"]: line for line in lines}


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


# -- inputs and result lines ---------------------------------------------------------------------


def test_jsonl_gives_one_line_per_record_and_bad_records_are_error_lines(served, tmp_path):
    source = tmp_path / "in.jsonl"
    long_line = json.dumps({"id": "long", "prompt": "x" * (1 << 20)})
    source.write_bytes(
        "".join(json.dumps(r) + "\n" for r in [
            {"id": "a", "prompt": "fix the login"},
            {"id": 70, "prompt": "export crashes"},
            {"prompt": "no id here"},  # line 3: its id is "3"
            {"id": "e", "prompt": "   "},
            {"id": "m", "text": "wrong field"},
            {"id": "num", "prompt": 12},
            [1, 2],  # line 7
        ]).encode()
        + b"{not json\n"  # line 8
        + b"\n"  # a blank line: no record
        + b'{"id": "latin", "prompt": "caf\xe9"}\n'  # line 10: not UTF-8
        + long_line.encode() + b"\n"  # line 11
        + json.dumps({"id": "need", "prompt": "NEED more"}).encode() + b"\n"
    )
    result = batch(tmp_path, source, "--jobs", "3")
    assert result.returncode == 6, result.stderr
    out = by_id(tmp_path / "in.jsonl.out.jsonl")  # the default OUT: IN's name + .out.jsonl
    assert set(out) == {"a", "70", "3", "e", "m", "num", "7", "8", "10", "11", "need"}  # line numbers without an id
    assert out["a"] == {"id": "a", "status": "ok", "data": {"title": "fix the login", "n": 13}, "iterations": 1,
                        "schemaOrigin": "inline", "usage": {"calls": 1, "promptTokens": 7, "completionTokens": 3,
                                                            "totalTokens": 10, "cost": 0.0}}
    assert out["3"]["data"]["title"] == "no id here"
    assert out["need"]["status"] == "need-more-input" and out["need"]["need"] == "which ticket?"
    reasons = {key: out[key]["errors"][0] for key in ("e", "m", "num", "7", "8", "10", "11")}
    assert reasons["e"] == "the prompt is empty"
    assert "no 'prompt' field" in reasons["m"] and "--field" in reasons["m"]
    assert "not text" in reasons["num"]
    assert reasons["7"] == "line 7 is not a JSON object"
    assert reasons["8"].startswith("line 8 is not valid JSON")
    assert reasons["10"] == "line 10 is not UTF-8 text"
    assert reasons["11"] == "line 11 is longer than 1,048,576 bytes"
    assert all(out[k]["status"] == "error" and out[k]["errorType"] == "BadRecord" for k in reasons)
    # only the good records reached the model, each once
    assert sorted(sent(served)) == sorted(["fix the login", "export crashes", "no id here", "NEED more"])
    assert "structured 11 record(s)" in result.stdout and "3 ok, 1 need-more-input" in result.stdout
    assert "ended in error" in result.stderr


def test_all_ok_or_need_exits_0_with_a_summary(served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "one"}, {"prompt": "NEED two"}])
    result = batch(tmp_path, source, "--out", str(tmp_path / "res" / "out.jsonl"))
    assert result.returncode == 0, result.stderr
    assert [line["status"] for line in json_lines((tmp_path / "res" / "out.jsonl").read_text())] in (
        ["ok", "need-more-input"], ["need-more-input", "ok"])
    assert "structured 2 record(s)" in result.stdout and "25 tokens" in result.stdout  # 10 + the need reply's 15


def test_csv_with_field_and_id_columns(served, tmp_path):
    source = tmp_path / "notes.csv"
    source.write_text('id,text,other\nn1,"first, with a comma",x\nn2,"two\nlines",y\nn3,,z\n')
    result = batch(tmp_path, source, "--field", "text")
    assert result.returncode == 6
    out = by_id(tmp_path / "notes.csv.out.jsonl")
    assert out["n1"]["data"]["title"] == "first, with a comma" and out["n2"]["data"]["title"] == "two\nlines"
    assert out["n3"]["errors"] == ["the prompt is empty"]
    missing = batch(tmp_path, source)  # no "prompt" column
    assert missing.returncode == 1 and "has no column 'prompt'" in missing.stderr and "'text'" in missing.stderr
    assert "--field" in missing.stderr


def test_csv_without_id_numbers_the_rows(served, tmp_path):
    source = tmp_path / "rows.csv"
    source.write_text("prompt\nalpha\nbeta\n")
    assert batch(tmp_path, source).returncode == 0
    out = by_id(tmp_path / "rows.csv.out.jsonl")
    assert {k: v["data"]["title"] for k, v in out.items()} == {"1": "alpha", "2": "beta"}


def tickets_folder(folder: Path) -> Path:
    """A folder IN: two good files (one in a sub-folder), an empty one, one not UTF-8, a hidden one."""
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("printer on fire")
    (folder / "sub" / "b.md").write_text("coffee machine empty")
    (folder / "empty.txt").write_text("  \n")
    (folder / "latin.txt").write_bytes(b"caf\xe9")
    (folder / ".hidden").write_text("never read")
    return folder


def test_a_folder_of_text_files(served, tmp_path):
    folder = tickets_folder(tmp_path / "tickets")
    result = batch(tmp_path, folder, "--json")
    assert result.returncode == 6
    out = by_id(tmp_path / "tickets.out.jsonl")
    assert set(out) == {"a.txt", "sub/b.md", "empty.txt", "latin.txt"}
    assert out["sub/b.md"]["data"]["title"] == "coffee machine empty"
    assert out["empty.txt"]["errors"] == ["the file is empty"]
    assert out["latin.txt"]["errors"] == ["the file is not UTF-8 text"]
    events = json_lines(result.stdout)
    assert events[0]["event"] == "start" and events[0]["total"] == 4
    assert events[-1]["event"] == "summary" and events[-1]["ok"] == 2 and events[-1]["error"] == 2
    assert events[-1]["exitCode"] == 6


def test_duplicate_ids_are_an_error_before_any_call(served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "prompt": "x"}, {"id": "b", "prompt": "y"},
                                                 {"id": "a", "prompt": "z"}])
    result = batch(tmp_path, source)
    assert result.returncode == 1
    assert "the id 'a' comes twice (again at line 3)" in result.stderr and "fix:" in result.stderr
    assert served.requests == [] and not (tmp_path / "in.jsonl.out.jsonl").exists()


def test_flag_mistakes_are_usage_errors(served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "x"}])
    schema = str(tmp_path / "schema.json")
    cases = [
        (["structure", "text", "--schema", schema, "--out", "o.jsonl"], "--out goes with --batch"),
        (["structure", "text", "--batch", str(source), "--schema", schema], "not from a prompt argument"),
        (["structure", "--batch", str(source), "--schema", schema, "--jobs", "0"], "--jobs must be between 1 and 64"),
        (["structure", "--batch", str(source)], "--schema is required"),
        (["structure", "--batch", str(source), "--schema", schema, "--out", str(source)], "is the input file"),
        (["structure", "--batch", str(source), "--schema", schema, "--engine", "spark"], "unknown engine 'spark'"),
        (["structure", "--batch", str(source), "--schema", schema, "--ray-address", "h:1"], "--ray-address is for --engine ray"),
        (["structure", "text", "--schema", schema, "--engine", "ray"], "--engine goes with --batch"),
    ]
    for args, message in cases:
        result = run_cli(*args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    missing = run_cli("structure", "--batch", str(tmp_path / "nope.jsonl"), "--schema", schema)
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert served.requests == []


def test_engine_ray_without_ray_says_how_to_install_it(served, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "x"}])
    result = batch(tmp_path, source, "--engine", "ray")
    assert result.returncode == 2 and "--engine ray needs Ray, which is not installed" in result.stderr
    assert "pip install 'vance-cli[ray]'" in result.stderr
    assert served.requests == [] and not (tmp_path / "in.jsonl.out.jsonl").exists()


# -- one plan, one client, N in flight -----------------------------------------------------------


def test_one_schema_check_one_client_and_jobs_in_flight(served, tmp_path, monkeypatch):
    import vance_cli.llm.factory as factory
    import vance_cli.structure.service as service

    checks, clients = [], []
    real_check, real_make = service.check_schema, factory.make_model
    monkeypatch.setattr(service, "check_schema", lambda schema, where="": checks.append(1) or real_check(schema, where))
    monkeypatch.setattr(factory, "make_model", lambda *a, **k: clients.append(1) or real_make(*a, **k))
    lock, flying, most = threading.Lock(), [0], [0]

    def slow(body):
        with lock:
            flying[0] += 1
            most[0] = max(most[0], flying[0])
        time.sleep(0.08)  # long enough that three requests always overlap, even on a busy machine
        with lock:
            flying[0] -= 1
        return answer(body)

    served.responder = slow
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": f"record {i}"} for i in range(12)])
    result = batch(tmp_path, source, "--jobs", "3", "--json")
    assert result.returncode == 0, result.stderr
    assert (len(checks), len(clients)) == (1, 1)  # not once per record
    assert most[0] == 3  # three in flight, never more
    assert json_lines(result.stdout)[0]["jobs"] == 3
    default = batch(tmp_path, source, "--json", "--out", str(tmp_path / "again.jsonl"))
    assert json_lines(default.stdout)[0]["jobs"] == 2  # a server on this machine: the local default


def test_text_mode_builds_the_schema_once_for_the_batch(served, tmp_path):
    built = {"schema": SCHEMA, "confidence": 0.9, "clarifyingQuestions": []}
    served.enqueue(text=json.dumps(built))  # the builder's answer; the records then go to the responder
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": f"record {i}"} for i in range(4)])
    result = run_cli("structure", "--batch", str(source), "--schema", "a title and a number", "--mode", "text")
    assert result.returncode == 0, result.stderr
    out = by_id(tmp_path / "in.jsonl.out.jsonl")
    assert len(out) == 4 and {line["schemaOrigin"] for line in out.values()} == {"inferred"}
    assert len(served.requests) == 5  # one builder call, one call per record
    unsure = {"schema": SCHEMA, "confidence": 0.2, "clarifyingQuestions": ["what number?"]}
    served.reset()
    served.enqueue(text=json.dumps(unsure))
    ended = run_cli("structure", "--batch", str(source), "--schema", "something vague", "--mode", "text",
                    "--out", str(tmp_path / "vague.jsonl"))
    assert ended.returncode == 1 and "the schema builder gave no schema for the batch" in ended.stderr
    assert len(served.requests) == 1 and not (tmp_path / "vague.jsonl").exists()


def test_default_jobs_by_family():
    from vance_cli.llm.base import Capabilities
    from vance_cli.llm.profile import HOSTED_CONCURRENCY, LOCAL_CONCURRENCY, concurrency_for

    assert concurrency_for(Capabilities(family="openai"), None) == HOSTED_CONCURRENCY == 8
    assert concurrency_for(Capabilities(family="anthropic"), "https://api.anthropic.com") == 8
    assert concurrency_for(Capabilities(family="llama-server"), "http://gpu-box:8080/v1") == LOCAL_CONCURRENCY == 2
    assert concurrency_for(Capabilities(family="ollama"), None) == 2
    assert concurrency_for(Capabilities(family="other"), "http://127.0.0.1:8000/v1") == 2
    assert concurrency_for(Capabilities(family="other"), "https://api.groq.com/openai/v1") == 8


def test_a_429_slows_down_every_worker_once(served, tmp_path, monkeypatch):
    """One 429 with Retry-After: once the client has read it, no worker sends anything until the
    wait is over; then one record goes first and the others follow when it is back. Nothing is
    sent twice but the limited record."""
    from vance_cli.llm.retry import SlowDown

    held: list[float] = []  # when the client read the 429 and closed the gate (the server's clock)
    real_hold = SlowDown.hold
    monkeypatch.setattr(SlowDown, "hold", lambda self, seconds: held.append(time.monotonic()) or real_hold(self, seconds))

    def slow(body):
        time.sleep(0.05)
        return answer(body)

    served.responder = slow
    served.enqueue_error(429, headers={"Retry-After": "1"})
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": f"record {i}"} for i in range(20)])
    result = batch(tmp_path, source, "--jobs", "4")
    assert result.returncode == 0, result.stderr
    assert len(served.requests) == 21  # 20 records + the one retry: no hammering
    assert len(held) == 1
    after = [t - held[0] for t in served.times]
    assert not [dt for dt in after if 0.1 < dt < 0.95], after  # the gate is closed: silence
    resumed = sorted(dt for dt in after if dt >= 0.95)
    assert len(resumed) >= 10, after
    assert resumed[1] - resumed[0] >= 0.04, resumed  # the probe alone first
    assert len(by_id(tmp_path / "in.jsonl.out.jsonl")) == 20
    assert "HTTP 429" in result.stderr and "retrying in 1s" in result.stderr


# -- resume --------------------------------------------------------------------------------------


def test_rerun_skips_done_ids_and_retries_transport_failures(served, tmp_path, vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\n")
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": f"r{i}", "prompt": f"record {i}"} for i in range(6)]
                         + [{"id": "bad", "prompt": ""}])
    served.enqueue_error(503)  # the first request fails for good (one attempt)
    first = batch(tmp_path, source, "--jobs", "1")
    assert first.returncode == 6
    out_path = tmp_path / "in.jsonl.out.jsonl"
    failed = by_id(out_path)["r0"]
    assert failed["status"] == "error" and failed["retry"] is True and "HTTP 503" in failed["errors"][0]
    served.reset()
    second = batch(tmp_path, source, "--json")
    assert sent(served) == ["record 0"]  # only the transport failure again; the bad record stays an error
    out = by_id(out_path)
    assert len(out) == 7 and out["r0"]["status"] == "ok" and out["bad"]["status"] == "error"
    start = json_lines(second.stdout)[0]
    assert (start["done_before"], start["retried"]) == (6, 1)
    assert second.returncode == 6  # the bad record from the first run still counts
    served.reset()
    third = batch(tmp_path, source)
    assert served.requests == [] and third.returncode == 6 and "7 done before" in third.stdout


def test_a_torn_last_line_is_cut_off_and_its_record_done_again(served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"id": f"r{i}", "prompt": f"record {i}"} for i in range(5)])
    assert batch(tmp_path, source, "--jobs", "1").returncode == 0
    out_path = tmp_path / "in.jsonl.out.jsonl"
    data = out_path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn_id = json.loads(data[last_start:])["id"]
    out_path.write_bytes(data[: last_start + 25])  # a power cut in the middle of the last line
    served.reset()
    result = batch(tmp_path, source)
    assert result.returncode == 0, result.stderr
    assert sent(served) == [f"record {torn_id[1:]}"]
    assert "torn line" in result.stderr
    assert set(by_id(out_path)) == {f"r{i}" for i in range(5)}
    assert out_path.read_bytes().endswith(b"}\n")


def test_a_foreign_line_inside_out_is_an_error_and_out_is_left_alone(served, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": "a"}, {"prompt": "b"}])
    out_path = tmp_path / "out.jsonl"
    out_path.write_text('{"id": "1", "status": "ok"}\nhello\n{"id": "2", "status": "ok"}\n')
    before = out_path.read_bytes()
    result = batch(tmp_path, source, "--out", str(out_path))
    assert result.returncode == 1 and "line 2 of" in result.stderr and "not a result line" in result.stderr
    assert out_path.read_bytes() == before and served.requests == []


def test_a_model_that_keeps_failing_stops_the_batch_and_a_rerun_finishes(served, tmp_path, vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\n")
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": f"record {i}"} for i in range(20)])
    for _ in range(8):
        served.enqueue_error(500)
    stopped = batch(tmp_path, source, "--jobs", "1")
    assert stopped.returncode == 1
    assert "stopped: the last 8 records failed in the model call" in stopped.stderr and "run the same command again" in stopped.stderr
    out_path = tmp_path / "in.jsonl.out.jsonl"
    assert len(by_id(out_path)) == 8 and len(served.requests) == 8
    served.reset()
    finished = batch(tmp_path, source)
    assert finished.returncode == 0, finished.stderr
    assert len(served.requests) == 20 and len(by_id(out_path)) == 20  # the 8 failed ones again, then the rest


def test_json_progress_events(served, tmp_path):
    def slow(body):
        time.sleep(0.06)
        return answer(body)

    served.responder = slow
    source = write_jsonl(tmp_path / "in.jsonl", [{"prompt": f"record {i}"} for i in range(12)])
    result = batch(tmp_path, source, "--json", "--jobs", "1")
    assert result.returncode == 0
    events = json_lines(result.stdout)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "summary" and "progress" in kinds
    progress = next(e for e in events if e["event"] == "progress")
    assert set(progress) >= {"done", "total", "ok", "need", "stale", "error", "tokens", "cost", "rate", "eta"}
    assert progress["total"] == 12 and 0 < progress["done"] < 12 and progress["rate"] > 0
    assert events[-1]["done"] == 12 and events[-1]["tokens"] == 120 and events[-1]["exitCode"] == 0


def test_the_gate_lets_one_probe_through_then_the_rest():
    """After a slow-down, the first call out is the probe and the others wait until it is back; a
    probe that is told to slow down again closes the gate again, and the next one probes."""
    import asyncio

    from vance_cli.llm.retry import SlowDown

    async def scenario() -> list[str]:
        gate, order, probes = SlowDown(), [], []
        gate.hold(0.05)

        async def call(name: str) -> None:
            probe = await gate.enter()
            order.append(f"in{' probe' if probe else ''}")
            await asyncio.sleep(0.03)
            slowed = probe and not probes  # the first probe is rate limited again
            if probe:
                probes.append(name)
            if slowed:
                gate.hold(0.05)
            gate.leave(probe, slowed)
            order.append("out")

        await asyncio.gather(call("a"), call("b"), call("c"))
        return order

    assert asyncio.run(scenario()) == ["in probe", "out", "in probe", "out", "in", "out"]


def test_the_compact_id_set_agrees_with_a_set():
    import random

    from vance_cli.store.jsonl import IdSet

    rng = random.Random(20)
    ids = [f"{rng.choice('abc')}{rng.randrange(5000)}" for _ in range(3000)] + ["", "ü/ß", "\udcff"]
    compact = IdSet()
    for text in ids:
        compact.add(text)
    probes = ids[::7] + [f"x{i}" for i in range(200)] + ["a", "ü/ss"]
    assert [p in compact for p in probes] == [p in set(ids) for p in probes]
    repeated = {text for text in set(ids) if ids.count(text) > 1}
    assert compact.repeated() == {IdSet.digest(text) for text in repeated}
