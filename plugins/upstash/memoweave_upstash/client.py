"""The Upstash SDK client, built lazily, and the mapping of its failures to memoweave errors.

The ``upstash-vector`` SDK hard-codes a 600 s timeout and raises ``UpstashError`` with the
service's message (the HTTP status is dropped), ``ClientError`` for invalid arguments,
httpx exceptions for transport failures and a JSON decoding error for non-JSON responses.
:func:`connect` swaps in an httpx client with the configured timeouts whose response hook
turns a non-JSON error response into :class:`HTTPFailure` (status and body kept), and
:func:`store_error` maps any of them to :class:`memoweave.errors.VectorStoreError`.
Telemetry headers are always disabled.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from memoweave.errors import VectorStoreError
from memoweave_upstash.config import UpstashStoreConfig


class HTTPFailure(Exception):
    """A non-2xx response whose body is not Upstash's JSON error envelope."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status
        self.body = body


def _raise_unless_upstash_error(response: Any) -> None:
    """A read error response that is not Upstash's JSON envelope becomes HTTPFailure."""
    try:
        body = json.loads(response.text)
    except ValueError:
        body = None
    if not (isinstance(body, dict) and "error" in body):
        raise HTTPFailure(response.status_code, response.text.strip() or response.reason_phrase)


def _check_response(response: Any) -> None:
    if response.status_code >= 400:
        response.read()
        _raise_unless_upstash_error(response)


async def _acheck_response(response: Any) -> None:
    if response.status_code >= 400:
        await response.aread()
        _raise_unless_upstash_error(response)


def connect(config: UpstashStoreConfig, *, asynchronous: bool = False) -> Any:
    """An ``upstash_vector.Index`` (``AsyncIndex`` when ``asynchronous``) for ``config``
    (imports the SDK; performs no request)."""
    import httpx
    from upstash_vector import AsyncIndex, Index

    url, token = config.resolved()
    options = {"retries": config.retries, "retry_interval": config.retry_interval}
    timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout)
    if asynchronous:
        index: Any = AsyncIndex(url=url, token=token, allow_telemetry=False, **options)
        # the SDK's fixed 600 s client is replaced before it ever connects
        index._client = httpx.AsyncClient(
            timeout=timeout, event_hooks={"response": [_acheck_response]}
        )
        return index
    index = Index(url=url, token=token, allow_telemetry=False, **options)
    index._client.close()  # replace the SDK's fixed 600 s client with the configured one
    index._client = httpx.Client(timeout=timeout, event_hooks={"response": [_check_response]})
    return index


def close(index: Any) -> None:
    """Release a sync index's HTTP connections."""
    index._client.close()


class UpstashClient:
    """The store's transport: one ``Index`` for sync calls and, created on first use, one
    ``AsyncIndex`` per event loop for the async twins (``index`` → ``aindex``)."""

    def __init__(self, config: UpstashStoreConfig) -> None:
        self._config = config
        self._index = connect(config)
        self._aindex: Any = None
        self._aloop: Any = None

    def index(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``Index.<method>(*args, **kwargs)``."""
        return getattr(self._index, method)(*args, **kwargs)

    async def aindex(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``await AsyncIndex.<method>(*args, **kwargs)``."""
        loop = asyncio.get_running_loop()
        if self._aindex is None or self._aloop is not loop:
            self._aindex, self._aloop = connect(self._config, asynchronous=True), loop
        return await getattr(self._aindex, method)(*args, **kwargs)

    def handle(self, handle: Any, method: str, *args: Any) -> Any:
        """A resumable query handle's ``<method>(*args)``."""
        return getattr(handle, method)(*args)

    async def ahandle(self, handle: Any, method: str, *args: Any) -> Any:
        """An async resumable query handle's ``await <method>(*args)``."""
        return await getattr(handle, method)(*args)

    def close(self) -> None:
        """Release the sync HTTP connections."""
        close(self._index)

    async def aclose(self) -> None:
        """Release both clients' HTTP connections."""
        if self._aindex is not None:
            await self._aindex._client.aclose()
            self._aindex = None
        self.close()


def store_error(exc: BaseException, op: str, url: str, namespace: str) -> VectorStoreError:
    """The ``VectorStoreError`` for an exception raised by an SDK call."""
    import httpx
    from upstash_vector.errors import ClientError, UpstashError

    details: dict[str, Any] = {"op": op, "url": url, "namespace": namespace}
    if isinstance(exc, UpstashError):
        message = str(exc)
        hint = "See the Upstash message; check the index configuration and the request."
        if "unauthorized" in message.lower():
            hint = "Check the REST token (config token or UPSTASH_VECTOR_REST_TOKEN)."
        return VectorStoreError(f"Upstash {op} failed: {message}", hint=hint, details=details)
    if isinstance(exc, HTTPFailure):
        details["status"] = exc.status
        return VectorStoreError(
            f"Upstash {op} failed with HTTP {exc.status}: {exc.body[:300]}",
            hint="Check the REST URL; the server did not answer like Upstash Vector.",
            details=details,
        )
    if isinstance(exc, httpx.TimeoutException):
        return VectorStoreError(
            f"Upstash {op} timed out after the configured timeout ({url})",
            hint="Raise `timeout` in the store config or check the network.",
            details=details,
        )
    if isinstance(exc, httpx.HTTPError):
        return VectorStoreError(
            f"Upstash {op} could not reach {url}: {exc}",
            hint="Check the REST URL (config url or UPSTASH_VECTOR_REST_URL) and the network.",
            details=details,
        )
    if isinstance(exc, ClientError):
        return VectorStoreError(f"Upstash {op} rejected by the SDK: {exc}", details=details)
    if isinstance(exc, ValueError):
        return VectorStoreError(
            f"Upstash {op} returned a response that is not JSON: {exc}",
            hint="Check the REST URL; the server did not answer like Upstash Vector.",
            details=details,
        )
    return VectorStoreError(f"Upstash {op} failed: {type(exc).__name__}: {exc}", details=details)


__all__ = ["HTTPFailure", "UpstashClient", "close", "connect", "store_error"]
