"""memoweave-mcp: memoweave as MCP tools (``memoweave mcp``).

``memoweave_mcp.tools.build_server(service, scope)`` is the ``MCPServer`` to embed or test.
This package's top level imports nothing heavy: the CLI loads it at start.
"""

__version__ = "0.1.0"
