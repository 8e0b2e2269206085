"""``memoweave serve`` and ``memoweave new-key`` (added to the CLI by this plugin).

Importing this module imports no web framework: FastAPI and uvicorn load when ``serve``
runs.
"""

from __future__ import annotations

from pathlib import Path

import click

from memoweave.access import new_key
from memoweave.cli.common import config_option
from memoweave.config import MemoryConfig
from memoweave.config.server import hash_key


def load_config(config_path: Path | None) -> MemoryConfig:
    """The YAML configuration, or the embedded default stack."""
    return MemoryConfig.from_yaml(config_path) if config_path is not None else MemoryConfig()


@click.command()
@config_option
@click.option("--host", help="Interface to bind (default: server.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), help="Port (default: server.port, 8765).")
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    help="One line per request, as key=value text or JSON (default: server.log_format).",
)
def serve(
    config_path: Path | None, host: str | None, port: int | None, log_format: str | None
) -> None:
    """Serve the memory over HTTP (mem0's REST routes), configured by the same YAML.

    Keys, grants, CORS and logging come from the `server:` section. With no key configured
    the server listens on 127.0.0.1 only.
    """
    from memoweave.access import KeyRing
    from memoweave_server.app import create_app
    from memoweave_server.run import bind_host, serve_asgi
    from memoweave_server.service import MemoryService

    config = load_config(config_path)
    server = config.server.model_copy(
        update={k: v for k, v in {"log_format": log_format}.items() if v is not None}
    )
    bound, notice = bind_host(host or server.host, KeyRing.from_config(server))
    app = create_app(MemoryService.from_config(config), server, close_on_shutdown=True)
    port = port or server.port
    click.echo(f"memoweave REST server on http://{bound}:{port} (docs: /docs)", err=True)
    if notice:
        click.echo(f"note: {notice}", err=True)
    serve_asgi(app, bound, port)


@click.command(name="new-key")
@click.option("--name", default="app", show_default=True, help="The key's name (shown in logs).")
@click.option("--role", type=click.Choice(["member", "admin"]), default="member", show_default=True)
@click.option("--user-id", "user_ids", multiple=True, help="Grant this user_id ('*': any).")
@click.option("--agent-id", "agent_ids", multiple=True, help="Grant this agent_id ('*': any).")
@click.option("--run-id", "run_ids", multiple=True, help="Grant this run_id ('*': any).")
def new_key_command(
    name: str,
    role: str,
    user_ids: tuple[str, ...],
    agent_ids: tuple[str, ...],
    run_ids: tuple[str, ...],
) -> None:
    """Make a random API key; print it once and the `server.keys` entry (its hash) to paste
    into the configuration."""
    from memoweave.config.server import ApiKeyConfig

    grant = {
        key: ("*" if "*" in values else list(values))
        for key, values in (("user_id", user_ids), ("agent_id", agent_ids), ("run_id", run_ids))
        if values
    }
    key = new_key()
    spec = ApiKeyConfig.model_validate(
        {"name": name, "sha256": hash_key(key), "role": role, "grant": grant}
    )
    click.echo(f"key (give it to the client; it is not stored anywhere): {key}", err=True)
    lines = ["server:", "  keys:", f"    - name: {spec.name}", f"      sha256: {spec.sha256}"]
    lines.append(f"      role: {spec.role}")
    if grant:
        lines.append("      grant:")
        for id_key, values in grant.items():
            rendered = '"*"' if values == "*" else "[" + ", ".join(values) + "]"
            lines.append(f"        {id_key}: {rendered}")
    click.echo("\n".join(lines))
