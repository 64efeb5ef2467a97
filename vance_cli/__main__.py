"""`python -m vance_cli` runs the CLI."""

from vance_cli.entry import script

if __name__ == "__main__":
    script()
