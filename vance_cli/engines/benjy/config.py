"""Benjy's recipe params (spec §4): validated fail-fast, resolved into the run config, chain templates.

The same check runs at the first loop entry and in `vance recipes validate`: unknown feature
keys, unknown task types, a missing interpret or do recipe, a referenced recipe that does not
exist or does not fit its role are errors naming the key. At the first loop entry the resolved
config and every referenced recipe are snapshotted into the process (recipe snapshot semantics:
editing a recipe file never changes a running process).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vance_cli.config.recipes import Recipe, RecipeError, describe_error, load_recipe
from vance_cli.text import did_you_mean

if TYPE_CHECKING:
    from vance_cli.config.scopes import Scopes

TASK_TYPES = ("info", "coding", "planning", "analysis")
FEATURES = ("interpret", "route", "check", "evaluate", "reflect", "escalation")
CONTROLLER_STAGES = ("interpret", "route", "evaluate", "reflect")
_OFF = (False, None, "off", "false", "no")

# Happy-path successors of DO per taskType (§4); a disabled stage falls out.
CHAINS: dict[str, tuple[str, ...]] = {
    "info": ("DO", "CLOSE"),
    "coding": ("DO", "CHECK", "EVALUATE", "CLOSE"),
    "planning": ("DO", "EVALUATE", "CLOSE"),
    "analysis": ("DO", "EVALUATE", "CLOSE"),
}

DEFAULT_CHECK_TIMEOUT = 600.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeatureSpec(_Strict):
    recipe: str | None = None
    command: str | None = None
    timeout: float = Field(default=DEFAULT_CHECK_TIMEOUT, gt=0, le=600)  # exec_run's cap


class CriteriaSource(_Strict):
    ref: str = Field(min_length=1)


class WorkTarget(_Strict):
    kind: Literal["WORK"] = "WORK"
    targetName: str | None = None


class BenjyParams(_Strict):
    doRecipe: str = Field(min_length=1)
    taskTypes: list[str] = Field(default_factory=lambda: list(TASK_TYPES), min_length=1)
    features: dict[str, FeatureSpec | None] = Field(default_factory=dict)
    criteriaSources: list[CriteriaSource] = Field(default_factory=list)
    maxStagnation: int = Field(default=15, ge=1)
    maxReflectNo: int = Field(default=3, ge=1)
    maxItemAttempts: int = Field(default=3, ge=1)
    maxWallclockMinutes: float = Field(default=30, gt=0)
    maxTokens: int = Field(default=2_000_000, ge=1)
    maxToolCalls: int = Field(default=15, ge=0)  # 0: the doer recipe's own maxToolIterations
    maxInitialItems: int = 5  # < 1: no cap
    workTarget: WorkTarget = Field(default_factory=WorkTarget)

    @field_validator("taskTypes")
    @classmethod
    def _known_task_types(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in TASK_TYPES:
                raise ValueError(f"unknown task type {name!r} (known: {', '.join(TASK_TYPES)}){did_you_mean(name, TASK_TYPES)}")
        return value

    @field_validator("features", mode="before")
    @classmethod
    def _features(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("must be a mapping of feature name → settings (or off)")
        out: dict[str, Any] = {}
        for key, spec in value.items():
            if key not in FEATURES:
                raise ValueError(f"unknown feature {key!r} (known: {', '.join(FEATURES)}){did_you_mean(str(key), FEATURES)}")
            if spec is True:
                spec = {}
            elif isinstance(spec, str) and spec.strip().lower() in _OFF or spec in _OFF:
                spec = None
            out[key] = spec
        return out

    def enabled(self, feature: str) -> bool:
        return self.features.get(feature) is not None


class RunConfig(_Strict):
    """The resolved config of one run, snapshotted into benjyState.config at the first loop entry."""

    params: BenjyParams
    stages: dict[str, str | None]  # interpret/route/evaluate/reflect/escalation → recipe name or None
    checkCommand: str | None = None
    checkTimeout: float = DEFAULT_CHECK_TIMEOUT
    allowExec: bool = False
    criteriaFiles: list[str] = Field(default_factory=list)

    def chain(self, task_type: str | None) -> tuple[str, ...]:
        """The chain template of ``task_type`` without its disabled stages."""
        return chain_for(task_type, check=self.checkCommand is not None, evaluate=self.stages.get("evaluate") is not None)


def chain_for(task_type: str | None, *, check: bool, evaluate: bool) -> tuple[str, ...]:
    """The stages after DO: the task type's template, disabled stages out.

    The person's check is ground truth whatever task type the interpret stage picked: with a
    check command every chain checks each item right after its worker (a task type without a
    CHECK stage does not switch the check off).
    """
    chain = CHAINS.get(task_type or "info", CHAINS["info"])
    if check and "CHECK" not in chain:
        chain = (chain[0], "CHECK", *chain[1:])
    return tuple(s for s in chain if (s != "CHECK" or check) and (s != "EVALUATE" or evaluate))


# --- validation -----------------------------------------------------------------------------------


def _where(recipe: Recipe) -> str:
    return str(recipe.path) if recipe.path else f"recipe {recipe.name}"


def parse_params(recipe: Recipe) -> BenjyParams:
    try:
        return BenjyParams.model_validate(recipe.params)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            loc, msg = describe_error(error)
            if error["type"] == "extra_forbidden":
                known = ", ".join(BenjyParams.model_fields) if len(error["loc"]) == 1 else ""
                msg = "unknown key" + (f" (known: {known}){did_you_mean(str(error['loc'][-1]), list(BenjyParams.model_fields))}" if known else "")
            lines.append(f"{_where(recipe)}: key 'params.{loc}': {msg}")
        raise RecipeError("\n".join(lines), hint=f"fix the params of {_where(recipe)}; `vance recipes validate {recipe.name}` checks it again") from exc


def _load_ref(recipe: Recipe, key: str, name: str, scopes: Scopes) -> Recipe:
    try:
        return load_recipe(name, scopes)
    except RecipeError as exc:
        raise RecipeError(
            f"{_where(recipe)}: key 'params.{key}': {exc.message}",
            hint=exc.hint or f"fix params.{key} in {_where(recipe)}",
        ) from exc


def _fail(recipe: Recipe, key: str, problem: str, hint: str) -> RecipeError:
    return RecipeError(f"{_where(recipe)}: key 'params.{key}': {problem}", hint=hint)


def resolve(recipe: Recipe, scopes: Scopes) -> tuple[BenjyParams, dict[str, Recipe]]:
    """Validate ``recipe``'s params and load every recipe they name (keyed by recipe name)."""
    params = parse_params(recipe)
    refs: dict[str, Recipe] = {}
    interpret = params.features.get("interpret")
    if interpret is None or not interpret.recipe:
        raise _fail(recipe, "features.interpret", "the interpret feature is required and needs a recipe",
                    "add `interpret: { recipe: benjy-interpret }` under params.features")
    doer = _load_ref(recipe, "doRecipe", params.doRecipe, scopes)
    if doer.engine != "ford" or "respond" not in doer.tool_names():
        raise _fail(recipe, "doRecipe", f"recipe {doer.name!r} cannot be a doer: it needs engine ford and the respond tool",
                    "point doRecipe at a Ford recipe whose tools include respond (e.g. benjy-do-coding)")
    refs[doer.name] = doer
    for feature in ("interpret", "route", "evaluate", "reflect", "escalation"):
        spec = params.features.get(feature)
        if spec is None:
            continue
        if not spec.recipe:
            raise _fail(recipe, f"features.{feature}", "needs a recipe", f"set features.{feature}.recipe, or turn it off with `{feature}: off`")
        if spec.command is not None:
            raise _fail(recipe, f"features.{feature}.command", "only the check feature takes a command", f"remove features.{feature}.command")
        ref = _load_ref(recipe, f"features.{feature}.recipe", spec.recipe, scopes)
        if feature == "escalation" and (ref.engine != "ford" or "respond" not in ref.tool_names()):
            raise _fail(recipe, "features.escalation.recipe", f"recipe {ref.name!r} cannot take over an item: it needs engine ford and the respond tool",
                        "point it at a Ford recipe with respond (e.g. coding)")
        refs[ref.name] = ref
    check = params.features.get("check")
    if check is not None and check.recipe is not None:
        raise _fail(recipe, "features.check.recipe", "the check feature runs a command, not a recipe", "use features.check.command")
    return params, refs


def validate_benjy_recipe(recipe: Recipe, scopes: Scopes) -> None:
    """`vance recipes validate` and the first loop entry: raise RecipeError on the first problem."""
    resolve(recipe, scopes)


def build_run_config(
    recipe: Recipe,
    scopes: Scopes,
    *,
    check: str | None = None,
    allow_exec: bool = False,
    criteria_files: list[str] | None = None,
) -> tuple[RunConfig, dict[str, dict[str, Any]]]:
    """The run config and the snapshots of every referenced recipe (name → recipe dict)."""
    return run_config(*resolve(recipe, scopes), check=check, allow_exec=allow_exec, criteria_files=criteria_files)


def run_config(
    params: BenjyParams,
    refs: dict[str, Recipe],
    *,
    check: str | None = None,
    allow_exec: bool = False,
    criteria_files: list[str] | None = None,
) -> tuple[RunConfig, dict[str, dict[str, Any]]]:
    """``build_run_config`` for params and references ``resolve`` gave already."""
    stages: dict[str, str | None] = {}
    for feature in ("interpret", "route", "evaluate", "reflect", "escalation"):
        spec = params.features.get(feature)
        stages[feature] = spec.recipe if spec is not None else None
    check_spec = params.features.get("check")
    command = check if check is not None else (check_spec.command if check_spec is not None else None)
    if check is not None and not check.strip():
        command = None
    cfg = RunConfig(
        params=params,
        stages=stages,
        checkCommand=(command.strip() or None) if command else None,
        checkTimeout=check_spec.timeout if check_spec is not None else DEFAULT_CHECK_TIMEOUT,
        allowExec=allow_exec,
        criteriaFiles=list(criteria_files or []),
    )
    snapshots = {name: ref.model_dump(mode="json") for name, ref in refs.items()}
    return cfg, snapshots


def resolve_criteria(recipe: Any, options: dict[str, Any], workspace: Path) -> list[str]:
    """criteriaSources of the recipe (relative to the workspace) plus --criteria files; all must exist."""
    out: list[str] = []
    for source in (recipe.params or {}).get("criteriaSources") or []:
        ref = source.get("ref") if isinstance(source, dict) else None
        if not ref:
            continue
        path = (workspace / ref) if not Path(ref).is_absolute() else Path(ref)
        if not path.is_file():
            raise RecipeError(f"criteria source {ref!r} not found (looked in {path})", hint="create the file or fix params.criteriaSources")
        out.append(str(path))
    for ref in options.get("criteriaFiles") or []:
        if not Path(ref).is_file():
            raise RecipeError(f"criteria file {ref} not found", hint="check the --criteria path")
        out.append(str(ref))
    return out
