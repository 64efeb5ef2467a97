"""Where a run screen's events come from: a run driven in this process, a run's files, or a script.

Each source keeps the ``RunSource`` protocol (``base.py``):

- ``files.ProcessFileSource`` watches the process files of a run started elsewhere (``vance benjy
  watch ID``, ``/attach ID``): it polls the file and turns what changed into the same events.
- ``benjy.BenjyRunSource`` drives a Benjy run in this process (``vance benjy run`` on a
  terminal, ``vance_cli.tui.run_benjy_live``).
- ``scripted.ScriptedRunSource`` plays a list of events (tests, demos).
"""
