"""`vance mcp list`: the configured MCP servers, whether each starts here, and its tools.
`vance mcp serve`: Vance's own tools (structure, benjy_run) and named schemas for other agents, as an
MCP server on stdio (vance_cli/mcp_server/; the SDK is imported only when it serves)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    mcp = typer.Typer(
        help="MCP: servers whose tools recipes add (mcp:NAME/TOOL, mcp:NAME/*), and Vance as a server for other agents.",
        no_args_is_help=True,
    )
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
            typer.echo("no MCP servers configured (add [mcp.servers.NAME] to config.toml; see docs/mcp-acp.md)")
            return
        for server in servers:
            typer.echo(f"{server.name} ({server.origin}, {server.transport}): {server.where}")
            if server.blocked:
                typer.echo(f"  not started: {server.blocked}")
            elif not no_start:
                for line in _tools(server, scopes):
                    typer.echo(f"  {line}")

    @mcp.command("serve")
    def serve() -> None:
        """Serve structure, benjy_run and the named schemas over MCP on stdin/stdout (needs vance-cli[mcp])."""
        import asyncio

        from vance_cli.cli.common import model_factory, needs_sdk
        from vance_cli.config.context import load_context

        with needs_sdk(
            "mcp",
            "`vance mcp serve` needs the MCP SDK, which is not installed",
            hint="pip install 'vance-cli[mcp]' (or: pip install mcp)",
        ):
            import mcp  # noqa: F401  (the SDK itself: vance_cli.mcp_server may be loaded already)

            from vance_cli.mcp_server.server import serve as serve_mcp
        scopes, settings = load_context()
        asyncio.run(serve_mcp(scopes, settings, model_factory))


def _tools(server, scopes) -> list[str]:
    from vance_cli.tools.mcp_client import survey

    found = survey(server, scopes)
    if found.error is not None:
        return [f"does not start: {found.error}"]
    marks = [f"{t.name}{'' if t.side_effects else ' (read-only)'}" for t in found.tools]
    lines = ["starts; tools: " + (", ".join(marks) or "none"), *found.warnings]
    if not server.trust_read_only and any(t.claims_read_only for t in found.tools):
        claimed = ", ".join(t.name for t in found.tools if t.claims_read_only)
        lines.append(f"says read-only (not trusted, so each call asks): {claimed}; "
                     f"to trust its claim: trust_read_only = true in [mcp.servers.{server.name}]")
    return lines
