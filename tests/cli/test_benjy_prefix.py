"""The prompt prefix stays byte-identical across the calls of a Benjy run, read from the wire
(issue 18: llama.cpp reuses its cache only for an identical prefix; hosted prompt caches too).

A whole run over the real HTTP transport: every controller call of one stage, and every worker
call, starts with the same bytes: the system message(s), the format instructions and the tool
schemas. What differs (the state digest, the item) comes after them.
"""

from __future__ import annotations

import json
from collections import defaultdict

from tests.cli.test_cli_benjy import CHECK, env, ws  # noqa: F401  (fixtures)
from tests.engines.benjy_brain import Brain
from tests.helpers import run_cli


def _prefix(body):
    """The part of a request a chat template renders first: the leading system messages and the
    tool schemas, as the bytes they arrived in."""
    head = []
    for message in body["messages"]:
        if message["role"] != "system":
            break
        head.append(message)
    return json.dumps(head, ensure_ascii=False) + json.dumps(body.get("tools"), ensure_ascii=False)


def test_every_stage_and_every_worker_sends_the_same_prefix(fake_openai, env, ws):  # noqa: F811
    fake_openai.responder = Brain(items=3).reply_body
    r = run_cli("benjy", "run", "write three item files", "--workspace", str(ws), "--check", CHECK, env=env)
    assert r.returncode == 0, r.stderr
    groups: dict[str, list[str]] = defaultdict(list)
    for body in fake_openai.requests:
        kind = body["response_format"]["json_schema"]["name"] if body.get("response_format") else "worker"
        groups[kind].append(_prefix(body))
    assert len(groups["worker"]) >= 3 and len(groups["benjy_evaluate"]) >= 3
    for kind, prefixes in groups.items():
        assert len(set(prefixes)) == 1, f"{kind}: {len(set(prefixes))} different prefixes in {len(prefixes)} calls"
        assert prefixes[0].startswith('[{"role": "system"'), kind
