"""The Milvus collection layout of a memoweave store and the record <-> row codec.

Fields (explicit schema, no dynamic fields):

- ``id`` VARCHAR primary key; ``vector`` FLOAT_VECTOR(dims);
- ``user_id`` ``agent_id`` ``run_id`` ``actor_id``: nullable VARCHAR copies of the scope
  keys with an INVERTED index (``NULL`` when the payload value is missing, not a string, or
  longer than :data:`SCOPE_MAX_BYTES`);
- ``text``: the memory text (``payload["memory"]``), VARCHAR truncated to
  :data:`TEXT_MAX_BYTES` UTF-8 bytes at a character boundary, analysed for BM25 when
  keyword search is enabled (``text_sparse`` is its BM25 SPARSE_FLOAT_VECTOR);
- ``hash``, ``created_at``, ``updated_at``: nullable VARCHAR copies when present;
- ``payload``: the complete payload as JSON, the source of truth returned by ``get``.

The vendor SDK is imported inside the functions that need it.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any

from memoweave.errors import ValidationError, VectorStoreError
from memoweave.providers.vector_store import SCOPE_KEYS, TEXT_FIELD, VectorRecord

ID_MAX_BYTES = 128
SCOPE_MAX_BYTES = 512
TEXT_MAX_BYTES = 65_535
SMALL_MAX_BYTES = 256
SCOPE_COLUMNS: tuple[str, ...] = tuple(SCOPE_KEYS)
EXTRA_COLUMNS: tuple[str, ...] = ("hash", "created_at", "updated_at")
TEXT_COLUMN = "text"
SPARSE_COLUMN = "text_sparse"
BM25_FUNCTION = "memoweave_bm25"
METRICS: dict[str, str] = {"cosine": "COSINE", "dot": "IP", "euclidean": "L2"}
MAX_DIMS = 32_768


def truncate_utf8(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes without splitting a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


def _short(value: Any, max_bytes: int) -> str | None:
    if isinstance(value, str) and len(value.encode("utf-8")) <= max_bytes:
        return value
    return None


def check_vector(vector: Any, dims: int, what: str = "vector") -> list[float]:
    """``vector`` as a list of ``dims`` finite floats, or a typed error."""
    if isinstance(vector, (str, bytes)) or not hasattr(vector, "__len__"):
        raise ValidationError(f"{what} must be a sequence of floats, got {type(vector).__name__}")
    if len(vector) != dims:
        raise VectorStoreError(
            f"{what} has {len(vector)} dimensions, the collection has {dims}",
            hint="Use the same embedder (and dims) the collection was created with.",
            details={"expected": dims, "got": len(vector)},
        )
    for kind in set(map(type, vector)):  # per distinct type: fast on long vectors
        if kind is bool or not issubclass(kind, numbers.Real):
            raise ValidationError(f"{what} must contain numbers, got a {kind.__name__}")
    out = list(map(float, vector))
    if not all(map(math.isfinite, out)):
        raise ValidationError(f"{what} must contain finite numbers (no NaN or infinity)")
    return out


def check_id(record_id: Any) -> str:
    """A valid record id (non-empty string of at most :data:`ID_MAX_BYTES` bytes)."""
    if not isinstance(record_id, str) or not record_id:
        raise ValidationError(f"record id must be a non-empty string, got {record_id!r}")
    if len(record_id.encode("utf-8")) > ID_MAX_BYTES:
        raise ValidationError(f"record id is longer than {ID_MAX_BYTES} bytes: {record_id!r}")
    return record_id


def check_payload(payload: Any) -> tuple[dict[str, Any], int]:
    """A copy of ``payload`` (a JSON-serialisable dict with string keys) and its JSON size."""
    if not isinstance(payload, Mapping):
        raise ValidationError(f"payload must be a dict, got {type(payload).__name__}")
    for key in payload:
        if not isinstance(key, str):
            raise ValidationError(f"payload keys must be strings, got {key!r}")
    try:
        encoded = json.dumps(payload, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"payload is not JSON-serialisable: {exc}") from exc
    return dict(payload), len(encoded.encode("utf-8"))


def to_row(record: VectorRecord, dims: int, with_text: bool) -> tuple[dict[str, Any], int]:
    """The Milvus row of a validated record and its approximate size in bytes.

    The caller's objects are not modified.
    """
    if not isinstance(record, VectorRecord):
        raise ValidationError(f"expected a VectorRecord, got {type(record).__name__}")
    payload, size = check_payload(record.payload)
    row: dict[str, Any] = {
        "id": check_id(record.id),
        "vector": check_vector(record.vector, dims),
        "payload": payload,
    }
    for key in SCOPE_COLUMNS:
        row[key] = _short(payload.get(key), SCOPE_MAX_BYTES)
    for key in EXTRA_COLUMNS:
        row[key] = _short(payload.get(key), SMALL_MAX_BYTES)
    size += 8 * dims
    if with_text:
        text = payload.get(TEXT_FIELD)
        row[TEXT_COLUMN] = truncate_utf8(text, TEXT_MAX_BYTES) if isinstance(text, str) else ""
        size += len(row[TEXT_COLUMN]) * 3
    return row, size


def build_schema(
    dims: int, *, with_text: bool, analyzer_params: dict[str, Any] | None, metric: str
) -> Any:
    """The ``CollectionSchema`` of a memoweave collection."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    schema = MilvusClient.create_schema(
        auto_id=False,
        enable_dynamic_field=False,
        description=f"memoweave collection (metric={metric})",
    )
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX_BYTES)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dims)
    for key in SCOPE_COLUMNS:
        schema.add_field(key, DataType.VARCHAR, max_length=SCOPE_MAX_BYTES, nullable=True)
    for key in EXTRA_COLUMNS:
        schema.add_field(key, DataType.VARCHAR, max_length=SMALL_MAX_BYTES, nullable=True)
    schema.add_field("payload", DataType.JSON)
    if with_text:
        text_kwargs: dict[str, Any] = {"enable_analyzer": True}
        if analyzer_params:
            text_kwargs["analyzer_params"] = analyzer_params
        schema.add_field(TEXT_COLUMN, DataType.VARCHAR, max_length=TEXT_MAX_BYTES, **text_kwargs)
        schema.add_field(SPARSE_COLUMN, DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name=BM25_FUNCTION,
                function_type=FunctionType.BM25,
                input_field_names=[TEXT_COLUMN],
                output_field_names=[SPARSE_COLUMN],
            )
        )
    return schema


def build_indexes(
    client: Any,
    *,
    metric: str,
    index_type: str,
    index_params: dict[str, Any],
    with_text: bool,
) -> list[Any]:
    """One ``IndexParams`` per index (vector, BM25 sparse, scope columns)."""
    out = []

    def one(field: str, **kwargs: Any) -> None:
        params = client.prepare_index_params()
        params.add_index(field_name=field, index_name=field, **kwargs)
        out.append(params)

    one("vector", index_type=index_type, metric_type=METRICS[metric], params=index_params)
    if with_text:
        one(SPARSE_COLUMN, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params={})
    for key in SCOPE_COLUMNS:
        one(key, index_type="INVERTED")
    return out


def describe_layout(description: Mapping[str, Any]) -> dict[str, Any]:
    """``{"dims", "has_text", "ours"}`` read from ``describe_collection`` output."""
    fields = {f["name"]: f for f in description.get("fields", [])}
    vector = fields.get("vector", {})
    dims = vector.get("params", {}).get("dim")
    functions = description.get("functions", []) or []
    has_text = SPARSE_COLUMN in fields and any(f.get("name") == BM25_FUNCTION for f in functions)
    ours = "id" in fields and "payload" in fields and dims is not None
    return {"dims": int(dims) if dims is not None else None, "has_text": has_text, "ours": ours}
