"""`vance acp`: Vance's engines inside an editor, over the Agent Client Protocol (stdio).

The SDK (``agent-client-protocol``, the ``vance-cli[acp]`` extra) is imported only here and only by
`vance acp`; every other command starts without it.
"""
