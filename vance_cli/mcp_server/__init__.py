"""`vance mcp serve`: Vance's own tools for other agents, as an MCP server on stdio.

The SDK (``mcp``, the ``vance-cli[mcp]`` extra) is imported only here and only by `vance mcp serve`;
every other command starts without it.
"""
