"""Recipes: YAML files that configure an engine (tools, prompts, validators), found through the scopes.

Lookup cascade: project ``.vance/recipes/`` shadows ``$VANCE_HOME/recipes/`` shadows the bundled
``recipes/``. Validation is fail-fast: an unknown key, engine, tool or model alias is a
RecipeError whose message names the file and the key path (``tools.add[1]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from vance_cli.config.scopes import Scopes
from vance_cli.config.trust import check as trust_check
from vance_cli.config.trust import project_trusted
from vance_cli.errors import ConfigError
from vance_cli.names import ALIAS_PREFIX, KNOWN_ENGINES, KNOWN_TOOLS, MCP_PREFIX, MCP_TOOL_PATTERN, MODEL_ALIASES
from vance_cli.store.parse_cache import cached_parse, error_of
from vance_cli.text import did_you_mean

RECIPE_SUFFIXES = (".yaml", ".yml")

CHAT_DEFAULT_TOOLS = ("respond", "file_read", "file_list")
# Engines whose turns end with `respond` (structured-engine-output); without it they take the legacy path.
RESPOND_ENGINES = ("ford", "arthur")
ENGINE_DEFAULT_TOOLS: dict[str, tuple[str, ...]] = {
    "ford": CHAT_DEFAULT_TOOLS,
    "arthur": CHAT_DEFAULT_TOOLS,
}

DEFAULT_DATA_RELAY_TEXT = (
    "VALIDATION CHECK: a tool returned a large result ({tool_chars} characters) but your reply is only "
    "{message_chars} characters. Relay the relevant data from the tool result to the user in your "
    "respond message."
)


class RecipeError(ConfigError):
    """A recipe that cannot be found or does not validate."""


def known_tool_names() -> list[str]:
    """Every built-in tool a recipe may name (from the names table: no tool module is imported)."""
    return list(KNOWN_TOOLS)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_tool_name(name: str) -> str:
    if name.startswith(MCP_PREFIX):
        import re

        if not re.fullmatch(MCP_TOOL_PATTERN, name):
            raise ValueError(
                f"malformed MCP tool {name!r}: write mcp:SERVER/TOOL or mcp:SERVER/* (SERVER as in [mcp.servers.SERVER])"
            )
        return name
    known = known_tool_names()
    if name not in known:
        raise ValueError(f"unknown tool {name!r} (known: {', '.join(known)}){did_you_mean(name, known)}")
    return name


# Checked per item so the error location carries the index (tools.add[1]).
ToolName = Annotated[str, AfterValidator(_check_tool_name)]


class ToolsSpec(_Strict):
    # None: the engine's default tool list.
    allowed: list[ToolName] | None = None
    add: list[ToolName] = Field(default_factory=list)
    remove: list[ToolName] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _list_shorthand(cls, value: Any) -> Any:
        # `tools: [respond, file_read]` is short for `tools: {allowed: [...]}`.
        return {"allowed": value} if isinstance(value, list) else value


class DataRelayCorrection(_Strict):
    enabled: bool = True
    minToolResultChars: int = Field(default=500, ge=0)
    maxMessageChars: int = Field(default=200, ge=0)
    # Formatted by the engine with {tool_chars} and {message_chars}.
    text: str = DEFAULT_DATA_RELAY_TEXT


class CompactSpec(_Strict):
    """The prompt and tool set a recipe uses with a small model (``capabilities.compact_prompt``):
    every token costs a small model time and attention, and every extra tool is one more it can
    misuse (issue 18: Qwen 0.5B called ``process_steer`` eleven times to answer "hello")."""

    systemPrompt: str = Field(min_length=1)
    # None: the recipe's own tools; else a subset of them (never a tool the recipe does not grant).
    tools: list[ToolName] | None = None


class ExecSpec(_Strict):
    # exec_run may reach the network inside its sandbox (config: exec.network).
    network: bool = False


class Recipe(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    # A part of another recipe (Benjy's stages and workers), not one a person runs: `vance recipes
    # list` hides it unless --all.
    internal: bool = False
    engine: str
    # A litellm model string or default:fast|analyze|code; None: the model.default setting.
    model: str | None = None
    tools: ToolsSpec = Field(default_factory=ToolsSpec)
    systemPrompt: str = ""
    promptPrefix: str | None = None
    validation: bool = True
    maxValidationCorrections: int = Field(default=2, ge=0)
    maxToolIterations: int = Field(default=12, ge=1)
    dataRelayCorrection: DataRelayCorrection = Field(default_factory=DataRelayCorrection)
    params: dict[str, Any] = Field(default_factory=dict)
    exec: ExecSpec = Field(default_factory=ExecSpec)
    compact: CompactSpec | None = None

    _path: Path | None = PrivateAttr(default=None)
    _origin: str | None = PrivateAttr(default=None)

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, engine: str) -> str:
        if engine not in KNOWN_ENGINES:
            raise ValueError(
                f"unknown engine {engine!r} (known: {', '.join(KNOWN_ENGINES)}){did_you_mean(engine, KNOWN_ENGINES)}"
            )
        return engine

    @field_validator("model")
    @classmethod
    def _known_alias(cls, model: str | None) -> str | None:
        if model is None:
            return None
        model = model.strip()
        if not model:
            raise ValueError("must not be empty (leave it out to use the configured default model)")
        if model.startswith(ALIAS_PREFIX) and model not in MODEL_ALIASES:
            raise ValueError(
                f"unknown model alias {model!r} (known: {', '.join(MODEL_ALIASES)}){did_you_mean(model, MODEL_ALIASES)}"
            )
        return model

    @model_validator(mode="after")
    def _compact_tools_are_granted(self) -> Recipe:
        if self.compact is not None and self.compact.tools is not None:
            extra = [t for t in self.compact.tools if t not in self.tool_names()]
            if extra:
                raise ValueError(
                    f"compact.tools may only narrow the recipe's tools; not granted: {', '.join(extra)}"
                )
        return self

    def compacted(self) -> Recipe:
        """This recipe as a small model sees it: the compact prompt and tool subset (itself when
        it has no ``compact`` section)."""
        if self.compact is None:
            return self
        tools = self.tools if self.compact.tools is None else ToolsSpec(allowed=list(self.compact.tools))
        out = self.model_copy(update={"systemPrompt": self.compact.systemPrompt, "tools": tools, "compact": None})
        out._path, out._origin = self._path, self._origin
        return out

    @property
    def path(self) -> Path | None:
        """The file this recipe was read from (None when built in code or from a snapshot)."""
        return self._path

    @property
    def origin(self) -> str | None:
        """ "project", "user" or "bundled" when found through the cascade."""
        return self._origin

    def notes(self) -> list[str]:
        """What a valid recipe does that its author may not expect (``recipes validate`` prints them)."""
        out = []
        if self.engine in RESPOND_ENGINES and "respond" not in self.tool_names():
            out.append(
                "it has no `respond` tool, so the engine takes the legacy path: the model's plain "
                "text is the reply, and the respond rules (no-tool-call and data-relay corrections) "
                "do not apply; add `respond` to its tools to use them"
            )
        return out

    def tool_names(self) -> list[str]:
        """(allowed or the engine's default) + add - remove, in order, without duplicates."""
        base = (
            self.tools.allowed
            if self.tools.allowed is not None
            else list(ENGINE_DEFAULT_TOOLS.get(self.engine, CHAT_DEFAULT_TOOLS))
        )
        removed = set(self.tools.remove)
        out: list[str] = []
        for name in [*base, *self.tools.add]:
            if name not in removed and name not in out:
                out.append(name)
        return out


@dataclass(frozen=True)
class RecipeInfo:
    name: str
    origin: str  # "project" | "user" | "bundled"
    path: Path
    shadowed: bool  # a scope earlier in the cascade has a recipe of the same name
    description: str = ""
    internal: bool = False  # Recipe.internal: a part of another recipe


# --------------------------------------------------------------------------- errors


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _loc_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the last key of ``loc`` (for listing the known keys)."""
    model: type[BaseModel] | None = Recipe
    for part in loc:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    return model


def describe_error(error: dict[str, Any]) -> tuple[str, str]:
    """(where, what) of one pydantic error of a recipe file, worded for the person (Benjy's config too)."""
    loc = tuple(error["loc"])
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        owner = _model_at(loc[:-1])
        known = list(owner.model_fields) if owner else []
        key = str(loc[-1])
        message = "unknown key" + (f" (known: {', '.join(known)}){did_you_mean(key, known)}" if known else "")
    elif error["type"] == "value_error":
        message = message.removeprefix("Value error, ")
    elif error["type"] == "missing":
        message = "required key is missing"
    return _loc_text(loc), message


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """The first ``limit`` problems of a recipe validation, on one line ("key 'x': why; ...")."""
    parts = [f"key '{loc}': {msg}" for loc, msg in map(describe_error, exc.errors()[:limit])]
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _recipe_error(path: Path, exc: ValidationError) -> RecipeError:
    lines = [f"{_display(path)}: key '{loc}': {msg}" for loc, msg in map(describe_error, exc.errors())]
    return RecipeError(
        "\n".join(lines),
        hint=f"fix {_display(path)}; `vance recipes validate {path}` checks it again",
    )


# --------------------------------------------------------------------------- loading


# A recipe is copied into every process it starts: bound what one file may expand to. YAML
# aliases let a few hundred bytes stand for billions of values ("billion laughs"); PyYAML shares
# them in memory, but the JSON snapshot in the process file would spell every one out.
MAX_RECIPE_BYTES = 256 * 1024
MAX_RECIPE_VALUES = 20_000  # every value counted each time an alias repeats it
MAX_RECIPE_CHARS = 1_000_000  # characters of all strings and keys, aliases expanded


def _check_expansion(data: Any, shown: str) -> None:
    """RecipeError when ``data`` spelled out (aliases expanded) exceeds the bounds above."""
    values = chars = 0
    stack = [data]
    while stack:
        item = stack.pop()
        values += 1
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        if values > MAX_RECIPE_VALUES or chars > MAX_RECIPE_CHARS:
            raise RecipeError(
                f"{shown}: the recipe expands to more than {MAX_RECIPE_VALUES:,} values or "
                f"{MAX_RECIPE_CHARS:,} characters (YAML aliases repeating a large value?)",
                hint="write the recipe out without nested aliases; recipes are small configuration files",
            )


def _safe_load(text: str) -> Any:
    import yaml  # only when the parsed text is not in the cache (store/parse_cache.py)

    return yaml.safe_load(text)


def _yaml_where(exc: Exception) -> str:
    """``: line L column C: what the parser expected`` in one line (PyYAML's text is 5-8 lines)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None:
        return ": " + " ".join(str(exc).split())
    what = f": {problem}" if problem else ""
    context = getattr(exc, "context", None)
    if context:
        what += f" ({context})"
    return f": line {mark.line + 1} column {mark.column + 1}{what}"


def _read_yaml(path: Path, home: Path | None) -> dict[str, Any]:
    shown = _display(path)
    try:
        size = path.stat().st_size
        if size > MAX_RECIPE_BYTES:
            raise RecipeError(
                f"recipe file {shown} is {size:,} bytes; a recipe may be at most {MAX_RECIPE_BYTES:,} bytes",
                hint="move long prompts into a shorter recipe; recipes are small configuration files",
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RecipeError(
            f"recipe file {shown} does not exist",
            hint="check the path or run `vance recipes list`",
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(
            f"cannot read recipe file {shown}: {exc}",
            hint="check the file's permissions and encoding (UTF-8)",
        ) from exc
    try:
        data = cached_parse("yaml", text, _safe_load, home=home, check=lambda value: _check_expansion(value, shown))
    except (error_of("yaml", "YAMLError"), ValueError) as exc:  # ValueError: an integer of 4,300+ digits
        raise RecipeError(f"{shown}: invalid YAML{_yaml_where(exc)}", hint=f"fix the YAML syntax in {shown}") from exc
    except RecursionError as exc:  # deeply nested flow collections
        raise RecipeError(f"{shown}: the YAML is nested too deeply", hint=f"flatten {shown}") from exc
    if data is None:
        raise RecipeError(
            f"{shown}: the recipe file is empty",
            hint="a recipe needs at least `engine:`",
        )
    if not isinstance(data, dict):
        raise RecipeError(
            f"{shown}: a recipe must be a mapping of keys, got {type(data).__name__}",
            hint="start the file with `engine: ford`",
        )
    return data


def validate_recipe_file(path: Path, home: Path | None = None) -> Recipe:
    """Read and validate one recipe file; its ``name`` must match the file name (default: the stem)."""
    path = Path(path)
    data = _read_yaml(path, home)
    stem = path.stem
    name = data.setdefault("name", stem)
    if isinstance(name, str) and name != stem:
        raise RecipeError(
            f"{_display(path)}: key 'name': {name!r} does not match the file name {path.name!r}",
            hint=f"rename the file to {name}{path.suffix} or set `name: {stem}`",
        )
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise _recipe_error(path, exc) from exc
    recipe._path = path
    return recipe


def search_path(scopes: Scopes) -> list[tuple[str, Path]]:
    """The recipe folders in lookup order: project, user, bundled; the project's only in a
    trusted folder (its recipes choose the model's tools; see config/trust.py)."""
    trusted = scopes.project is None or project_trusted(scopes)
    return [(origin, folder) for origin, folder in scopes.search_path("recipes") if origin != "project" or trusted]


def _find_in(folder: Path, name: str) -> Path | None:
    for suffix in RECIPE_SUFFIXES:
        candidate = folder / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def looks_like_path(name: str) -> bool:
    return "/" in name or name.endswith(RECIPE_SUFFIXES)


def load_recipe(name: str, scopes: Scopes) -> Recipe:
    """The recipe ``name`` from the first scope that has it (project, user, bundled).

    A name that looks like a path (contains "/" or ends in .yaml/.yml) is read as that file.
    """
    if looks_like_path(name):
        path = Path(name).expanduser()
        if not path.is_absolute():
            path = scopes.cwd / path
        _refuse_untrusted(path, scopes)
        return validate_recipe_file(path, scopes.user)
    searched = []
    for origin, folder in search_path(scopes):
        found = _find_in(folder, name)
        if found is not None:
            recipe = validate_recipe_file(found, scopes.user)
            recipe._origin = origin
            return recipe
        searched.append(str(folder))
    if scopes.project is not None and _find_in(scopes.project / "recipes", name):
        _refuse_untrusted(_find_in(scopes.project / "recipes", name), scopes)
    raise RecipeError(
        f"recipe {name!r} not found",
        hint=f"run `vance recipes list` to see the recipes; searched: {', '.join(searched)}",
    )


def _refuse_untrusted(path: Path, scopes: Scopes) -> None:
    """A recipe file inside an untrusted project's .vance/ is not used, even when named by path."""
    project = scopes.project
    if project is None or project_trusted(scopes):
        return
    if path.resolve().is_relative_to(project):
        raise RecipeError(
            f"recipe {_display(path)} is in {project}, which is not trusted (its recipes choose the model's tools)",
            hint=f"read it, then trust the folder with: {trust_check(scopes).command}",
        )


def _listing_of(path: Path, home: Path | None) -> tuple[str, bool]:
    """(the first line of its description, whether it is internal), read without validating:
    listing must work even when a recipe is broken."""
    try:
        if path.stat().st_size > MAX_RECIPE_BYTES:
            return "", False
        text = path.read_text(encoding="utf-8")
        data = cached_parse("yaml", text, _safe_load, home=home, check=lambda value: _check_expansion(value, str(path)))
    except (OSError, ValueError, RecipeError, error_of("yaml", "YAMLError"), RecursionError):
        return "", False
    if not isinstance(data, dict):
        return "", False
    description = data.get("description")
    first = description.strip().splitlines()[0] if isinstance(description, str) and description.strip() else ""
    return first, data.get("internal") is True


def list_recipes(scopes: Scopes) -> list[RecipeInfo]:
    """Every recipe file in every scope, by name then cascade order; shadowed ones are marked."""
    seen: set[str] = set()
    found: list[RecipeInfo] = []
    for origin, folder in search_path(scopes):
        if not folder.is_dir():
            continue
        names: dict[str, Path] = {}
        for suffix in RECIPE_SUFFIXES:
            for path in sorted(folder.glob(f"*{suffix}")):
                if path.is_file() and not path.name.startswith("."):
                    names.setdefault(path.stem, path)
        for name, path in sorted(names.items()):
            description, internal = _listing_of(path, scopes.user)
            found.append(RecipeInfo(name, origin, path, shadowed=name in seen, description=description, internal=internal))
        seen.update(names)
    order = {origin: index for index, (origin, _folder) in enumerate(search_path(scopes))}
    found.sort(key=lambda info: (info.name, order[info.origin]))
    return found
