"""`python -m vance_cli` runs the CLI."""

from vance_cli.entry import main

main()
