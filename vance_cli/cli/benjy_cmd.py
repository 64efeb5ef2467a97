"""`vance benjy run|resume|answer|status|watch|batch`: Benjy runs. The run loop is runtime.benjy_service.BenjyService;
`batch` (many runs from a goals file, here or on Ray) is runtime.benjy_batch.

On a terminal (stdin and stdout a tty, no --json, no --plain) run/resume/answer show the run live
in the console's run screen (vance_cli.tui.run_benjy_live); otherwise progress goes to stderr and
the report to stdout. `watch` shows a run that another vance drives, from its files.

Exit codes: 0 DONE, 10 BLOCKED (a question is pending: the id, the question and the answer
command are printed), 1 failed or error, 130 interrupted or stopped (resumable).
"""

from __future__ import annotations

import sys

import typer

EXIT_BLOCKED = 10
EXIT_INTERRUPTED = 130

benjy_app = typer.Typer(
    help="Benjy: the engine-agency loop for small models. Exit codes: 0 DONE, 10 BLOCKED, 1 failed, 130 interrupted.",
    no_args_is_help=True,
)


def _service(json_out: bool):
    from vance_cli.cli.common import model_factory
    from vance_cli.config.context import load_context
    from vance_cli.runtime.benjy_service import BenjyService
    from vance_cli.runtime.runner import Runtime

    scopes, settings = load_context()
    return BenjyService(Runtime(scopes, settings, model_factory=model_factory))


def _subscribe(service, pid: str, json_out: bool) -> None:
    from vance_cli.output.printers import BenjyPrinter, JsonLinesPrinter

    service.runtime.bus.subscribe(JsonLinesPrinter() if json_out else BenjyPrinter(pid))


def _finish(result, json_out: bool) -> int:
    """The exit code of a run's outcome; BLOCKED and failures explain themselves on stderr."""
    from vance_cli.store.process import Status
    from vance_cli.terminal import emit_json, err
    from vance_cli.text import for_terminal

    process = result.process
    if process.status == Status.DONE:
        if result.workspace_removed and not json_out:
            err(f"the temporary workspace {result.workspace_removed} was removed at DONE (run with --keep-workspace to keep it)")
        return 0
    if process.status == Status.BLOCKED:
        report = result.report or ""
        if json_out:
            emit_json(result.to_dict())
        else:
            print(for_terminal(report.rstrip("\n")), flush=True)  # stdout, as DONE's report
            if result.question:
                err(for_terminal(f"\nBLOCKED · process {process.id} asks:\n{result.question}"))
            else:
                err(for_terminal(f"\nBLOCKED · process {process.id}: {result.diagnosis or process.status_reason}"))
            err(f'answer with: vance benjy answer {process.id} "YOUR ANSWER"')
        return EXIT_BLOCKED
    if not json_out:
        err(for_terminal(f"\n{process.status.value} · process {process.id}: {process.status_reason or ''}"))
        err(f"continue with: vance benjy resume {process.id}")
    return 1


def _full_screen(json_out: bool, plain: bool) -> bool:
    return not json_out and not plain and sys.stdin.isatty() and sys.stdout.isatty()


def _live(service, pid: str, answer: str | None = None) -> int:
    """The run on the full screen; when it closes, the same outcome lines and exit code as plain."""
    from vance_cli.errors import ModelError
    from vance_cli.store.process import Status
    from vance_cli.terminal import err
    from vance_cli.text import for_terminal
    from vance_cli.tui import run_benjy_live

    try:
        result = run_benjy_live(service, pid, answer=answer)
    except ModelError as exc:
        exc.add_note(f"the run {pid} is saved; continue it with: vance benjy resume {pid}")
        raise
    if result.stopped:
        err(f"stopped; the run is saved ({result.status.value}). Continue with: vance benjy resume {pid}")
        return EXIT_INTERRUPTED
    if result.status == Status.DONE and result.synthesis:
        print(for_terminal(result.synthesis.rstrip("\n")))  # the report stays in the scrollback
    return _finish(result, json_out=False)


def _drive(service, pid: str, coro_fn, json_out: bool) -> int:
    """Run ``coro_fn()`` (the service call) with Ctrl+C / SIGTERM mapped to a resumable stop."""
    import asyncio

    from vance_cli.errors import Interrupted, ModelError
    from vance_cli.runtime.interrupt import stop_on_signals
    from vance_cli.terminal import err

    try:
        result = asyncio.run(stop_on_signals(coro_fn()))
    except KeyboardInterrupt:
        err(f"interrupted; the run is saved. Continue with: vance benjy resume {pid}")
        raise SystemExit(EXIT_INTERRUPTED) from None
    except Interrupted as exc:
        exc.hint = f"continue with: vance benjy resume {pid}"
        raise
    except ModelError as exc:
        exc.add_note(f"the run {pid} is saved; continue it with: vance benjy resume {pid}")
        raise
    return _finish(result, json_out)


@benjy_app.command("run")
def run_cmd(
    goal: str = typer.Argument(..., help="The goal, in words ('-' reads it from stdin)."),
    recipe: str = typer.Option("benjy-coding", "--recipe", "-r", help="A Benjy recipe: benjy-coding, benjy-research, benjy-batch or your own."),
    workspace: str | None = typer.Option(None, "--workspace", "-w", help="The folder the workers and the check work in (default: a new temporary folder)."),
    target: str | None = typer.Option(None, "--target", help="A named workspace: workspaces/NAME of the scope (created if missing)."),
    check: str | None = typer.Option(None, "--check", help="The check command, run in the workspace after each item (exit 0 = passed)."),
    criteria: str | None = typer.Option(None, "--criteria", help="A file of acceptance criteria for the interpret stage."),
    allow_exec: bool = typer.Option(False, "--allow-exec", help="Give the workers exec_run (commands in the workspace)."),
    model: str | None = typer.Option(None, "--model", "-m", help="One model (or alias) for every call of this run."),
    keep_workspace: bool = typer.Option(False, "--keep-workspace", help="Keep the temporary workspace after DONE (it is removed otherwise)."),
    json_out: bool = typer.Option(False, "--json", help="Events as JSON lines on stdout."),
    plain: bool = typer.Option(False, "--plain", help="Progress lines on stderr even on a terminal (no full-screen view)."),
) -> None:
    """Run GOAL to DONE: live on a terminal; else progress on stderr, the final report on stdout."""
    from vance_cli.cli.common import read_stdin_text, require_text
    from vance_cli.terminal import err

    goal = read_stdin_text() if goal == "-" else require_text(goal, "the goal")
    for what, value in (("--recipe", recipe), ("--check", check), ("--model", model)):
        if value is not None:
            require_text(value, what)
    service = _service(json_out)
    # the run stays locked from its creation until the run below drives it
    with service.start(
        goal, recipe=recipe, workspace=workspace, target=target, check=check, criteria=criteria, allow_exec=allow_exec,
        model=model, keep_workspace=keep_workspace,
    ) as started:
        process = started.process
        if not json_out:
            err(f"benjy run {process.id} · recipe {process.recipe_name} · model {process.model}")
            if started.temporary:
                kept = "kept after DONE" if keep_workspace else "removed at DONE; --keep-workspace keeps it"
                err(f"workspace {process.workspace} (a new temporary folder, {kept})")
            else:
                err(f"workspace {process.workspace}")
        if _full_screen(json_out, plain):
            raise typer.Exit(_live(service, process.id))
        _subscribe(service, process.id, json_out)
        raise typer.Exit(_drive(service, process.id, lambda: service.run(process.id), json_out))


@benjy_app.command("resume")
def resume_cmd(
    pid: str = typer.Argument(..., metavar="ID", help="The run's process id (or a unique prefix)."),
    json_out: bool = typer.Option(False, "--json", help="Events as JSON lines on stdout."),
    plain: bool = typer.Option(False, "--plain", help="Progress lines on stderr even on a terminal."),
) -> None:
    """Continue a run where it stopped (after Ctrl+C, a crash, or a failure)."""
    from vance_cli.runtime.benjy_service import RunResult
    from vance_cli.terminal import emit_json, err
    from vance_cli.text import for_terminal

    service = _service(json_out)
    pid = service.runtime.store.resolve_id(pid)
    if service.runtime.store.load(pid).status.value == "DONE":  # finished (perhaps killed right after)
        import asyncio

        done = asyncio.run(service.run(pid)).process  # closes a worker a crash left unclosed
        report = RunResult(done).synthesis or ""
        if json_out:
            emit_json({"type": "message", "process_id": pid, "text": report, "awaiting_user_input": False})
        else:
            err(f"process {pid} is already DONE; its report:")
            typer.echo(for_terminal(report))
        raise typer.Exit(0)
    if _full_screen(json_out, plain):
        raise typer.Exit(_live(service, pid))
    _subscribe(service, pid, json_out)
    raise typer.Exit(_drive(service, pid, lambda: service.run(pid), json_out))


@benjy_app.command("answer")
def answer_cmd(
    pid: str = typer.Argument(..., metavar="ID", help="The run's process id (or a unique prefix)."),
    text: str = typer.Argument(..., help="The answer ('-' reads it from stdin); \"stop\" leaves the run stopped."),
    json_out: bool = typer.Option(False, "--json", help="Events as JSON lines on stdout."),
    plain: bool = typer.Option(False, "--plain", help="Progress lines on stderr even on a terminal."),
) -> None:
    """Answer the run's pending question (or send it a message) and continue it."""
    from vance_cli.cli.common import read_stdin_text, require_text
    from vance_cli.errors import UsageError

    reads_stdin = text == "-"
    text = read_stdin_text() if reads_stdin else require_text(text, "the answer")
    if not text.strip():
        raise UsageError("the answer is empty", hint='pass the answer as text: vance benjy answer ID "yes, go on"')
    service = _service(json_out)
    pid = service.runtime.store.resolve_id(pid)
    if not reads_stdin and _full_screen(json_out, plain):
        raise typer.Exit(_live(service, pid, answer=text))
    _subscribe(service, pid, json_out)
    raise typer.Exit(_drive(service, pid, lambda: service.answer(pid, text), json_out))


@benjy_app.command("status")
def status_cmd(
    pid: str = typer.Argument(..., metavar="ID", help="The run's process id (or a unique prefix)."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object."),
) -> None:
    """Show a run: status, todos, counters, the pending question. Reads the files only."""
    from vance_cli.output.printers import todo_box
    from vance_cli.terminal import emit_json
    from vance_cli.text import for_terminal

    info = _service(json_out).status(pid)
    if json_out:
        emit_json(info)
        return
    c = info["counters"]
    lines = [
        f"process   {info['id']} · {info['status']}" + (f" — {info['reason']}" if info["reason"] else ""),
        f"goal      {info['goal'] or '(none yet)'}",
        f"type      {info['taskType'] or '(not interpreted yet)'}",
        f"workspace {info['workspace']}",
        "items     " + (", ".join(f"{n} {s}" for s, n in sorted(info["items"].items())) or "none yet"),
        f"queue     {' · '.join(info['queue'][:8]) or '—'}" + (f" +{len(info['queue']) - 8} more" if len(info["queue"]) > 8 else ""),
        f"counters  tasks {c['tasks']} · worker spawns {c['workerSpawns']} · checks {c['checks']} · stagnation {c['stagnation']} · reflect no {c['reflectNo']} · questions {c['questions']}",
        f"tokens    controller {c['controllerTokens']} (since the last grant {c['controllerTokens'] - c['grantBaseline']}) · workers {c['workerTokens']}",
    ]
    if info["inFlight"]:
        lines.append(f"worker    {info['inFlight']['child']} on item #{info['inFlight']['item']} (attempt {info['inFlight']['attempt']})")
    if info["todos"]:
        lines += todo_box(info["todos"], 20)
    if info["pendingQuestion"]:
        lines += ["", "question:", info["pendingQuestion"]["text"], f'answer with: vance benjy answer {info["id"]} "YOUR ANSWER"']
    elif info["diagnosis"]:
        lines += ["", "diagnosis:", info["diagnosis"]]
    for line in lines:
        typer.echo(for_terminal(line))


@benjy_app.command("watch")
def watch_cmd(
    pid: str = typer.Argument(..., metavar="ID", help="The run's process id (or a unique prefix)."),
) -> None:
    """Show a run live from its files (one started elsewhere too); closing never stops it."""
    from vance_cli.errors import UsageError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("vance benjy watch needs a terminal (stdin and stdout)",
                         hint=f"for scripts use: vance benjy status {pid} (or --json)")
    from vance_cli.tui import run_watch

    run_watch(pid)


def _batch_event(event: dict, json_out: bool) -> None:
    from vance_cli.terminal import emit_json, err

    if json_out:
        emit_json(event)
        return
    kind = event["type"]
    if kind == "warning":
        err(f"warning: {event['text']}")
    elif kind == "run_created":
        err(f"{event['id']}: run {event['process_id']} · workspace {event['workspace']} ({event['kind']})")
    elif kind == "batch_started":
        jobs = f" · {event['jobs']} at a time" if event["jobs"] else ""
        err(f"benjy batch · {event['runs']} runs ({event['new']} new, {event['to_drive']} to drive) · engine {event['engine']}{jobs}")
        err(f"batch folder {event['folder']}")
    elif kind == "run_started":
        err(f"{event['id']}: started (process {event['process_id']})")
    elif kind == "run_finished":
        done = "DONE before" if event["skipped"] else event["status"]
        err(f"{event['id']}: {done} · attempts {event['attempts']} · tokens {event['tokens']}")


def _batch_table(rows) -> list[str]:
    """The summary: a row per run, then what each BLOCKED, BUSY, FAILED or STOPPED run needs."""
    width = max([2, *(len(r.id) for r in rows)])
    lines = [f"{'ID':<{width}}  {'STATUS':<8} {'ATTEMPTS':>8} {'TOKENS':>8}  PROCESS"]
    lines += [f"{r.id:<{width}}  {r.status:<8} {r.attempts:>8} {r.tokens:>8}  {r.process_id}" for r in rows]
    for r in rows:
        if r.status == "BLOCKED":
            lines += ["", f"{r.id} (process {r.process_id}) asks:" if r.question else f"{r.id} (process {r.process_id}) is BLOCKED: {r.reason or ''}"]
            if r.question:
                lines.append(r.question)
            lines.append(f'answer with: vance benjy answer {r.process_id} "YOUR ANSWER"')
        elif r.status == "BUSY":
            lines += ["", f"{r.id} (process {r.process_id}) is being driven by another vance: {r.reason or ''}".rstrip(),
                      f"watch it with: vance benjy watch {r.process_id} (rerun the batch when it is done)"]
        elif r.status in ("FAILED", "STOPPED"):
            lines += ["", f"{r.id} (process {r.process_id}) {r.status}: {r.reason or ''}".rstrip(),
                      f"continue with: vance benjy resume {r.process_id} (or rerun the batch)"]
    return lines


def _batch_exit(rows) -> int:
    """A batch that was not interrupted (an interrupt exits 128 + the signal): 1 if a run FAILED or
    stopped short of its end; else 10 if one is BLOCKED or BUSY (waiting for an answer or another
    vance: not a failure, but said); else 0."""
    from vance_cli.errors import EXIT_ERROR, EXIT_OK

    statuses = {r.status for r in rows}
    for status, code in (("FAILED", EXIT_ERROR), ("STOPPED", EXIT_ERROR), ("BLOCKED", EXIT_BLOCKED), ("BUSY", EXIT_BLOCKED)):
        if status in statuses:
            return code
    return EXIT_OK


def _can_ask() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _approve_batch(plan, yes: bool, goals: str) -> str:
    """Show everything the new runs will do (also with --yes) and ask once; who approved it."""
    from vance_cli.errors import UsageError, VanceError
    from vance_cli.terminal import err
    from vance_cli.text import for_terminal

    count = f"{len(plan.create)} new run{'s' if len(plan.create) != 1 else ''}"
    head = f"benjy batch {goals}: {count}, each in its own workspace; approved once for the whole batch:"
    err(for_terminal("\n".join([head, *plan.summary()])))
    if yes:
        err("approved with --yes")
        return "--yes (vance benjy batch)"
    if not _can_ask():
        raise UsageError(
            f"vance benjy batch needs your approval of its checks and tools ({count}), and nothing can ask here",
            hint=f"read the above, then pass --yes to approve it once for the whole batch: vance benjy batch {goals} --yes ...",
        )
    sys.stderr.write("approve them once for the whole batch? [y/N] > ")  # stderr: stdout may be --json's lines
    sys.stderr.flush()
    try:
        answer = input().strip().lower()
    except EOFError:
        answer = ""
    if answer not in ("y", "yes"):
        raise VanceError("not approved: no run was started", hint="rerun and answer y, or pass --yes")
    return "you (vance benjy batch, once for the batch)"


@benjy_app.command("batch")
def batch_cmd(
    goals: str = typer.Argument(..., metavar="GOALS", help='A JSONL file, one run per line: {"id", "goal", "check", "workspace", "recipe", "criteria", "allowExec", "model"}; only "goal" is needed.'),
    check: str | None = typer.Option(None, "--check", help="The check command of every run without its own (exit 0 = passed)."),
    workspace: str | None = typer.Option(None, "--workspace", "-w", help="The source folder of every run without its own: each run works in a git worktree of it (a git repository) or a copy."),
    recipe: str = typer.Option("benjy-coding", "--recipe", "-r", help="The Benjy recipe of every run without its own."),
    criteria: str | None = typer.Option(None, "--criteria", help="A file of acceptance criteria for every run without its own."),
    allow_exec: bool = typer.Option(False, "--allow-exec", help="Give every run's workers exec_run."),
    model: str | None = typer.Option(None, "--model", "-m", help="One model (or alias) for every call of every run without its own."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, max=64, help="Runs at a time (local default: the cores, at most 4; ray default: as many as the cluster takes)."),
    engine: str = typer.Option("local", "--engine", help="local (this process) or ray (Ray tasks; needs vance-cli[ray])."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="The Ray cluster (default: RAY_ADDRESS, else a new local instance)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Approve the checks and the workers' tools for the whole batch without asking."),
    json_out: bool = typer.Option(False, "--json", help="Batch events as JSON lines on stdout."),
) -> None:
    """Run every goal of GOALS (JSONL) as its own Benjy run; a rerun skips what is DONE and resumes the rest.

    Exit codes: 0 every run DONE, 10 none failed but some are BLOCKED (answer them) or BUSY, 1 a run failed or
    stopped short, 130 Ctrl+C, 143 SIGTERM.
    """
    import asyncio
    import contextlib
    from pathlib import Path

    from vance_cli.cli.common import model_factory, require_text
    from vance_cli.errors import Interrupted, UsageError
    from vance_cli.ray_cluster import BATCH_ENGINES, ray_session
    from vance_cli.runtime.benjy_batch import BenjyBatch, Defaults, criteria_file, read_goals, source_folder
    from vance_cli.runtime.interrupt import stop_on_signals
    from vance_cli.terminal import emit_json, err, out

    for what, value in (("--check", check), ("--recipe", recipe), ("--model", model)):
        if value is not None:
            require_text(value, what)
    if engine not in BATCH_ENGINES:
        raise UsageError(f"unknown engine {engine!r}", hint="pass --engine local or --engine ray")
    if ray_address is not None and engine != "ray":
        raise UsageError("--ray-address is for --engine ray", hint="add --engine ray, or drop --ray-address")
    service = _service(json_out)
    runtime = service.runtime
    cwd = runtime.scopes.cwd
    defaults = Defaults(check=check, source=source_folder(workspace, runtime) if workspace else None, recipe=recipe,
                        criteria=criteria_file(criteria, runtime) if criteria is not None else None,
                        allow_exec=allow_exec, model=model)
    path = (cwd / Path(goals).expanduser()).resolve()
    batch = BenjyBatch(runtime, path, read_goals(path, defaults, runtime), model_factory=model_factory,
                       on_event=lambda e: _batch_event(e, json_out))
    if engine == "ray":  # after the goals file's own errors, before anything is made: no Ray, nothing started
        from vance_cli.ray_cluster import import_ray

        import_ray()
    with batch.locked(), contextlib.ExitStack() as stack:
        plan = batch.plan()
        if plan.create and not yes and not _can_ask():
            _approve_batch(plan, yes, goals)  # shows what --yes would approve and refuses: nothing joined or made
        try:
            # Ray joined before the approval and before any run is made (a cluster out of reach
            # fails in seconds, leaves nothing behind and is not asked about)
            ray = stack.enter_context(ray_session(ray_address)) if engine == "ray" else None
            approved_by = _approve_batch(plan, yes, goals) if plan.create else None
            rows = asyncio.run(stop_on_signals(batch.run(plan, approved_by=approved_by, jobs=jobs, ray=ray)))
        except (Interrupted, KeyboardInterrupt) as exc:
            rows = [batch.rows[g.id] for g in batch.goals if g.id in batch.rows]
            if not json_out and rows:
                for line in _batch_table(rows):
                    out(line)
            # Ctrl+C 130, SIGTERM 143, SIGHUP 129 (128 + the signal, as every vance command)
            by = f" by {exc.signame}" if isinstance(exc, Interrupted) else ""
            err(f"interrupted{by}; every run is saved. Continue the batch with the same command: vance benjy batch {goals} ...")
            raise SystemExit(exc.exit_code if isinstance(exc, Interrupted) else EXIT_INTERRUPTED) from None
    code = _batch_exit(rows)
    if json_out:
        emit_json({"type": "batch_finished", "runs": [r.to_dict() for r in rows], "exit_code": code})
    else:
        for line in _batch_table(rows):
            out(line)
        err(f"workspaces: {batch.folder / 'runs'}")
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.add_typer(benjy_app, name="benjy")
