"""The emulator's in-memory index: namespaces of dense vectors with metadata.

Every public method takes the decoded JSON request body and returns the value that goes in
the response's ``result``; invalid requests raise :class:`ServiceError` carrying the HTTP
status and message the server sends. All methods are thread-safe (one lock per index).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import math
import re
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from memoweave_upstash.emulator.filter_eval import matches, validate
from memoweave_upstash.emulator.filter_parser import Expr, FilterSyntaxError, parse

SIMILARITY_FUNCTIONS = {"cosine": "COSINE", "euclidean": "EUCLIDEAN", "dot": "DOT_PRODUCT"}
BUILTIN_MODEL = "EMULATOR_HASHING"
"""Name of the emulator's deterministic built-in embedding model."""
_WORD = re.compile(r"\w+")
NO_EMBEDDING_MODEL = (
    "Embedding data for this index is not allowed. "
    "The index must be created with an embedding model to use it."
)


class ServiceError(Exception):
    """An error response: HTTP ``status`` and the service's ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class _Vector:
    vector: list[float]
    metadata: dict[str, Any] | None
    data: str | None


def builtin_embedding(text: str, dims: int) -> list[float]:
    """The emulator's embedding model: feature hashing of lowercased words and word pairs,
    L2-normalised. Deterministic; texts sharing words score higher (offline tests only)."""
    words = _WORD.findall(text.lower())
    vector = [0.0] * dims
    for feature in words + [f"{a} {b}" for a, b in itertools.pairwise(words)]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dims
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if not norm:
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


def _score(metric: str, a: list[float], b: list[float]) -> float:
    """Upstash's normalised score in [0, 1] (dot: in [0, 1] for unit vectors)."""
    if metric == "euclidean":
        return 1.0 / (1.0 + sum((x - y) * (x - y) for x, y in zip(a, b, strict=True)))
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    if metric == "cosine":
        norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        dot = dot / norm if norm else 0.0
    return (1.0 + dot) / 2.0


class EmulatedIndex:
    """One Upstash Vector dense index (fixed ``dims`` and ``metric``); with
    ``embedding_model`` set (e.g. :data:`BUILTIN_MODEL`) it also embeds ``data`` itself
    (``/upsert-data``, ``/query-data``) with :func:`builtin_embedding`."""

    def __init__(
        self,
        dims: int,
        metric: str = "cosine",
        *,
        max_batch: int = 1000,
        embedding_model: str | None = None,
    ) -> None:
        if metric not in SIMILARITY_FUNCTIONS:
            raise ValueError(f"metric must be one of {sorted(SIMILARITY_FUNCTIONS)}")
        if dims < 1:
            raise ValueError("dims must be >= 1")
        self.dims = dims
        self.metric = metric
        self.embedding_model = embedding_model
        self.max_batch = max_batch
        self._namespaces: dict[str, dict[str, _Vector]] = {"": {}}
        self._resumable: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.RLock()

    # -- helpers -----------------------------------------------------------------------

    def _ns(self, namespace: str, *, create: bool = False) -> dict[str, _Vector]:
        if namespace not in self._namespaces:
            if not create:
                return {}
            self._namespaces[namespace] = {}
        return self._namespaces[namespace]

    def _check_vector(self, vector: Any) -> list[float]:
        if not isinstance(vector, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector
        ):
            raise ServiceError(400, "Vector must be an array of numbers")
        if len(vector) != self.dims:
            raise ServiceError(
                422, f"Invalid vector dimension: {len(vector)}, expected: {self.dims}"
            )
        if not all(math.isfinite(x) for x in vector):
            raise ServiceError(400, "Vector values must be finite numbers")
        return [float(x) for x in vector]

    def _check_batch(self, size: int) -> None:
        if size > self.max_batch:
            raise ServiceError(
                400, f"Batch size {size} exceeds the maximum of {self.max_batch} per request"
            )

    @staticmethod
    def _filter(body: dict[str, Any]) -> Expr | None:
        text = body.get("filter") or ""
        if not isinstance(text, str):
            raise ServiceError(400, "filter must be a string")
        try:
            expr = parse(text)
            validate(expr)
        except FilterSyntaxError as exc:
            raise ServiceError(400, f"Invalid filter: {exc}") from None
        return expr

    @staticmethod
    def _view(id_: str, item: _Vector, body: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": id_}
        if body.get("includeVectors"):
            out["vector"] = list(item.vector)
        if body.get("includeMetadata") and item.metadata is not None:
            out["metadata"] = copy.deepcopy(item.metadata)
        if body.get("includeData") and item.data is not None:
            out["data"] = item.data
        return out

    # -- writes ------------------------------------------------------------------------

    def upsert(self, namespace: str, body: Any, *, embed: bool = False) -> str:
        """``/upsert`` (vectors), or ``/upsert-data`` (``embed``: texts to embed)."""
        if embed:
            self._need_model()
        items = body if isinstance(body, list) else [body]
        self._check_batch(len(items))
        parsed: list[tuple[str, _Vector]] = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("id"), (str, int)):
                raise ServiceError(400, "Each vector needs an id (string or number)")
            if item.get("sparseVector") is not None:
                raise ServiceError(422, "This index does not support sparse vectors")
            if item.get("vector") is None and not (embed and isinstance(item.get("data"), str)):
                raise ServiceError(
                    400, NO_EMBEDDING_MODEL if not embed else "data must be a string"
                )
            metadata = item.get("metadata")
            if metadata is not None and not isinstance(metadata, dict):
                raise ServiceError(400, "metadata must be a JSON object")
            vector = (
                builtin_embedding(item["data"], self.dims)
                if embed
                else self._check_vector(item["vector"])
            )
            parsed.append((str(item["id"]), _Vector(vector, metadata, item.get("data"))))
        with self._lock:
            ns = self._ns(namespace, create=True)
            for id_, vec in parsed:
                ns[id_] = vec
        return "Success"

    def update(self, namespace: str, body: Any) -> dict[str, int]:
        if not isinstance(body, dict) or "id" not in body:
            raise ServiceError(400, "update needs an id")
        mode = body.get("metadataUpdateMode", "OVERWRITE")
        if mode not in ("OVERWRITE", "PATCH"):
            raise ServiceError(400, f"Invalid metadataUpdateMode: {mode}")
        vector = self._check_vector(body["vector"]) if body.get("vector") is not None else None
        if body.get("data") is not None:
            self._need_model()
            if not isinstance(body["data"], str):
                raise ServiceError(400, "data must be a string")
            vector = builtin_embedding(body["data"], self.dims)
        if "metadata" in body and not isinstance(body["metadata"], (dict, type(None))):
            raise ServiceError(400, "metadata must be a JSON object")
        with self._lock:
            item = self._ns(namespace).get(str(body["id"]))
            if item is None:
                return {"updated": 0}
            if vector is not None:
                item.vector = vector
            if body.get("metadata") is not None:
                if mode == "PATCH":
                    item.metadata = _merge_patch(item.metadata or {}, body["metadata"])
                else:
                    item.metadata = body["metadata"]
        return {"updated": 1}

    def delete(self, namespace: str, body: Any) -> dict[str, int]:
        if isinstance(body, list):
            body = {"ids": body}
        if not isinstance(body, dict):
            raise ServiceError(400, "delete needs ids, a prefix or a filter")
        expr = self._filter(body) if body.get("filter") else None
        with self._lock:
            ns = self._ns(namespace)
            if "ids" in body:
                targets = [str(i) for i in body["ids"] if str(i) in ns]
            elif "prefix" in body:
                targets = [i for i in ns if i.startswith(str(body["prefix"]))]
            elif expr is not None:
                targets = [i for i, v in ns.items() if matches(expr, v.metadata)]
            else:
                raise ServiceError(400, "delete needs ids, a prefix or a filter")
            for id_ in set(targets):
                del ns[id_]
        return {"deleted": len(set(targets))}

    def reset(self, namespace: str | None) -> str:
        with self._lock:
            if namespace is None:
                self._namespaces = {"": {}}
            elif namespace in self._namespaces:
                self._namespaces[namespace] = {}
        return "Success"

    def delete_namespace(self, namespace: str) -> str:
        with self._lock:
            if namespace == "":
                raise ServiceError(400, "The default namespace cannot be deleted")
            if namespace not in self._namespaces:
                raise ServiceError(404, f"Namespace {namespace!r} does not exist")
            del self._namespaces[namespace]
        return "Success"

    # -- reads -------------------------------------------------------------------------

    def fetch(self, namespace: str, body: Any) -> list[dict[str, Any] | None]:
        if not isinstance(body, dict):
            raise ServiceError(400, "fetch needs ids or a prefix")
        with self._lock:
            ns = self._ns(namespace)
            if "ids" in body:
                ids = [str(i) for i in body["ids"]]
                self._check_batch(len(ids))
                return [self._view(i, ns[i], body) if i in ns else None for i in ids]
            prefix = str(body.get("prefix", ""))
            return [self._view(i, v, body) for i, v in sorted(ns.items()) if i.startswith(prefix)]

    def range(self, namespace: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ServiceError(400, "range needs a cursor and a limit")
        limit = body.get("limit")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ServiceError(400, "limit must be a positive integer")
        self._check_batch(limit)
        cursor, prefix = str(body.get("cursor") or ""), str(body.get("prefix") or "")
        with self._lock:
            ids = sorted(i for i in self._ns(namespace) if i >= cursor and i.startswith(prefix))
            page = ids[:limit]
            ns = self._ns(namespace)
            vectors = [self._view(i, ns[i], body) for i in page]
        return {"nextCursor": ids[limit] if len(ids) > limit else "", "vectors": vectors}

    def query(self, namespace: str, body: Any, *, embed: bool = False) -> Any:
        """``/query`` (vectors), or ``/query-data`` (``embed``: texts to embed)."""
        if embed:
            self._need_model()
            body = (
                [self._embedded(q) for q in body]
                if isinstance(body, list)
                else self._embedded(body)
            )
        if isinstance(body, list):
            self._check_batch(len(body))
            results = [self._query_one(namespace, q) for q in body]
            return results[0] if len(results) == 1 else results
        return self._query_one(namespace, body)

    def _need_model(self) -> None:
        if not self.embedding_model:
            raise ServiceError(400, NO_EMBEDDING_MODEL)

    def _embedded(self, body: Any) -> Any:
        """A ``*-data`` query body with its ``data`` replaced by the embedding."""
        if not isinstance(body, dict) or not isinstance(body.get("data"), str):
            raise ServiceError(400, "Query needs data (a string)")
        rest = {k: v for k, v in body.items() if k != "data"}
        return {**rest, "vector": builtin_embedding(body["data"], self.dims)}

    def _query_one(self, namespace: str, body: Any, *, limit: int | None = None) -> list[Any]:
        if not isinstance(body, dict):
            raise ServiceError(400, "query must be a JSON object")
        if body.get("sparseVector") is not None:
            raise ServiceError(422, "This index does not support sparse vectors")
        if body.get("vector") is None:
            raise ServiceError(400, "Query needs a vector")
        vector = self._check_vector(body["vector"])
        top_k = body.get("topK", 10) if limit is None else limit
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise ServiceError(400, "topK must be a positive integer")
        if limit is None and top_k > self.max_batch:
            raise ServiceError(400, f"topK must be at most {self.max_batch}")
        expr = self._filter(body)
        with self._lock:
            scored = [
                (_score(self.metric, vector, item.vector), id_, item)
                for id_, item in self._ns(namespace).items()
                if matches(expr, item.metadata)
            ]
            scored.sort(key=lambda t: (-t[0], t[1]))
            return [{**self._view(i, v, body), "score": s} for s, i, v in scored[:top_k]]

    def resumable_start(self, namespace: str, body: Any, *, embed: bool = False) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ServiceError(400, "query must be a JSON object")
        if embed:
            self._need_model()
            body = self._embedded(body)
        everything = self._query_one(namespace, body, limit=2**62)
        top_k = body.get("topK", 10)
        if not isinstance(top_k, int) or top_k < 1:
            raise ServiceError(400, "topK must be a positive integer")
        uid = str(uuid.uuid4())
        with self._lock:
            self._resumable[uid] = everything[top_k:]
        return {"uuid": uid, "scores": everything[:top_k]}

    def resumable_next(self, body: Any) -> list[Any]:
        if not isinstance(body, dict) or not isinstance(body.get("additionalK"), int):
            raise ServiceError(400, "resumable-query-next needs uuid and additionalK")
        with self._lock:
            rest = self._resumable.get(str(body.get("uuid")))
            if rest is None:
                raise ServiceError(404, "Resumable query not found or expired")
            k = max(0, body["additionalK"])
            page, self._resumable[str(body["uuid"])] = rest[:k], rest[k:]
        return page

    def resumable_end(self, body: Any) -> str:
        with self._lock:
            if self._resumable.pop(str((body or {}).get("uuid")), None) is None:
                raise ServiceError(404, "Resumable query not found or expired")
        return "Success"

    def info(self) -> dict[str, Any]:
        with self._lock:
            namespaces = {
                name: {"vectorCount": len(ns), "pendingVectorCount": 0}
                for name, ns in self._namespaces.items()
            }
        total = sum(n["vectorCount"] for n in namespaces.values())
        similarity = SIMILARITY_FUNCTIONS[self.metric]
        return {
            "vectorCount": total,
            "pendingVectorCount": 0,
            "indexSize": total * self.dims * 4,
            "dimension": self.dims,
            "similarityFunction": similarity,
            "indexType": "DENSE",
            "denseIndex": {
                "dimension": self.dims,
                "similarityFunction": similarity,
                "embeddingModel": self.embedding_model or "",
            },
            "namespaces": namespaces,
        }

    def list_namespaces(self) -> list[str]:
        with self._lock:
            return sorted(self._namespaces)


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


__all__ = [
    "BUILTIN_MODEL",
    "NO_EMBEDDING_MODEL",
    "EmulatedIndex",
    "ServiceError",
    "builtin_embedding",
]
