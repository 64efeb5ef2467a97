"""`python -m vance_cli` runs the CLI."""

from vance_cli.entry import main

if __name__ == "__main__":
    main()
