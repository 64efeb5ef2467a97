"""`vance recipes list|show|validate`: the recipe cascade, one recipe, and fail-fast validation."""

from __future__ import annotations

import typer

recipes_app = typer.Typer(help="List, show and validate recipes (project → user → bundled).", no_args_is_help=True)


@recipes_app.command("list")
def list_(
    json_out: bool = typer.Option(False, "--json", help="One JSON object per line (every recipe, with 'internal')."),
    all_: bool = typer.Option(False, "--all", help="Also the internal recipes (Benjy's stages and workers)."),
) -> None:
    """List the recipes you can run (project → user → bundled); shadowed ones are marked."""
    import shutil
    import sys

    from vance_cli.config.context import load_context
    from vance_cli.config.recipes import list_recipes
    from vance_cli.terminal import emit_json, err, out

    scopes, _ = load_context()
    infos = list_recipes(scopes)
    if json_out:
        for info in infos:
            emit_json({"name": info.name, "origin": info.origin, "path": str(info.path), "shadowed": info.shadowed,
                       "internal": info.internal, "description": info.description})
        return
    shown = [i for i in infos if all_ or not i.internal]
    rows = [(i.name, i.origin + (", shadowed" if i.shadowed else ""), i.description or str(i.path)) for i in shown]
    name_w = max([16, *(len(r[0]) for r in rows)])
    origin_w = max([8, *(len(r[1]) for r in rows)])
    # on a terminal a description is cut to its width (one line per recipe); a pipe gets it whole
    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else None
    out(f"{'NAME':<{name_w}} {'ORIGIN':<{origin_w}} DESCRIPTION")
    for name, origin, description in rows:
        room = max(20, width - name_w - origin_w - 2) if width else len(description)
        cut = description if len(description) <= room else description[: room - 1] + "…"
        out(f"{name:<{name_w}} {origin:<{origin_w}} {cut}")
    hidden = len(infos) - len(shown)
    if hidden:
        err(f"{hidden} internal recipes (Benjy's stages and workers) not shown: vance recipes list --all")


@recipes_app.command("show")
def show(name: str = typer.Argument(..., help="Recipe name.")) -> None:
    """Print the recipe the cascade resolves for NAME, as YAML."""
    import yaml

    from vance_cli.config.context import load_context
    from vance_cli.config.recipes import load_recipe
    from vance_cli.terminal import out

    scopes, _ = load_context()
    recipe = load_recipe(name, scopes)
    out(yaml.safe_dump(recipe.model_dump(mode="json"), sort_keys=False, allow_unicode=True).rstrip())
    out(f"# tools: {', '.join(recipe.tool_names())}")
    for note in recipe.notes():
        out(f"# note: {note}")


@recipes_app.command("validate")
def validate(targets: list[str] | None = typer.Argument(None, help="Recipe files or names; none = every recipe in the cascade.")) -> None:
    """Validate recipes fail-fast; exit 1 when any is invalid."""
    from pathlib import Path

    from vance_cli.config.context import load_context
    from vance_cli.config.recipes import list_recipes, load_recipe, validate_recipe_file
    from vance_cli.engines import validate_recipe
    from vance_cli.errors import VanceError
    from vance_cli.terminal import err, out

    scopes, _ = load_context()
    failures = 0
    items = targets or [str(i.path) for i in list_recipes(scopes) if not i.shadowed]
    for target in items:
        try:
            recipe = validate_recipe_file(Path(target)) if Path(target).is_file() else load_recipe(target, scopes)
            validate_recipe(recipe, scopes)  # engine params (Benjy: features, referenced recipes)
        except VanceError as exc:
            failures += 1
            err(exc.render())
        else:
            out(f"ok  {recipe.name} ({target})")
            for note in recipe.notes():
                err(f"note: {recipe.name}: {note}")
    if failures:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(recipes_app, name="recipes")
