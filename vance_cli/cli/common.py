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
    settings = Settings.load(scopes, overrides={k: v for k, v in (overrides or {}).items() if v is not None})
    announce(scopes, settings)
    return scopes, settings


_announced: set[str] = set()


def announce(scopes: Scopes, settings: Settings) -> None:
    """Config warnings and the untrusted-folder line on stderr, each once per invocation."""
    from vance_cli.config.trust import check

    lines = [f"warning: {w}" for w in settings.warnings]
    notice = check(scopes).notice()
    if notice:
        lines.append(notice)
    for line in lines:
        if line not in _announced:
            _announced.add(line)
            err(line)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def fmt_time(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
