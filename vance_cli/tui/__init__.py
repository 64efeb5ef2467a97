"""The full-screen console (Textual): a chat app and a live view of Benjy runs.

Nothing here is imported by commands that do not open the app; ``run_tui`` and ``run_watch``
import Textual when called. Layout: ``app.py`` (the App), ``screens/`` (chat, run), ``widgets/``
(one class per file, a ``.tcss`` beside each), ``messages.py`` (what widgets and workers post),
``controller.py`` (the app's side of the runtime: locks, turns, switching processes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vance_cli.cli.session import ChatSession


def run_tui(session: ChatSession, **options: Any) -> None:
    """Open the chat app on ``session``'s process; returns when the person quits."""
    from vance_cli.tui.app import VanceApp
    from vance_cli.tui.controller import ChatController

    controller = ChatController.from_session(session)
    controller.open()  # takes the process lock: a held process fails here, as in line mode
    app = VanceApp(controller=controller, **options)
    from vance_cli.tui import splash

    splash.hand_over()  # Textual owns the screen from here (and restores it on exit)
    try:
        app.run()
    finally:
        controller.close()
    from vance_cli.cli.common import err

    if app.error_text:
        err(app.error_text)
    if controller.process_id:
        err(f"bye · resume with: vance chat --resume {controller.process_id}")


def run_watch(pid: str, store=None) -> None:
    """Show a run live from its process files (``vance benjy watch ID``); closing never stops it.

    The hook for the Benjy CLI (issue 8): ``vance benjy watch ID`` calls this; ``vance benjy run``
    on a terminal passes its own in-process RunSource to ``VanceApp(run_source=...)`` instead.
    """
    from vance_cli.tui.app import VanceApp
    from vance_cli.tui.run_source import ProcessFileSource

    if store is None:
        from vance_cli.cli.common import load_context
        from vance_cli.store.files import ProcessStore

        scopes, _ = load_context()
        store = ProcessStore.for_scopes(scopes)
    VanceApp(run_source=ProcessFileSource(store, store.resolve_id(pid))).run()
