"""`vance doctor`: one line per check of what a working Vance needs, with a fix for each failure.

The checks run in order and never stop at the first failure: a person fixing their setup wants the
whole list at once. Only the endpoint check calls a model (skipped with ``--offline``), so the
module imports neither litellm nor textual at the top; the model layer is imported inside that check.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from vance_cli.errors import VanceError
from vance_cli.text import shown_url
from vance_cli.names import DEMO_PREFIX

MIN_PYTHON = (3, 11)

OK, FAIL, WARN, SKIP = "ok", "fail", "warn", "skip"

# The environment variable litellm reads for each provider prefix (model strings "prefix/name").
PROVIDER_KEY_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
}
# Providers that run on the person's machine and need no key.
KEYLESS_PREFIXES = ("ollama", "ollama_chat", "lm_studio", "scripted:", "function:", DEMO_PREFIX)


@dataclass
class Check:
    name: str
    outcome: str  # ok | fail | warn | skip
    detail: str
    fix: str | None = None

    def line(self) -> str:
        mark = {OK: "ok  ", FAIL: "FAIL", WARN: "warn", SKIP: "skip"}[self.outcome]
        text = f"{mark}  {self.name:<14} {self.detail}"
        if self.fix and self.outcome in (FAIL, WARN):
            text += "\n      fix: " + self.fix.replace("\n", "\n      ")
        return text


def provider_of(model: str) -> str:
    """``openai`` for ``gpt-4o`` or ``openai/gpt-4o``; the prefix before the first "/" otherwise."""
    if model.startswith(("scripted:", "function:", DEMO_PREFIX)):
        return model.split(":", 1)[0] + ":"
    if "/" in model:
        return model.split("/", 1)[0].lower()
    lowered = model.lower()
    if lowered.startswith("claude"):
        return "anthropic"
    if lowered.startswith("gemini"):
        return "gemini"
    return "openai"


class Doctor:
    """Runs the checks against one scope set and settings (the CLI's, or a test's)."""

    def __init__(self, *, offline: bool, env: dict[str, str] | None = None) -> None:
        self.offline = offline
        self.env = dict(os.environ if env is None else env)
        self.scopes: Any = None
        self.settings: Any = None
        self.model: str | None = None
        self._model_profile: Any = None

    def run(self) -> Iterator[Check]:
        """The checks one by one as each finishes, so the first line shows at once."""
        for step in self._steps():
            try:
                result = step()
            except VanceError as exc:
                result = Check(step.__name__.removeprefix("check_"), FAIL, exc.message, exc.hint)
            if result is not None:
                yield result

    def _steps(self) -> Iterator[Callable[[], Check | None]]:
        yield self.check_python
        yield self.check_settings
        yield self.check_model
        yield self.check_key
        yield self.check_capabilities
        yield self.check_scopes
        yield self.check_trust
        yield self.check_sandbox
        yield self.check_state
        yield self.check_processes
        yield self.check_recipes
        yield self.check_schemas
        yield self.check_mcp
        yield self.check_endpoint

    # ------------------------------------------------------------------ environment

    def check_python(self) -> Check:
        version = ".".join(map(str, sys.version_info[:3]))
        if sys.version_info[:2] < MIN_PYTHON:
            return Check("python", FAIL, f"Python {version} is too old",
                         f"install Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer and reinstall vance")
        return Check("python", OK, f"Python {version} ({sys.executable})")

    def check_settings(self) -> Check:
        from vance_cli.config.scopes import Scopes
        from vance_cli.config.settings import Settings

        self.scopes = Scopes.discover(env=self.env)
        self.settings = Settings.load(self.scopes, env=self.env)
        read = ", ".join(str(p) for p in self.settings.files) or "none (defaults only)"
        return Check("settings", OK, f"config files read: {read}")

    def check_model(self) -> Check:
        if self.settings is None:
            return Check("model", SKIP, "settings could not be read")
        self.model = self.settings.resolve_model(None)
        opts = self.settings.model_options(self.model)
        where = f" at {shown_url(opts['api_base'])}" if opts.get("api_base") else ""
        return Check("model", OK, f"{self.model}{where}")

    def check_key(self) -> Check | None:
        if self.model is None:
            return None
        opts = self.settings.model_options(self.model)
        provider = provider_of(self.model)
        if opts.get("api_key"):
            return Check("api key", OK, "api_key set in config or VANCE_API_KEY (not shown)")
        if provider.startswith(KEYLESS_PREFIXES):
            return Check("api key", OK, f"{provider.rstrip(':/')} needs no key")
        names = PROVIDER_KEY_VARS.get(provider)
        if names is None:
            if opts.get("api_base"):
                return Check("api key", OK, "no key set; an OpenAI-compatible server at api_base may not need one")
            return Check("api key", WARN, f"cannot tell which key {provider} needs",
                         "set VANCE_API_KEY, or model.api_key in config.toml, if the provider wants one")
        present = [n for n in names if self.env.get(n, "").strip()]
        if present:
            return Check("api key", OK, f"{present[0]} is set (not shown)")
        if opts.get("api_base") and provider == "openai":
            return Check("api key", WARN, f"{names[0]} is not set; fine for a local server at {shown_url(opts['api_base'])}",
                         f"export {names[0]}=... if that server wants a key")
        return Check("api key", FAIL, f"{' or '.join(names)} is not set for {self.model}",
                     f"export {names[0]}=... (or set VANCE_API_KEY)")

    def _profile(self):
        """The model's ModelProfile, worked out once for the checks that need it."""
        if self._model_profile is None:
            from vance_cli.llm.profile import profile_for

            self._model_profile = profile_for(self.model, self.settings)
        return self._model_profile

    def check_capabilities(self) -> Check | None:
        if self.model is None:
            return None
        caps = self._profile().capabilities
        detail = (f"family {caps.family}: tool calls {'yes' if caps.tools else 'no'}, "
                  f"JSON schema {'strict' if caps.strict_json_schema else 'yes' if caps.json_schema else 'no'}")
        table = f'[models."{self.model}".capabilities]'
        if not caps.tools:
            fix = f"if the model does make tool calls, say so in config.toml:\n{table}\ntools = true"
            return Check("capabilities", WARN, detail + " (chat engines need tool calls)", fix)
        return Check("capabilities", OK, detail + f"; override with {table} in config.toml (tools, json_schema)")

    # ------------------------------------------------------------------ state

    def check_scopes(self) -> Check:
        if self.scopes is None:
            from vance_cli.config.scopes import Scopes

            self.scopes = Scopes.discover(env=self.env)
        project = str(self.scopes.project) if self.scopes.project else "none (no .vance/ above this folder)"
        return Check("scopes", OK, f"user {self.scopes.user}; project {project}")

    def check_trust(self) -> Check:
        from vance_cli.config import trust

        report = trust.check(self.scopes)
        if report.state == trust.NO_PROJECT:
            return Check("trust", OK, "no project folder here: only your own settings apply")
        if report.state == trust.TRUSTED:
            return Check("trust", OK, f"{report.root} is trusted: its .vance/ settings apply")
        if not report.ignored:
            return Check("trust", OK, f"{report.root} is not trusted, and its .vance/ sets nothing that needs trust")
        changed = " (changed since you trusted it)" if report.state == trust.CHANGED else ""
        return Check("trust", WARN, f"{report.root}/.vance{changed} is not trusted: ignoring {', '.join(report.ignored)}",
                     f"if you trust what it sets: {report.command}")

    def check_sandbox(self) -> Check:
        import asyncio

        from vance_cli.tools.exec_run import find_sandbox

        mode = str(self.settings.get("exec.sandbox", "auto")) if self.settings is not None else "auto"
        if mode == "off":
            return Check("sandbox", WARN, 'exec.sandbox is "off": exec_run commands run with your full rights '
                         "(unconfined: each command asks first unless your rules allow it)",
                         'set [exec] sandbox = "auto" in config.toml')
        bwrap, problem = asyncio.run(find_sandbox())
        if problem is None:
            return Check("sandbox", OK, f"bubblewrap works ({bwrap}): exec_run commands run sandboxed")
        outcome = FAIL if mode == "required" else WARN
        return Check("sandbox", outcome, f"{problem}: exec_run commands would run unconfined"
                     + (" — refused, exec.sandbox is \"required\"" if mode == "required" else " (each command asks first unless your rules allow it)"),
                     "install bubblewrap (Debian/Ubuntu: apt install bubblewrap)")

    def check_state(self) -> Check:
        from vance_cli.errors import StoreError
        from vance_cli.store.atomic import atomic_write_text, state_folder

        folder = self.scopes.processes_dir()
        probe = folder / ".doctor-probe"
        try:
            state_folder(self.scopes.state_dir, folder.name)
            atomic_write_text(probe, "ok\n")
            probe.unlink()
        except StoreError as exc:
            return Check("state folder", FAIL, exc.message, exc.hint)
        except OSError as exc:
            return Check("state folder", FAIL, f"cannot write {folder}: {exc.strerror or exc}",
                         "make it writable, or point VANCE_HOME at a writable folder")
        return Check("state folder", OK, f"{folder} is writable")

    def check_processes(self) -> Check:
        from vance_cli.store.files import ProcessStore

        processes, corrupt = ProcessStore.for_scopes(self.scopes).list()
        if corrupt:
            names = ", ".join(p.name for p, _ in corrupt[:3]) + (" …" if len(corrupt) > 3 else "")
            return Check("process files", WARN, f"{len(processes)} readable, {len(corrupt)} unreadable: {names}",
                         "they are kept untouched; `vance ps` names the reason, move them aside to silence this")
        return Check("process files", OK, f"{len(processes)} readable")

    def check_recipes(self) -> Check:
        from vance_cli.config.recipes import list_recipes, validate_recipe_file

        bad: list[str] = []
        infos = [i for i in list_recipes(self.scopes) if not i.shadowed]
        for info in infos:
            try:
                validate_recipe_file(Path(info.path))
            except VanceError as exc:
                bad.append(f"{info.name}: {exc.message}")
        if bad:
            return Check("recipes", FAIL, f"{len(bad)} of {len(infos)} invalid: {bad[0]}",
                         "run `vance recipes validate` for each error and its fix")
        return Check("recipes", OK, f"{len(infos)} valid")

    def check_mcp(self) -> Check | None:
        """Each configured MCP server starts and lists its tools (none configured: no line)."""
        from vance_cli.config.mcp_servers import configured_servers

        servers = configured_servers(self.scopes)
        if not servers:
            return None
        from vance_cli.tools.mcp_client import survey

        good, bad, held = [], [], []
        for server in servers:
            if server.blocked:
                held.append(f"{server.name}: {server.blocked}")
                continue
            found = survey(server, self.scopes)
            if found.error is not None:
                bad.append(found.error if server.name in found.error else f"{server.name}: {found.error}")
            else:
                good.append(f"{server.name} ({len(found.tools)} tools)")
        if bad:
            return Check("mcp", FAIL, "; ".join(bad), "fix the command or url in [mcp.servers] (run `vance mcp list`); "
                         "for a missing package: pip install 'vance-cli[mcp]'")
        if held:
            return Check("mcp", WARN, "; ".join([*good, *held]), "trust the folder to start its servers: vance trust")
        return Check("mcp", OK, ", ".join(good) + " start")

    def check_schemas(self) -> Check:
        from vance_cli.structure.registry import SchemaRegistry

        entries, broken = SchemaRegistry(self.scopes).scan()
        if broken:
            first = broken[0]
            return Check("schemas", FAIL, f"{len(broken)} broken: {first.name or first.source}: {first.problem}",
                         "run `vance schemas list` and fix or remove the broken file")
        return Check("schemas", OK, f"{len(entries)} valid")

    # ------------------------------------------------------------------ endpoint

    def check_endpoint(self) -> Check | None:
        if self.model is None:
            return None
        if self.offline:
            return Check("endpoint", SKIP, "skipped (--offline)")
        import asyncio

        from vance_cli.llm.base import ChatRequest, ToolSpec
        from vance_cli.llm.factory import local_model, transport_for
        from vance_cli.messages import Message

        model = local_model(self.model, self.settings)
        if model is None:  # one tiny call: a failure is reported, not retried for seconds
            profile = self._profile()
            model = transport_for(replace(profile, retries={**profile.retries, "attempts": 1}))
        respond = ToolSpec(
            name="respond",
            description="Answer the user.",
            parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        )
        request = ChatRequest(
            messages=[Message(role="user", content="Reply with the single word: ok")],
            tools=[respond] if model.capabilities.tools else [],
            max_tokens=16,
        )
        completion = asyncio.run(model.complete(request))
        said = "a tool call" if completion.tool_calls else "text" if completion.text else "an empty reply"
        return Check("endpoint", OK, f"{self.model} answered with {said} ({completion.usage.total_tokens} tokens)")


def run_doctor(*, offline: bool, env: dict[str, str] | None = None) -> Iterator[Check]:
    return Doctor(offline=offline, env=env).run()


def as_json(checks: list[Check]) -> dict[str, Any]:
    return {"ok": not any(c.outcome == FAIL for c in checks), "checks": [asdict(c) for c in checks]}
