"""`vance mcp list`: the configured MCP servers, whether each starts here, and its tools."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    mcp = typer.Typer(help="MCP servers whose tools recipes add (mcp:NAME/TOOL, mcp:NAME/*).", no_args_is_help=True)
    app.add_typer(mcp, name="mcp")

    @mcp.command("list")
    def list_servers(
        no_start: bool = typer.Option(False, "--no-start", help="Do not start the servers to list their tools."),
    ) -> None:
        """Each configured server (user and project scope), whether it starts here, and its tools."""
        from vance_cli.config.mcp_servers import configured_servers
        from vance_cli.config.scopes import Scopes

        scopes = Scopes.discover()
        servers = configured_servers(scopes)
        if not servers:
            typer.echo("no MCP servers configured (add [mcp.servers.NAME] to config.toml; see README.md)")
            return
        for server in servers:
            typer.echo(f"{server.name} ({server.origin}, {server.transport}): {server.where}")
            if server.blocked:
                typer.echo(f"  not started: {server.blocked}")
            elif not no_start:
                for line in _tools(server):
                    typer.echo(f"  {line}")


def _tools(server) -> list[str]:
    import asyncio

    try:
        from vance_cli.tools import mcp_client
    except ImportError:  # pragma: no cover
        return ["cannot start: install the extra with: pip install 'vance[mcp]'"]

    async def go():
        return await mcp_client.tools_of(server)

    try:
        tools = asyncio.run(go())
    except ModuleNotFoundError:
        return ["cannot start: the mcp package is missing; install it with: pip install 'vance[mcp]'"]
    except (mcp_client.McpUnavailable, TimeoutError) as exc:
        return [f"does not start: {exc}"]
    marks = [f"{t.name}{'' if t.side_effects else ' (read-only)'}" for t in tools]
    return ["starts; tools: " + (", ".join(marks) or "none")]
