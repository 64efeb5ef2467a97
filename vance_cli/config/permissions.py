"""Approval rules: which side-effecting tool calls run without asking, which ask, which never run.

A rule is ``TOOL`` (every call of the tool) or ``TOOL:PATTERN`` (a shell-style glob on the call's
subject: the command of ``exec_run``, the path of ``file_write``, the check command of
``process_spawn``). Rules come from, in this order of precedence within a decision:

- ``[permissions]`` in ``$VANCE_HOME/config.toml`` (the user scope: every project);
- ``[permissions]`` in the project's ``.vance/config.toml``, only once the folder is trusted
  (config/trust.py lists the table as restricted; Settings keeps each scope's table apart);
- what the person chose "allow always" / "deny always" for, per project, kept in
  ``$VANCE_HOME/permissions.json`` (outside the repository: a model cannot plant it there, and
  the project's trust digest does not change when a person approves something);
- ``--allow TOOL[:PATTERN]`` on the command line.

Decision: a matching ``deny`` wins, then ``ask``, then ``allow``; no match is "ask" (the caller's
default). Standard library only: this is read on every chat start.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes

# (config.settings.Settings is not imported, not even for typing: settings_keys imports this module.)
Settings = Any

DECISIONS = ("deny", "ask", "allow")  # precedence, strongest first
PERMISSIONS_FILE = "permissions.json"
# permissions.sandboxed_exec: "ask" (default) or "allow" (an exec_run command that runs in the
# sandbox needs no approval; unconfined commands always ask).
SANDBOXED_EXEC = ("ask", "allow")


@dataclass(frozen=True)
class Rule:
    tool: str  # a tool name, or "*" for every tool
    pattern: str | None  # a glob on the call's subject; None: every call of the tool
    decision: str  # allow | ask | deny
    source: str  # where the rule comes from, for the person ("user config", "--allow", ...)

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}:{self.pattern}"

    def matches(self, tool: str, subject: str | None) -> bool:
        if self.tool not in ("*", tool):
            return False
        if self.pattern is None:
            return True
        return subject is not None and fnmatch.fnmatchcase(subject, self.pattern)


def parse_rule(text: str, decision: str, source: str) -> Rule:
    """``TOOL`` or ``TOOL:PATTERN``; ValueError with the reason when it is neither."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a rule is TOOL or TOOL:PATTERN, e.g. exec_run:'pytest *'")
    tool, sep, pattern = text.strip().partition(":")
    tool = tool.strip()
    if not tool or not (tool == "*" or tool.replace("_", "").replace("-", "").isalnum()):
        raise ValueError(f"{text!r}: the part before ':' must be a tool name such as exec_run or file_write")
    if sep and not pattern.strip():
        raise ValueError(f"{text!r}: the pattern after ':' is empty (leave out ':' for every call of {tool})")
    return Rule(tool, pattern.strip() if sep else None, decision, source)


def exact(subject: str) -> str:
    """A pattern that matches ``subject`` only (glob characters escaped)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in subject)


def decide(rules: list[Rule], tool: str, subject: str | None) -> tuple[str | None, Rule | None]:
    """The strongest decision of the rules matching this call (deny > ask > allow), or (None, None)."""
    for decision in DECISIONS:
        for rule in rules:
            if rule.decision == decision and rule.matches(tool, subject):
                return decision, rule
    return None, None


# --------------------------------------------------------------------------- config.toml


def check_table(table: Any, where: str) -> None:
    """ConfigError naming ``where`` when ``[permissions]`` is malformed (used by the settings checker)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [permissions] must be a table", hint="write [permissions] with allow/ask/deny lists")
    for decision in DECISIONS:
        if decision not in table:
            continue
        value = table[decision]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(
                f"{where}: permissions.{decision} must be a list of rules",
                hint=f'e.g. {decision} = ["exec_run:pytest *", "file_write"]',
            )
        for v in value:
            try:
                parse_rule(v, decision, where)
            except ValueError as exc:
                raise ConfigError(f"{where}: permissions.{decision}: {exc}", hint="a rule is TOOL or TOOL:PATTERN") from exc
    mode = table.get("sandboxed_exec")
    if mode is not None and mode not in SANDBOXED_EXEC:
        raise ConfigError(
            f"{where}: permissions.sandboxed_exec must be one of {', '.join(SANDBOXED_EXEC)}, got {mode!r}",
            hint='"ask" (default) or "allow" (sandboxed commands run without asking)',
        )


def config_rules(settings: Settings) -> list[Rule]:
    """The rules of the config files that apply (a project's only from a trusted folder)."""
    rules: list[Rule] = []
    for origin, table in getattr(settings, "permission_tables", []):
        source = f"{origin} config"
        for decision in DECISIONS:
            for text in table.get(decision) or []:
                rules.append(parse_rule(text, decision, source))
    return rules


def cli_rules(allow: list[str] | tuple[str, ...]) -> list[Rule]:
    """``--allow`` rules; UsageError for a malformed one."""
    out = []
    for text in allow:
        try:
            out.append(parse_rule(text, "allow", "--allow"))
        except ValueError as exc:
            raise UsageError(f"--allow {exc}", hint="pass --allow TOOL or --allow 'TOOL:PATTERN', e.g. --allow 'exec_run:pytest *'") from exc
    return out


# --------------------------------------------------------------------------- remembered per project


def project_key(scopes: Scopes) -> str:
    """The folder "allow always" is remembered for: the project folder, else the current folder."""
    root = scopes.project.parent if scopes.project is not None else scopes.cwd
    return str(Path(root).resolve())


def _file(user: Path) -> Path:
    return Path(user) / PERMISSIONS_FILE


def _load(user: Path) -> dict[str, Any]:
    path = _file(user)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # none yet (a home that cannot exist says so elsewhere)
        return {"version": 1, "projects": {}}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", hint=f"check its permissions, or delete {path}") from exc
    try:
        data = json.loads(text)
        projects = data["projects"]
        if not isinstance(projects, dict):
            raise TypeError("projects is not an object")
        return data
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise ConfigError(
            f"the approvals file {path} is damaged ({type(exc).__name__})",
            hint=f"delete {path}; the rules you chose 'always' for are then asked again",
        ) from exc


def remembered_rules(scopes: Scopes) -> list[Rule]:
    entry = _load(scopes.user)["projects"].get(project_key(scopes)) or {}
    rules = []
    for decision in DECISIONS:
        for text in entry.get(decision) or []:
            try:
                rules.append(parse_rule(text, decision, "remembered for this project"))
            except ValueError:
                continue  # a hand-edited entry that is no rule: ignored, the call asks
    return rules


def remember(scopes: Scopes, decision: str, rule: str) -> None:
    """Keep ``rule`` (TOOL or TOOL:PATTERN) as ``decision`` for this project; atomic."""
    from vance_cli.store.atomic import atomic_write_json

    parse_rule(rule, decision, "")  # ValueError for a malformed one
    data = _load(scopes.user)
    entry = data["projects"].setdefault(project_key(scopes), {})
    for other in DECISIONS:  # one decision per rule: the newest wins
        if rule in (entry.get(other) or []):
            entry[other] = [r for r in entry[other] if r != rule]
    entry.setdefault(decision, []).append(rule)
    data["projects"][project_key(scopes)] = {k: v for k, v in entry.items() if v}
    atomic_write_json(_file(scopes.user), data)


def forget(scopes: Scopes, rule: str) -> bool:
    """Drop a remembered rule of this project; False when there was none."""
    from vance_cli.store.atomic import atomic_write_json

    data = _load(scopes.user)
    key = project_key(scopes)
    entry = data["projects"].get(key) or {}
    found = False
    for decision in DECISIONS:
        if rule in (entry.get(decision) or []):
            entry[decision] = [r for r in entry[decision] if r != rule]
            found = True
    if not found:
        return False
    entry = {k: v for k, v in entry.items() if v}
    if entry:
        data["projects"][key] = entry
    else:
        data["projects"].pop(key, None)
    atomic_write_json(_file(scopes.user), data)
    return True


def sandboxed_exec(settings: Settings) -> str:
    value = settings.get("permissions.sandboxed_exec", "ask")
    return value if value in SANDBOXED_EXEC else "ask"
