"""Run the real CLI in a subprocess, the way a user does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def vance(*args: str, env: dict | None = None, input: str | None = None, cwd: Path | None = None, timeout: float = 60):
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "vance_cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        cwd=cwd,
        timeout=timeout,
    )


def write_script(path: Path, replies: list) -> str:
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
