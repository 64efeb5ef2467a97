"""The Typer CLI: parse, call a service, format. Nothing else; heavy imports live inside commands."""
