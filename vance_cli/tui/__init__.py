"""The full-screen console (Textual): a chat app and a live view of Benjy runs.

Nothing here is imported by commands that do not open the app; ``run_tui`` (`vance chat`),
``run_watch`` (`vance benjy watch`) and ``run_benjy_live`` (`vance benjy run` on a terminal, the
demo) import Textual when called. Layout: ``app.py`` (the App), ``screens/`` (chat, run), ``widgets/``
(one class per file, a ``.tcss`` beside each), ``messages.py`` (what widgets and workers post),
``controller.py`` (the app's side of the runtime: locks, turns, switching processes),
``sources/`` (where a run screen's events come from: the RunSource protocol and its three kinds),
``status.py`` (a process as the status line shows it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.runtime.benjy_service import BenjyService, RunResult
    from vance_cli.runtime.session import ChatSession


def _gone(app) -> None:
    """The terminal went away under the app: end with SIGHUP's code, printing nothing (there is
    nowhere to print; the state is saved, and `--continue` / `resume` come back to it)."""
    if app.hung_up:
        from vance_cli.tui.app import HANGUP_EXIT

        raise SystemExit(HANGUP_EXIT)


def _failed(app, resume: str | None = None) -> None:
    """A stop signal ended the app (its turn saved): say so, exit 128+N; or the app ended on an
    error of its own (Textual printed it): the command fails too."""
    if app.stop_signal is not None:
        import signal

        from vance_cli.terminal import err

        try:
            err(f"stopped by {signal.Signals(app.stop_signal).name}; the state is saved"
                + (f" (continue with: {resume})" if resume else ""))
        except OSError:  # the terminal is gone (SIGHUP)
            pass
    if app.return_code:
        raise SystemExit(app.return_code)


def run_tui(session: ChatSession, *, pick: bool = False, **options: Any) -> None:
    """Open the chat app on ``session``'s process; returns when the person quits.

    ``pick``: the session has no process yet; the app opens on the resume picker (Esc leaves)."""
    from vance_cli.tui.app import VanceApp
    from vance_cli.tui.controller import ChatController

    controller = ChatController.from_session(session)
    if not pick:
        controller.open()  # takes the process lock: a held process fails here, as in line mode
    options["pick"] = pick
    app = VanceApp(controller=controller, **options)
    from vance_cli.tui import splash

    splash.hand_over()  # Textual owns the screen from here (and restores it on exit)
    try:
        app.run()
    finally:
        controller.close()
    _gone(app)
    from vance_cli.terminal import err

    resume = f"vance chat --resume {controller.process_id}" if controller.process_id else None
    if app.stop_signal is None:
        if app.error_text:
            err(app.error_text)
        if resume:
            err(f"bye · resume with: {resume}")
    _failed(app, resume)


def run_watch(pid: str, store=None) -> None:
    """Show a run live from its process files (``vance benjy watch ID``); closing never stops it."""
    from vance_cli.tui.app import VanceApp
    from vance_cli.tui.sources.files import ProcessFileSource

    if store is None:
        from vance_cli.config.context import load_context
        from vance_cli.store.files import ProcessStore

        scopes, _ = load_context()
        store = ProcessStore.for_scopes(scopes)
    app = VanceApp(run_source=ProcessFileSource(store, store.resolve_id(pid)))
    app.run()
    _gone(app)
    _failed(app)


def run_benjy_live(
    service: BenjyService, pid: str, *, answer: str | None = None, close_when_finished: bool = False
) -> RunResult:
    """Drive the Benjy run ``pid`` with ``service`` on the full screen until the person closes it.

    ``answer``: answer the pending question first (``vance benjy answer`` on a terminal). The
    screen shows the todo box, the journal, the status and a pending question with an answer box
    (answering continues the run); Ctrl+C stops at the next safe point (twice: at once).
    ``close_when_finished``: close by itself when the run is DONE or fails (a demo).

    Returns how the run stands: ``RunResult.stopped`` when Ctrl+C ended it (resumable). A
    VanceError the run ended with (a model that cannot be reached, ...) is raised after the screen
    is restored, as ``service.run`` would raise it.
    """
    import asyncio

    from vance_cli.tui.app import VanceApp
    from vance_cli.tui.sources.benjy import BenjyRunSource

    source = BenjyRunSource(service, pid, answer=answer)
    app = VanceApp(run_source=source, close_when_finished=close_when_finished)
    app.run()
    _gone(app)
    _failed(app, f"vance benjy resume {pid}")
    if source.error is not None and not isinstance(source.error, asyncio.CancelledError):
        raise source.error
    return source.outcome()
