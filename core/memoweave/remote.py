"""``RemoteMemory``: the ``Memory`` API over a running ``memoweave serve`` (REST).

Same methods, arguments and return shapes as :class:`memoweave.Memory`; the server's
error bodies ``{code, message, hint}`` are raised again as the matching
:class:`MemoweaveError` subclass (``NotFound``, ``ValidationError``, ``Forbidden``...).
Several processes can share one embedded store this way (Qdrant Edge allows one process
per folder): the server holds it and the others talk to it. Standard library only.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from memoweave.errors import MemoweaveError, NotFound, ServerError, ValidationError
from memoweave.memory.validate import check_memory_id

DEFAULT_TIMEOUT_S = 120.0


def _error_classes() -> dict[str, type[MemoweaveError]]:
    found: dict[str, type[MemoweaveError]] = {}
    pending: list[type[MemoweaveError]] = [MemoweaveError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


def _check_url(url: Any) -> str:
    parsed = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValidationError(
            f"server URL must be http(s)://host[:port], got {url!r}",
            hint="Pass --server http://127.0.0.1:8765 (or set MEMOWEAVE_SERVER).",
        )
    return str(url).rstrip("/")


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class RemoteMemory:
    """A client of the memoweave REST server with the ``Memory`` methods."""

    def __init__(
        self, url: str, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.url = _check_url(url)
        self._api_key = api_key or None
        self._timeout = timeout

    def __repr__(self) -> str:  # never the key
        return f"RemoteMemory({self.url!r})"

    # -- the Memory API ---------------------------------------------------------------------

    def add(self, messages: Any, **options: Any) -> dict[str, Any]:
        """``Memory.add`` on the server (``POST /memories``)."""
        answer: dict[str, Any] = self._call(
            "POST", "/memories", body={"messages": messages, **options}
        )
        return answer

    def search(self, query: str, **options: Any) -> dict[str, Any]:
        """``Memory.search`` on the server (``POST /search``)."""
        answer: dict[str, Any] = self._call("POST", "/search", body={"query": query, **options})
        return answer

    def get_all(self, *, filters: Mapping[str, Any] | None = None, **options: Any) -> Any:
        """``Memory.get_all`` on the server (``GET /memories``)."""
        query = dict(options)
        if filters is not None:
            query["filters"] = json.dumps(filters)
        return self._call("GET", "/memories", query=query)

    def get(self, memory_id: str, **scope: Any) -> dict[str, Any] | None:
        """``Memory.get``: the memory, or ``None`` (also outside the key's grant)."""
        try:
            answer: dict[str, Any] | None = self._call(
                "GET", self._memory_path(memory_id), query=scope
            )
            return answer
        except NotFound:
            return None

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        data: str | None = None,
        **scope: Any,
    ) -> dict[str, Any]:
        """``Memory.update`` on the server (``PUT /memories/{id}``)."""
        body = _drop_none({"text": text, "data": data, "metadata": metadata})
        answer: dict[str, Any] = self._call(
            "PUT", self._memory_path(memory_id), query=scope, body=body
        )
        return answer

    def delete(self, memory_id: str, **scope: Any) -> dict[str, str]:
        """``Memory.delete`` on the server (``DELETE /memories/{id}``)."""
        answer: dict[str, str] = self._call("DELETE", self._memory_path(memory_id), query=scope)
        return answer

    def delete_all(self, **scope: Any) -> dict[str, str]:
        """``Memory.delete_all`` on the server (``DELETE /memories``)."""
        answer: dict[str, str] = self._call("DELETE", "/memories", query=scope)
        return answer

    def history(self, memory_id: str, **scope: Any) -> list[dict[str, Any]]:
        """``Memory.history`` on the server (``GET /memories/{id}/history``)."""
        answer: list[dict[str, Any]] = self._call(
            "GET", self._memory_path(memory_id) + "/history", query=scope
        )
        return answer

    def reset(self) -> None:
        """``Memory.reset`` on the server (``POST /reset``, admin keys only)."""
        self._call("POST", "/reset")

    def close(self) -> None:
        """Nothing to release (one connection per call)."""

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport --------------------------------------------------------------------------

    @staticmethod
    def _memory_path(memory_id: str) -> str:
        return "/memories/" + urllib.parse.quote(check_memory_id(memory_id), safe="")

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        url = self.url + path
        params = {
            k: (json.dumps(v) if isinstance(v, bool) else v)
            for k, v in _drop_none(query or {}).items()
        }
        if params:
            url += "?" + urllib.parse.urlencode(params)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            try:
                data = json.dumps(_drop_none(body), default=str).encode("utf-8")
            except (TypeError, ValueError) as exc:
                raise ValidationError(
                    f"the request is not JSON-serialisable: {exc}",
                    hint="Use strings, numbers, booleans, lists and dicts only.",
                ) from exc
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise self._error(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ServerError(
                f"cannot reach the memoweave server at {self.url}: {reason}"
            ) from None

    def _error(self, exc: urllib.error.HTTPError) -> MemoweaveError:
        try:
            body = json.loads(exc.read() or b"{}")
        except ValueError:
            body = {}
        if not isinstance(body, dict) or not isinstance(body.get("code"), str):
            return ServerError(f"the memoweave server at {self.url} answered HTTP {exc.code}")
        cls = _ERRORS.get(body["code"], ServerError)
        details = {"status": exc.code}
        if body.get("request_id"):
            details["request_id"] = body["request_id"]
        return cls(str(body.get("message", "")), hint=body.get("hint"), details=details)


_ERRORS = _error_classes()
