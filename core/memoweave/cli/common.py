"""What every memory command shares: ``--config``, ``--server``, the scope options,
``--json``, opening the ``Memory`` and parsing JSON-valued options into typed errors.

Without ``--config`` (or ``$MEMOWEAVE_CONFIG``) a command runs on the embedded default
stack: the ``qdrant`` store in edge mode and the ``onnx`` embedder, both under
``$MEMOWEAVE_HOME`` (else ``~/.memoweave``). A missing plugin surfaces as
``error[provider_not_found]`` with the ``pip install`` hint.

With ``--server URL`` (or ``$MEMOWEAVE_SERVER``) a command talks to a running ``memoweave
serve`` instead (:class:`memoweave.remote.RemoteMemory`), sending ``$MEMOWEAVE_API_KEY``
as its key; the server's configuration applies and ``--config`` is not read.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from memoweave.errors import FilterError, ValidationError
from memoweave.memory.api import Memory

if TYPE_CHECKING:
    from memoweave.remote import RemoteMemory

API_KEY_ENV = "MEMOWEAVE_API_KEY"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ScopeArgs:
    """The ``--user-id`` / ``--agent-id`` / ``--run-id`` options of one command."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def kwargs(self) -> dict[str, Any]:
        """The ids that were given, as keyword arguments for ``Memory`` methods."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


def config_option(func: F) -> F:
    """``--config FILE`` (YAML), defaulting to ``$MEMOWEAVE_CONFIG``."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="MEMOWEAVE_CONFIG",
        help="YAML configuration (default: $MEMOWEAVE_CONFIG, else the embedded stack).",
    )(func)


def server_option(func: F) -> F:
    """``--server URL``: run against a ``memoweave serve`` (default: ``$MEMOWEAVE_SERVER``)."""
    return click.option(
        "--server",
        "server_url",
        envvar="MEMOWEAVE_SERVER",
        help="URL of a running `memoweave serve` to use instead of opening the store "
        "(default: $MEMOWEAVE_SERVER); the key is read from $MEMOWEAVE_API_KEY.",
    )(func)


def scope_options(func: F) -> F:
    """``--user-id``, ``--agent-id``, ``--run-id``, passed on as one ``scope`` argument."""

    @functools.wraps(func)
    def wrapper(
        *args: Any, user_id: str | None, agent_id: str | None, run_id: str | None, **kw: Any
    ) -> Any:
        return func(*args, scope=ScopeArgs(user_id, agent_id, run_id), **kw)

    for name in ("run_id", "agent_id", "user_id"):
        wrapper = click.option(
            f"--{name.replace('_', '-')}",
            name,
            default=None,
            help=f"Scope: the {name.split('_')[0]} the memories belong to.",
        )(wrapper)
    return wrapper  # type: ignore[return-value]  # click's decorators keep the signature


def json_option(func: F) -> F:
    """``--json``: print the API's result as JSON instead of tables."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (machine output).")(
        func
    )


@contextmanager
def open_memory(
    config_path: Path | None, server_url: str | None = None
) -> Iterator[Memory | RemoteMemory]:
    """A ``Memory`` from ``config_path`` (or the embedded stack), or with ``server_url`` a
    :class:`RemoteMemory`; closed afterwards."""
    memory: Memory | RemoteMemory
    if server_url:
        ctx = click.get_current_context(silent=True)
        explicit = click.core.ParameterSource.COMMANDLINE
        if ctx is not None and ctx.get_parameter_source("config_path") == explicit:
            raise ValidationError(
                "pass --config or --server, not both",
                hint="With --server the server's own configuration applies.",
            )
        from memoweave.remote import RemoteMemory  # urllib: only with --server

        memory = RemoteMemory(server_url, api_key=os.environ.get(API_KEY_ENV))
    else:
        memory = Memory(str(config_path) if config_path is not None else None)
        if _EXITING:
            memory._expect_exit()
    try:
        yield memory
    finally:
        if _EXITING and isinstance(memory, Memory):
            memory._close_at_exit()
        else:
            memory.close()


_EXITING = False
"""Set by :func:`exit_after_command`: the process ends once the command returns."""


def exit_after_command() -> None:
    """Declare that the process ends as soon as the command returns (the console script,
    :func:`memoweave.cli.main.run`): :func:`open_memory` then tells the vector store so
    before the command (``Memory._expect_exit``: the Qdrant Edge store skips the advice
    that only keeps a long-running process's resident memory low, ~0.1 s of a search at
    1M memories) and closes with ``Memory._close_at_exit``, which lets the vector store
    leave to the exit what it makes unnecessary (an unwritten Qdrant Edge shard's close:
    60-340 ms)."""
    global _EXITING
    _EXITING = True


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON (non-ASCII kept readable)."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def parse_json_option(option: str, text: str | None, *, error: type = ValidationError) -> Any:
    """Parse the JSON given to ``option``; a syntax error becomes ``error`` (typed)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{option} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            hint=f"Quote the whole value, e.g. {option} "
            + ('\'{"category": "travel"}\'' if option == "--filter" else "'{\"key\": 1}'"),
            details={"option": option},
        ) from exc


def parse_filter_option(text: str | None) -> dict[str, Any] | None:
    """``--filter JSON`` as a mapping (validated further by ``Memory.search``)."""
    value = parse_json_option("--filter", text, error=FilterError)
    if value is not None and not isinstance(value, dict):
        raise FilterError(
            f"--filter must be a JSON object, got {type(value).__name__}",
            details={"path": "<root>", "option": "--filter"},
        )
    return value


def parse_metadata(pairs: tuple[str, ...], as_json: str | None) -> dict[str, Any] | None:
    """Merge ``--metadata-json`` with ``--metadata KEY=VALUE`` pairs (pairs win).

    A VALUE that parses as JSON (numbers, true/false, lists) keeps its type; anything else
    is a string.
    """
    metadata = parse_json_option("--metadata-json", as_json)
    if metadata is not None and not isinstance(metadata, dict):
        raise ValidationError(
            f"--metadata-json must be a JSON object, got {type(metadata).__name__}",
            hint='Pass --metadata-json \'{"topic": "travel"}\'.',
        )
    merged: dict[str, Any] = dict(metadata or {})
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(
                f"--metadata expects KEY=VALUE, got {pair!r}",
                hint="Pass --metadata topic=travel (repeat the option for more keys).",
            )
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        merged[key.strip()] = value
    return merged or None
