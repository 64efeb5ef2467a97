"""SVG snapshots of the approval dialog (pytest-textual-snapshot; see tests/tui/test_snapshots.py).

Update after an intended change: pytest tests/tui/test_snapshot_approval.py --snapshot-update, then
look at the SVGs before committing them.
"""

from __future__ import annotations

from tests.tui.test_snapshots import FIXED_ID, SIZE, _chat_app, _steady
from vance_cli.tools.approval import ApprovalRequest, Preview
from vance_cli.tui.screens.approval_screen import ApprovalScreen

DIFF = """--- a/app.py
+++ b/app.py
@@ -1,3 +1,4 @@
 def main():
-    print("hello")
+    name = input("name? ")
+    print(f"hello {name}")
 main()
"""


def _with_dialog(request: ApprovalRequest):
    async def run_before(pilot) -> None:
        await _steady(pilot)
        pilot.app.push_screen(ApprovalScreen(request))
        await pilot.pause()
        await pilot.pause(0.1)

    return run_before


def test_approval_of_a_file_write_shows_the_diff(snap_compare):
    preview = Preview(title="write a file", subject="app.py",
                      fields=[("path", "app.py"), ("change", "replace (73 bytes written)")], diff=DIFF)
    request = ApprovalRequest(FIXED_ID, "c1", "file_write", preview, {})
    assert snap_compare(_chat_app(), terminal_size=SIZE, run_before=_with_dialog(request))


def test_approval_of_an_unconfined_command(snap_compare):
    preview = Preview(
        title="run a command",
        subject="pytest -q && rm -rf build/",
        fields=[("command", "pytest -q && rm -rf build/"), ("folder", "/home/ada/project"),
                ("sandbox", "NONE: no sandbox (bubblewrap is not installed): the command runs with your user's full rights")],
        sandboxed=False,
    )
    request = ApprovalRequest(FIXED_ID, "c2", "exec_run", preview, {},
                              notice="commands run WITHOUT a sandbox here (bubblewrap is not installed): a command can "
                                     "read and change anything your user can. Each command asks first (unless your rules or --yes allow it).")
    assert snap_compare(_chat_app(), terminal_size=SIZE, run_before=_with_dialog(request))
