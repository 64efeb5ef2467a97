"""`python -m vance_cli` runs the CLI."""

from vance_cli.cli.main import run

run()
