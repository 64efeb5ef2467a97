"""`vance chat`: one headless turn (-p), a line REPL (--plain), or the full-screen app (a terminal)."""

from __future__ import annotations

import sys

import typer

# `--resume` given without an id (last, or before another option) becomes `--resume=PICK`: the
# picker. A NUL byte cannot come from a real command line, so no id is mistaken for it.
PICK = "\x00pick"
_TAKES_VALUE = {"-p", "--prompt", "--recipe", "-m", "--model", "--resume", "-r", "--allow"}
_RESUME = ("--resume", "-r")


def resume_argv(args: list[str]) -> list[str]:
    """``args`` of `vance chat ...` with a bare ``--resume`` marked as the picker's."""
    out: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            out += [arg, *rest]
            break
        nxt = None
        if arg in _TAKES_VALUE:
            nxt = next(rest, None)
            if arg in _RESUME and (nxt is None or (nxt.startswith("-") and nxt != "-")):
                out.append(f"--resume={PICK}")
                if nxt is not None:
                    out.append(nxt)
                    # the option after it may take a value of its own
                    if nxt in _TAKES_VALUE - set(_RESUME):
                        value = next(rest, None)
                        if value is not None:
                            out.append(value)
                continue
        out.append(arg)
        if nxt is not None:
            out.append(nxt)
    return out


def register(app: typer.Typer) -> None:
    @app.command()
    def chat(
        prompt: str | None = typer.Option(None, "-p", "--prompt", help="Run one headless turn with TEXT ('-' reads stdin); the respond message goes to stdout."),
        recipe: str = typer.Option("arthur", "--recipe", help="Recipe name (project → user → bundled)."),
        model: str | None = typer.Option(None, "--model", "-m", help="litellm model string or alias (default:fast ...); overrides the recipe."),
        resume: str | None = typer.Option(None, "--resume", "-r", help="Continue the chat with this id (or unique prefix); without an id: pick one of this folder's chats."),
        continue_: bool = typer.Option(False, "--continue", "-c", help="Continue this folder's most recent chat."),
        all_folders: bool = typer.Option(False, "--all", help="With --continue or a bare --resume: the chats of every folder, not only this one."),
        plain: bool = typer.Option(False, "--plain", help="Line-mode REPL instead of the full-screen app."),
        json_out: bool = typer.Option(False, "--json", help="Events as JSON lines on stdout."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
        allow: list[str] = typer.Option([], "--allow", help="Allow TOOL or 'TOOL:PATTERN' calls without asking (repeatable), e.g. --allow 'exec_run:pytest *'."),
        yes: bool = typer.Option(False, "--yes", "-y", help="Allow every tool call without asking (scripts; deny rules still apply)."),
    ) -> None:
        """Chat with an engine (Arthur by default)."""
        from vance_cli.cli.common import read_stdin_text, require_text
        from vance_cli.errors import UsageError

        pick = resume == PICK
        if pick:
            resume = None
            if continue_:
                raise UsageError("--resume and --continue exclude each other", hint="pass one of them")
        # Every check on the arguments comes before a process file exists: bad input creates nothing.
        for what, value in (("--recipe", recipe), ("--model", model), ("--resume", resume)):
            if value is not None:
                require_text(value, what)
        if model is not None and not model.strip():
            raise UsageError("--model is empty", hint="pass a model string or alias (e.g. default:fast), or leave --model out for the configured default")
        if plain and prompt is not None:
            raise UsageError("--plain and -p exclude each other", hint="-p runs one headless turn and exits; --plain starts the line-mode chat")
        if prompt == "-":
            prompt = read_stdin_text()
        elif prompt is not None:
            require_text(prompt, "the prompt")
        if prompt is not None and not prompt.strip():
            raise UsageError("the prompt is empty", hint='pass text with -p "..." or pipe it with -p -')
        # The app needs a terminal on both ends; --json and -p are for scripts.
        full_screen = prompt is None and not plain and not json_out and sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
        if pick:
            from vance_cli.cli.session import check_pickable

            headless = None if full_screen else (
                "-p runs without a screen" if prompt is not None else "--plain has no picker" if plain
                else "--json is for scripts" if json_out else "this is not a terminal")
            try:
                check_pickable(all_folders=all_folders, headless=headless)
            except BaseException:
                if "vance_cli.tui.splash" in sys.modules:
                    sys.modules["vance_cli.tui.splash"].leave()
                raise
        if not full_screen and "vance_cli.tui.splash" in sys.modules:
            sys.modules["vance_cli.tui.splash"].leave()  # shown early for options that turned out not to open the app
        if full_screen:
            from vance_cli.tui import splash

            # The app's first frame, before the session (settings, recipe, pydantic, the process
            # file) and Textual are loaded: everything below runs with the frame on screen.
            splash.show(splash.status_line(recipe=recipe, model=model, resume=resume, continue_last=continue_))
        try:
            from vance_cli.cli.session import LineChat

            session = LineChat.open(
                recipe=recipe, model=model, resume=resume, continue_last=continue_, all_folders=all_folders,
                json_out=json_out, quiet=quiet,
                printer=not full_screen, allow=allow, yes=yes, pick=pick, first=prompt,
            )
        except BaseException as exc:
            if full_screen:
                splash.leave()  # an error before the app runs: back to the normal screen to print it
            _maybe_a_recipe(exc, resume)
            raise
        if prompt is not None:
            if session.one_turn(prompt):
                raise typer.Exit(10)  # a tool call waits for an approval: not run, the turn kept
            return
        if full_screen:
            from vance_cli.tui import run_tui

            try:
                run_tui(session.chat, pick=pick, pick_all_folders=all_folders)
            finally:
                splash.leave()
            return
        session.repl()


def _maybe_a_recipe(exc: BaseException, resume: str | None) -> None:
    """`-r NAME` is --resume (as in Claude Code), not --recipe: when NAME is no process but a
    recipe, the error says how to start a chat with it."""
    from vance_cli.errors import ProcessNotFound

    if not isinstance(exc, ProcessNotFound) or not resume:
        return
    from vance_cli.config.context import load_context
    from vance_cli.config.recipes import list_recipes

    if any(info.name == resume for info in list_recipes(load_context()[0])):
        exc.add_note(f"{resume!r} is a recipe: -r is --resume (as in Claude Code); start a chat with the recipe "
                     f"with: vance chat --recipe {resume}")
