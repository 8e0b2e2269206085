"""``memoweave mcp``: the memory tools for MCP clients, over stdio or streamable HTTP.

Importing this module imports no MCP or web code: the SDK loads when the command runs.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import click

from memoweave.cli.common import ScopeArgs, config_option, scope_options


@click.command(name="mcp")
@config_option
@scope_options
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a local client that starts the server; http for streamable HTTP.",
)
@click.option("--host", help="HTTP: interface to bind (default: server.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), help="HTTP: port (default: server.port).")
@click.option(
    "--rerank/--no-rerank",
    default=None,
    help="search_memories asks the configured reranker (default: server.mcp.rerank, off).",
)
def mcp_command(
    config_path: Path | None,
    scope: ScopeArgs,
    transport: str,
    host: str | None,
    port: int | None,
    rerank: bool | None,
) -> None:
    """Serve the memory as MCP tools (add, search, get, list, update, delete, history).

    The tools work in one scope, never chosen by the model: --user-id / --agent-id /
    --run-id, else the server.mcp section. --rerank (or server.mcp.rerank) has
    search_memories ask the configured reranker. Over HTTP the server.keys of `memoweave serve`
    apply: a key's grant must cover the scope, and ids it pins to one value are added.
    With no key configured HTTP listens on 127.0.0.1 only.
    """
    from memoweave_server.commands import load_config
    from memoweave_server.run import bind_host, serve_asgi
    from memoweave_server.service import MemoryService

    from memoweave.access import KeyRing
    from memoweave.errors import ConfigError
    from memoweave.memory.scope import Scope
    from memoweave_mcp.http import MCP_PATH, http_app
    from memoweave_mcp.scope import ToolScope
    from memoweave_mcp.tools import build_server

    config = load_config(config_path)
    ids = config.server.mcp.scope_ids()
    ids.update(scope.kwargs())
    base = Scope.of(**ids, operation="memoweave mcp") if ids else None
    if transport == "stdio" and base is None:
        Scope.of(operation="memoweave mcp over stdio")  # raises the typed error
    keyring = KeyRing.from_config(config.server)
    rerank = config.server.mcp.rerank if rerank is None else rerank
    if rerank and config.reranker is None:
        raise ConfigError(
            "memoweave mcp: reranking asked for (--rerank or server.mcp.rerank) and no "
            "reranker configured",
            hint="Add a reranker section (e.g. reranker: {provider: onnx}) or drop --rerank.",
        )
    service = MemoryService.from_config(config)
    if transport == "stdio":
        server = build_server(service, ToolScope(base), rerank=rerank)

        async def run_stdio() -> None:
            try:
                await server.run_stdio_async()
            finally:
                await service.close()  # on the loop that used it

        anyio.run(run_stdio)
        return
    bound, notice = bind_host(host or config.server.host, keyring)
    port = port or config.server.port
    app = http_app(
        build_server(service, ToolScope(base, keyring), rerank=rerank),
        keyring,
        log_format=config.server.log_format,
    )
    click.echo(f"memoweave MCP server on http://{bound}:{port}{MCP_PATH}", err=True)
    if notice:
        click.echo(f"note: {notice}", err=True)
    serve_asgi(app, bound, port, on_exit=service.close)
