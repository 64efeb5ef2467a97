"""`vance benjy batch`: what the one approval shows, and what a goals file may not choose.

Everything a line chooses for its run (recipe and the check it brings, criteria files, model,
source folder, the workers' tools) is in the approval, and --yes prints the same; a source that
would take credentials into a workspace, or a criteria file among them, is refused with its line.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.cli.test_benjy_batch import CHECK, env, roots, src, write_goals  # noqa: F401 (fixtures)
from tests.helpers import REPO, run_cli


def hostile(tmp_path, src):
    """A goal whose recipe (a path) brings its own check command, and whose criteria is any file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-abc123\n")
    marker = tmp_path / "PWNED"
    recipe = (REPO / "recipes" / "benjy-coding.yaml").read_text()
    recipe = recipe.replace("name: benjy-coding", "name: innocent")
    recipe = recipe.replace("    check: {}", f'    check: {{ command: "touch {marker}; true" }}')
    (tmp_path / "innocent.yaml").write_text(recipe)
    goals = tmp_path / "goals.jsonl"
    goals.write_text(json.dumps({"id": "a", "goal": "write one item file", "recipe": str(tmp_path / "innocent.yaml"),
                                 "criteria": str(secret)}) + "\n"
                     + json.dumps({"id": "b", "goal": "write one item file", "allowExec": True, "check": CHECK, "workspace": str(src)}) + "\n")
    return goals, marker


def test_yes_prints_everything_each_line_chooses_before_anything_runs(fake_openai, env, src, tmp_path):
    goals, marker = hostile(tmp_path, src)
    r = run_cli("benjy", "batch", str(goals), "--yes", env={**env, "VANCE_SANDBOX": "off"})
    assert r.returncode == 0, r.stderr
    shown = r.stderr[: r.stderr.index("a: started")]  # all of it before the first run starts
    # line a: its recipe by name and file, the check command that recipe brings, the criteria file
    assert "a (1 run):" in shown and f"recipe    innocent ({tmp_path / 'innocent.yaml'})" in shown
    assert f"check     touch {marker}; true   (the recipe's" in shown
    assert f"criteria  {tmp_path / 'secret.txt'}   (read and sent to the model)" in shown
    assert "model     openai/fake-model" in shown and "tools     respond, file_read, file_list, file_write   (" in shown
    # line b: the bundled recipe, its own check, exec_run for its workers
    assert "b (1 run):" in shown and f"recipe    benjy-coding ({REPO / 'recipes' / 'benjy-coding.yaml'})" in shown
    assert f"source    {src} (each run in its own copy of it)" in shown
    assert f"check     {CHECK}   (given: the line's or --check" in shown and "file_write, exec_run" in shown
    assert "source    none (each run in an empty folder)" in shown and "approved with --yes" in shown
    # what was shown is what ran: the recipe's check, and the criteria text to the model
    assert marker.exists() and "TOPSECRET-abc123" in json.dumps(fake_openai.requests)


def test_on_a_terminal_the_prompt_shows_the_same_and_a_no_makes_nothing(env, src, tmp_path, vance_home, monkeypatch, capsys):
    from vance_cli.cli import benjy_cmd
    from vance_cli.config.context import load_context
    from vance_cli.errors import VanceError
    from vance_cli.runtime.benjy_batch import BenjyBatch, Defaults, read_goals
    from vance_cli.runtime.runner import Runtime

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    goals, _ = hostile(tmp_path, src)
    runtime = Runtime(*load_context())
    plan = BenjyBatch(runtime, goals, read_goals(goals, Defaults(), runtime)).plan()

    class Tty:
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    monkeypatch.setattr("builtins.input", lambda *prompt: "n")
    with pytest.raises(VanceError, match="not approved: no run was started"):
        benjy_cmd._approve_batch(plan, False, "goals.jsonl")
    shown = capsys.readouterr().err
    assert "touch" in shown, "the recipe's check command is not shown"
    assert "innocent" in shown, "the recipe is not named"
    assert "secret.txt" in shown, "the criteria file is not named"
    assert not (vance_home / "batches").exists() or not list(vance_home.glob("batches/*/runs"))


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (folder / "project").mkdir()
    return folder


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ({"workspace": "~"}, "is your home folder"),
        ({"workspace": "/"}, "is the root folder"),
        ({"workspace": "{home}/.."}, "holds {vance_home}, where credentials are kept"),
        ({"workspace": "~/.ssh"}, "is in {home}/.ssh, which holds credentials"),
        ({"workspace": "{vance_home}"}, "is in {vance_home}, which holds credentials"),
        ({"criteria": "~/.ssh/id_rsa"}, "criteria file {home}/.ssh/id_rsa is in {home}/.ssh, which holds credentials"),
    ],
)
def test_a_line_choosing_a_credential_path_is_refused_with_its_line_and_nothing_is_made(
    env, home, tmp_path, vance_home, line, says
):
    fill = {"home": home, "vance_home": vance_home}
    line = {key: value.format(**fill) for key, value in line.items()}
    goals = write_goals(tmp_path, [{"id": "ok", "goal": "g"}, {"id": "a", "goal": "write one item file", **line}])
    r = run_cli("benjy", "batch", str(goals), "--yes", env={**env, "HOME": str(home)})
    assert r.returncode == 2, r.stderr
    assert "goals.jsonl line 2: " in r.stderr and says.format(**fill) in r.stderr, r.stderr
    assert list(vance_home.glob("batches/*/runs")) == [] and roots(env) == []
    assert list(tmp_path.rglob("id_rsa")) == [home / ".ssh" / "id_rsa"]  # no copy of the key anywhere


def test_the_flags_are_held_to_the_same_rules(env, home, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "a", "goal": "g"}])
    r = run_cli("benjy", "batch", str(goals), "-w", str(home), "--yes", env={**env, "HOME": str(home)})
    assert r.returncode == 2 and f"--workspace {home} is your home folder" in r.stderr, r.stderr
    r = run_cli("benjy", "batch", str(goals), "--criteria", str(home / ".ssh" / "id_rsa"), "--yes", env={**env, "HOME": str(home)})
    assert r.returncode == 2 and "--criteria" in r.stderr and "which holds credentials" in r.stderr, r.stderr
    assert list(vance_home.glob("batches/*/runs")) == []


def test_a_bad_recipe_on_line_3_is_found_before_anything_is_made(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "a", "goal": "g"}, {"id": "b", "goal": "g"}, {"id": "c", "goal": "g", "recipe": "benjy-codng"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    made = sorted(p.name for p in vance_home.glob("batches/*/runs/*"))
    assert "line 3" in r.stderr and "recipe 'benjy-codng' not found" in r.stderr, r.stderr
    assert r.returncode == 2 and made == [] and roots(env) == [], "things were made before the bad line was found"


def test_a_copy_never_takes_a_credential_path_along(home, tmp_path, monkeypatch):
    from vance_cli.runtime.benjy_batch import make_workspace
    from vance_cli.tools.paths import secret_paths_of

    (home / "project" / "main.py").write_text("print(1)\n")
    (home / ".netrc").write_text("machine x password y\n")
    monkeypatch.setenv("HOME", str(home))
    dest, kind, _ = make_workspace(home, tmp_path / "runs" / "a", top=None, hidden=secret_paths_of(tmp_path / "vance-home"))
    assert kind == "copy" and (dest / "project" / "main.py").is_file()
    assert not (dest / ".ssh").exists() and not (dest / ".netrc").exists()


def test_a_model_that_does_not_resolve_names_its_line_before_anything_is_made(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "a", "goal": "g"}, {"id": "b", "goal": "g", "model": "default:nope"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert r.returncode == 2 and "goals.jsonl line 2: " in r.stderr and "default:nope" in r.stderr, r.stderr
    assert list(vance_home.glob("batches/*/runs")) == [] and roots(env) == []


@pytest.mark.parametrize("kind", ["fifo", "dir", "devzero"])
def test_a_goals_path_that_is_not_a_regular_file_is_said_to_be_so(env, tmp_path, kind):
    import os

    path = tmp_path / "goals.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    else:
        path = "/dev/zero"
    r = run_cli("benjy", "batch", str(path), "--yes", env=env)
    assert r.returncode == 2, r.stderr
    assert "does not exist" not in r.stderr and f"goals file {path} is not a regular file" in r.stderr, r.stderr


def test_deeply_nested_json_is_bad_input_naming_its_line(env, tmp_path):
    path = tmp_path / "goals.jsonl"
    path.write_text('{"goal": "a"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    r = run_cli("benjy", "batch", str(path), "--yes", env=env)
    assert "internal error" not in r.stderr and r.returncode == 2, r.stderr
    assert "goals.jsonl line 2: not JSON (nested too deeply)" in r.stderr


def test_a_utf8_bom_is_read_as_utf8(env, src, tmp_path):
    path = tmp_path / "goals.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "goal": "write one item file"}\n')  # Notepad / PowerShell's UTF-8
    r = run_cli("benjy", "batch", str(path), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert "BOM" not in r.stderr and r.returncode == 0, r.stderr
    assert "a: DONE" in r.stderr


def test_a_hand_edited_batch_state_is_refused_naming_the_entry(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    assert run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env).returncode == 0
    (state,) = vance_home.glob("batches/*/batch.json")
    data = json.loads(state.read_text())
    data["runs"]["a"] = "oops"  # a hand edit
    state.write_text(json.dumps(data))
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert "internal error" not in r.stderr and r.returncode == 1, r.stderr
    assert f"the batch state {state}: entry 'a' is not a run" in r.stderr and "move it away" in r.stderr


def test_a_fifo_in_the_source_is_left_out_of_the_copy_and_said(env, src, tmp_path, vance_home):
    import os

    os.mkfifo(src / "pipe")
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert "[('" not in r.stderr, "the error is shutil.Error's list repr"
    assert r.returncode == 0, r.stderr
    assert f"warning: left out of the copy of {src}: 1 file that is not a regular file, folder or link (pipe)" in r.stderr
    (ws,) = vance_home.glob("batches/*/runs/a")
    assert not (ws / "pipe").exists() and (ws / "item1.txt").is_file()


def test_a_file_that_cannot_be_copied_is_one_plain_error(src, tmp_path, monkeypatch):
    import os
    import shutil

    from vance_cli.errors import VanceError
    from vance_cli.runtime.benjy_batch import make_workspace

    real_copy = shutil.copyfile

    def copy(a, b, **kw):  # what an unreadable file does (the tests run as root, who reads anything)
        if os.fspath(a).endswith("README.txt"):
            raise PermissionError(13, "Permission denied", os.fspath(a))
        return real_copy(a, b, **kw)

    monkeypatch.setattr(shutil, "copyfile", copy)
    with pytest.raises(VanceError) as caught:
        make_workspace(src, tmp_path / "runs" / "a", top=None)
    assert caught.value.message == f"cannot copy {src} for the run: {src / 'README.txt'}: [Errno 13] Permission denied: '{src / 'README.txt'}'"
    assert list((tmp_path / "runs").iterdir()) == []  # nothing half made is left


def test_with_json_the_approval_prompt_stays_off_stdout(env, src, tmp_path, vance_home):
    import os
    import pty
    import select
    import subprocess
    import time

    from tests.helpers import subprocess_env

    goals = write_goals(tmp_path, [{"id": "a", "goal": "g"}])
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "vance_cli", "benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--json"],
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=subprocess_env({**env, "VANCE_HOME": str(vance_home)}))
    os.close(slave)
    try:
        seen, deadline = b"", time.monotonic() + 30
        while b"[y/N]" not in seen and time.monotonic() < deadline and proc.poll() is None:
            if select.select([proc.stderr], [], [], 0.5)[0]:
                seen += os.read(proc.stderr.fileno(), 65536)
        assert b"approve them once for the whole batch? [y/N]" in seen, seen  # asked on stderr, the terminal
        os.write(master, b"n\n")
        out, rest = proc.communicate(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1 and b"not approved: no run was started" in rest
    assert b"approve" not in out, out  # stdout is the JSON lines only
    assert all(json.loads(line) for line in out.splitlines())


def test_a_lines_recipe_path_is_read_from_the_goals_folder_like_its_workspace_and_criteria(env, src, tmp_path, vance_home):
    folder = tmp_path / "plans"
    folder.mkdir()
    recipe = (REPO / "recipes" / "benjy-coding.yaml").read_text().replace("name: benjy-coding", "name: mine")
    (folder / "mine.yaml").write_text(recipe)
    (folder / "criteria.md").write_text("every item file says its number\n")
    goals = write_goals(folder, [{"id": "a", "goal": "write one item file", "recipe": "./mine.yaml",
                                  "criteria": "criteria.md", "workspace": "../src"}])
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "--yes", env=env, cwd=vance_home)  # cwd: not the goals folder
    assert r.returncode == 0, r.stderr
    assert f"recipe    mine ({folder / 'mine.yaml'})" in r.stderr and f"criteria  {folder / 'criteria.md'}" in r.stderr
    assert f"source    {src} " in r.stderr


def test_a_batch_state_of_a_newer_version_is_refused(env, src, tmp_path, vance_home):
    goals = write_goals(tmp_path, [{"id": "a", "goal": "write one item file"}])
    assert run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env).returncode == 0
    (state,) = vance_home.glob("batches/*/batch.json")
    data = json.loads(state.read_text())
    assert data["version"] == 1
    data["version"] = 2
    state.write_text(json.dumps(data))
    r = run_cli("benjy", "batch", str(goals), "--check", CHECK, "-w", str(src), "--yes", env=env)
    assert r.returncode == 1 and f"the batch state {state} is version 2; this vance reads version 1" in r.stderr, r.stderr


def test_only_the_batch_lock_is_reported_as_the_batch_being_run(env, tmp_path, vance_home, monkeypatch):
    from vance_cli.config.context import load_context
    from vance_cli.errors import ProcessLocked
    from vance_cli.runtime.benjy_batch import BenjyBatch, Defaults, read_goals
    from vance_cli.runtime.runner import Runtime

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    goals = write_goals(tmp_path, [{"id": "a", "goal": "g"}])
    runtime = Runtime(*load_context())
    batch = BenjyBatch(runtime, goals, read_goals(goals, Defaults(), runtime))
    with pytest.raises(ProcessLocked, match="^process x is in use by pid 1$"), batch.locked():
        raise ProcessLocked("process x is in use by pid 1")  # a run's lock, met inside: said as it is
    with batch.locked(), pytest.raises(ProcessLocked, match=f"the batch of {goals} is being run by"), BenjyBatch(
        runtime, goals, batch.goals
    ).locked():
        pass
