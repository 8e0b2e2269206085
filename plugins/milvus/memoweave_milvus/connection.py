"""Opening and closing the Milvus client, including the embedded Milvus Lite server.

pymilvus starts one Milvus Lite server per ``.db`` path inside the process and keeps it
until exit; the server holds an exclusive file lock (``<path>/LOCK``). This module counts
the stores using each path and stops the Lite server when the last one closes, so a
closed store releases the database for other processes. A second process opening a locked
database gets a :class:`VectorStoreError` that names the lock and the way out.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from memoweave.errors import MemoweaveError, VectorStoreError
from memoweave_milvus.config import MilvusStoreConfig

_LITE_LOGGER = "milvus_lite.server_manager"
_users: dict[str, int] = {}
_users_lock = threading.Lock()

LOCK_HINT = (
    "Milvus Lite allows one process per .db: close the other process, use another .db "
    "path, or run a Milvus server (docker run milvusdb/milvus) and set uri: "
    "http://localhost:19530 so several processes can share it."
)


def error_message(exc: BaseException) -> str:
    """The engine's own message of a pymilvus (or gRPC) exception, on one line."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return " ".join(str(message).split())


@contextmanager
def engine_errors(action: str, **details: Any) -> Iterator[None]:
    """Turn any SDK exception raised inside the block into ``VectorStoreError``."""
    try:
        yield
    except MemoweaveError:
        raise
    except Exception as exc:
        code = getattr(exc, "code", None)
        info = {**details, "engine_error": type(exc).__name__}
        if isinstance(code, int):
            info["engine_code"] = code
        raise VectorStoreError(
            f"Milvus {action} failed: {error_message(exc)}", details=info
        ) from exc


class _Capture(logging.Handler):
    """Keeps the exception Milvus Lite logs (and swallows) when its server fails to start."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(record.exc_info[1])


def open_client(config: MilvusStoreConfig) -> tuple[Any, str | None]:
    """A connected ``MilvusClient`` and the absolute Lite path (``None`` for a server)."""
    if config.is_lite:
        return _open_lite(config)
    with engine_errors("connect", uri=config.uri):
        from pymilvus import MilvusClient

        client = MilvusClient(
            uri=config.uri,
            token=config.token.get_secret_value() if config.token else "",
            db_name=config.db_name or "",
            timeout=config.timeout,
        )
    return client, None


def _open_lite(config: MilvusStoreConfig) -> tuple[Any, str]:
    path = os.path.abspath(config.uri)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VectorStoreError(
            f"cannot create the folder of the Milvus Lite database {path}: {exc}",
            hint="Set uri to a writable path ending in .db.",
            details={"uri": path},
        ) from exc
    capture = _Capture()
    logger = logging.getLogger(_LITE_LOGGER)
    logger.addHandler(capture)
    try:
        from pymilvus import MilvusClient

        client = MilvusClient(uri=path, db_name=config.db_name or "", timeout=config.timeout)
    except ImportError as exc:
        raise VectorStoreError(
            f"pymilvus is not installed: {exc}",
            hint="pip install memoweave-milvus (it depends on pymilvus and milvus-lite).",
        ) from exc
    except Exception as exc:
        raise _lite_failure(path, capture.errors, exc) from exc
    finally:
        logger.removeHandler(capture)
    with _users_lock:
        _users[path] = _users.get(path, 0) + 1
    return client, path


def _lite_failure(path: str, logged: list[BaseException], exc: Exception) -> VectorStoreError:
    cause = logged[-1] if logged else exc
    lock = os.path.join(path, "LOCK")
    if type(cause).__name__ == "DataDirLockedError" or _held_elsewhere(lock):
        return VectorStoreError(
            f"the Milvus Lite database {path} is locked by another process "
            f"(lock file {lock}): {error_message(cause)}",
            hint=LOCK_HINT,
            details={"uri": path, "lock": lock},
        )
    return VectorStoreError(
        f"cannot open the Milvus Lite database {path}: {error_message(cause)}",
        hint="Check that the path is a Milvus Lite 3 database folder (or a new path).",
        details={"uri": path},
    )


def _held_elsewhere(lock: str) -> bool:
    """Whether another process holds the advisory lock on ``lock`` (POSIX only)."""
    if not os.path.exists(lock):
        return False
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class MilvusTransport:
    """The store's transport: the sync ``MilvusClient`` and, created on first async use,
    one ``AsyncMilvusClient`` per event loop on the same endpoint (for Milvus Lite, the
    gRPC address of the Lite server the sync client started). ``rpc`` → ``arpc``."""

    def __init__(self, config: MilvusStoreConfig) -> None:
        self.config = config
        self.client, self.lite_path = open_client(config)
        self._aclient: Any = None
        self._aloop: Any = None

    def rpc(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``MilvusClient.<method>(*args, **kwargs)``."""
        return getattr(self.client, method)(*args, **kwargs)

    async def arpc(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``await AsyncMilvusClient.<method>(*args, **kwargs)``."""
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aloop is not loop:
            self._aclient, self._aloop = self._async_client(), loop
        return await getattr(self._aclient, method)(*args, **kwargs)

    def admin(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """A collection-administration call (index creation) on the sync client."""
        return getattr(self.client, method)(*args, **kwargs)

    async def aadmin(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """:meth:`admin` in a worker thread: ``AsyncMilvusClient.create_index`` needs the
        AllocTimestamp RPC, which Milvus Lite's server lacks; creating a collection's
        indexes happens once per collection."""
        return await asyncio.to_thread(self.admin, method, *args, **kwargs)

    def _async_client(self) -> Any:
        from pymilvus import AsyncMilvusClient

        config = self.config
        if self.lite_path is not None:
            from milvus_lite.server_manager import server_manager_instance

            uri = server_manager_instance.start_and_get_uri(self.lite_path)
            return AsyncMilvusClient(uri=uri, db_name=config.db_name or "", timeout=config.timeout)
        return AsyncMilvusClient(
            uri=config.uri,
            token=config.token.get_secret_value() if config.token else "",
            db_name=config.db_name or "",
            timeout=config.timeout,
        )

    def close(self) -> None:
        """Close the sync client (and release a Lite database)."""
        close_client(self.client, self.lite_path)

    async def aclose(self) -> None:
        """Close both clients."""
        if self._aclient is not None:
            with suppress(Exception):
                await self._aclient.close()
            self._aclient = None
        self.close()


def close_client(client: Any, lite_path: str | None) -> None:
    """Close ``client``; stop the Lite server of ``lite_path`` when its last user closes."""
    with suppress(Exception):  # closing a broken connection is best effort
        client.close()
    if lite_path is None:
        return
    with _users_lock:
        remaining = _users.get(lite_path, 1) - 1
        if remaining > 0:
            _users[lite_path] = remaining
            return
        _users.pop(lite_path, None)
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:  # pragma: no cover - Lite uninstalled while running
        return
    server_manager_instance.release_server(lite_path)
