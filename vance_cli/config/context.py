"""The context a command or the console runs in: the scopes, and the settings with overrides.

``load_context`` also says, once per invocation, what the person should know about it before any
work starts: config warnings and the line for a folder that is not trusted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vance_cli.terminal import err

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings


def load_context(overrides: dict[str, Any] | None = None) -> tuple[Scopes, Settings]:
    """The scopes found from here and the settings they give, CLI ``overrides`` on top (None: not given)."""
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
