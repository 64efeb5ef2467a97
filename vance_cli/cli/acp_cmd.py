"""`vance acp`: Vance as an Agent Client Protocol agent on stdio (for Zed and other ACP clients).

Thin: builds the runtime as `vance chat` does (settings, model factory, approval gate) and hands
it to vance_cli/acp/agent.py, which speaks the protocol."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def acp(
        recipe: str = typer.Option("arthur", "--recipe", "-r", help="Recipe of each new session (project → user → bundled)."),
        model: str | None = typer.Option(None, "--model", "-m", help="litellm model string or alias; overrides the recipe."),
        allow: list[str] = typer.Option([], "--allow", help="Allow TOOL or 'TOOL:PATTERN' calls without asking the editor (repeatable)."),
        yes: bool = typer.Option(False, "--yes", "-y", help="Allow every tool call without asking (deny rules still apply)."),
    ) -> None:
        """Speak ACP on stdin/stdout: an editor's agent panel drives Vance chats (needs vance-cli[acp])."""
        import asyncio

        from vance_cli.cli.common import model_factory, needs_sdk, require_text
        from vance_cli.config.context import load_context
        from vance_cli.runtime.approvals import ApprovalGate
        from vance_cli.runtime.runner import Runtime

        require_text(recipe, "--recipe")
        with needs_sdk(
            "acp",
            "`vance acp` needs the Agent Client Protocol SDK, which is not installed",
            hint="pip install 'vance-cli[acp]' (or: pip install agent-client-protocol)",
        ):
            import acp  # noqa: F401  (the SDK itself: vance_cli.acp.agent may be loaded already)

            from vance_cli.acp.agent import serve

        scopes, settings = load_context()
        runtime = Runtime(scopes, settings, model_factory=model_factory)
        runtime.approvals = ApprovalGate(scopes, settings, allow=allow, yes=yes, bus=runtime.bus, headless_hint="acp")
        asyncio.run(serve(runtime, recipe=recipe, model=model))
