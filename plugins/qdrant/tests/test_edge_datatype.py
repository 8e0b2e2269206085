"""How Qdrant Edge stores a collection's original vectors (issue 14): a new collection as
float16 unless configured otherwise; an existing one always with the datatype it was
created with (recorded in its metadata; none recorded means float32), so opening never
converts a stored vector."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoweave.errors import ConfigError, VectorStoreError
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord

DIMS = 64
F16_STEP = 2.0**-11
"""Relative rounding of a float16 component (11 significant bits)."""


def _vectors(n: int, seed: int = 7) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _id(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def _records(vectors: np.ndarray) -> list[VectorRecord]:
    return [VectorRecord(_id(i), v.tolist(), {"n": i}) for i, v in enumerate(vectors)]


def _stored(root: Path, name: str) -> tuple[str, str | None]:
    """The datatype in memoweave's metadata and in the shard's own configuration."""
    meta = json.loads((root / name / "memoweave.json").read_text())
    shard = json.loads((root / name / "shard" / "edge_config.json").read_text())
    return meta.get("datatype", "-"), shard["vectors"][""].get("datatype")


def _read_back(store: Any, n: int) -> np.ndarray:
    records = store.get([_id(i) for i in range(n)], with_vectors=True)
    return np.array([r.vector for r in records])


def test_a_new_collection_stores_float16_and_scores_within_its_rounding(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    root = tmp_path / "edge"
    store = qdrant_make_store(
        {"partitions": 1, "path": str(root), "index_threshold_kb": 16}
    )  # 64 vectors
    store.ensure_collection("c", DIMS)
    vectors = _vectors(600)
    store.upsert(_records(vectors))
    assert _stored(root, "c") == ("float16", "float16")
    back = _read_back(store, 600)
    assert np.abs(back - vectors).max() <= F16_STEP  # components of a unit vector
    assert np.abs(back - vectors).max() > 0  # really float16, not float32
    for probe in (3, 250, 599):
        hits = store.search(vectors[probe].tolist(), top_k=10)
        exact = vectors @ vectors[probe]
        assert hits[0].id == _id(probe)
        assert [h.score for h in hits] == pytest.approx(np.sort(exact)[::-1][:10], abs=1e-3)
    store.close()

    again = qdrant_make_store({"partitions": 1, "path": str(root), "vector_datatype": "float32"})
    again.ensure_collection("c", DIMS)  # configured float32: the collection stays float16
    assert np.array_equal(_read_back(again, 600), back)
    again.upsert(_records(vectors[:1]))
    assert _stored(root, "c") == ("float16", "float16")
    again.close()


def test_an_existing_float32_collection_stays_float32(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """Created as float32 (configured, or before the datatype was recorded), reopened
    with the float16 default, written and indexed: every vector still float32 exactly."""
    root = tmp_path / "edge"
    vectors = _vectors(600, seed=3)
    store = qdrant_make_store(
        {"partitions": 1, "path": str(root), "index_threshold_kb": 16, "vector_datatype": "float32"}
    )
    store.ensure_collection("configured", DIMS)
    store.upsert(_records(vectors[:300]))
    store.close()
    meta = root / "configured" / "memoweave.json"
    assert _stored(root, "configured") == ("float32", None)
    meta.write_text(json.dumps({"dims": DIMS, "metric": "cosine"}))  # as older releases

    again = qdrant_make_store({"partitions": 1, "path": str(root), "index_threshold_kb": 16})
    again.ensure_collection("configured", DIMS)
    again.upsert(_records(vectors)[300:])  # fills and indexes new segments
    assert again._engine.shards.loaded[0]._shard.info().indexed_vectors_count >= 300
    assert np.abs(_read_back(again, 600) - vectors).max() <= 1e-6  # float16: ~1e-4
    assert _stored(root, "configured") == ("-", None)  # nothing rewritten
    again.close()


def test_an_unknown_recorded_datatype_is_refused_and_nothing_changes(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    root = tmp_path / "edge"
    store = qdrant_make_store({"partitions": 1, "path": str(root)})
    store.ensure_collection("c", DIMS)
    store.upsert(_records(_vectors(5)))
    store.close()
    meta = root / "c" / "memoweave.json"
    meta.write_text(json.dumps({"dims": DIMS, "metric": "cosine", "datatype": "int4"}))
    with pytest.raises(VectorStoreError, match="cannot be opened"):
        qdrant_make_store({"partitions": 1, "path": str(root)}).ensure_collection("c", DIMS)
    assert json.loads(meta.read_text())["datatype"] == "int4"
    meta.write_text(json.dumps({"dims": DIMS, "metric": "cosine", "datatype": "float16"}))
    again = qdrant_make_store({"partitions": 1, "path": str(root)})
    again.ensure_collection("c", DIMS)
    assert again.count() == 5


@pytest.mark.parametrize(
    "config",
    [
        {"path": "x", "vector_datatype": "int8"},
        {"path": "x", "vector_datatype": 16},
        {"mode": "local", "path": "x", "vector_datatype": "float16"},
        {"url": "http://localhost:6333", "vector_datatype": "float32"},
    ],
)
def test_the_datatype_is_checked(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        load_registry().create("vector_store", "qdrant", config)
