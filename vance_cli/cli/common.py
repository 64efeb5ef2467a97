"""What every command needs: the scopes, the settings with CLI overrides, and the output helpers."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings


def load_context(overrides: dict[str, Any] | None = None) -> tuple[Scopes, Settings]:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings

    scopes = Scopes.discover()
    return scopes, Settings.load(scopes, overrides={k: v for k, v in (overrides or {}).items() if v is not None})


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def fmt_time(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
