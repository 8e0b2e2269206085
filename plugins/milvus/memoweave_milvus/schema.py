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
from collections.abc import Mapping
from typing import Any

from memoweave.errors import ValidationError
from memoweave.providers import store_checks
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


def check_id(record_id: Any, where: str = "id") -> str:
    """A contract id (``store_checks.check_id``) of at most :data:`ID_MAX_BYTES` bytes."""
    store_checks.check_id(record_id, where)
    if len(record_id.encode("utf-8")) > ID_MAX_BYTES:
        raise ValidationError(f"{where} is longer than {ID_MAX_BYTES} bytes: {record_id!r}")
    return str(record_id)


def check_ids(ids: Any) -> list[str]:
    """``store_checks.check_ids``, each id at most :data:`ID_MAX_BYTES` bytes."""
    return [check_id(i, f"ids[{n}]") for n, i in enumerate(store_checks.check_ids(ids))]


def to_row(record: VectorRecord, dims: int, with_text: bool) -> tuple[dict[str, Any], int]:
    """The Milvus row of a record checked by ``store_checks.check_records`` and its
    approximate size in bytes."""
    payload = record.payload
    size = len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
    row: dict[str, Any] = {"id": check_id(record.id), "vector": record.vector, "payload": payload}
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
