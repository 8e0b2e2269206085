"""Filter translation against a real Milvus Lite engine, on a corpus of awkward values.

Every filter must give exactly the reference evaluator's answer through count, list and
search; and whenever the translation claims to be exact, the *native* Milvus expression
alone (no post-filter) must already select exactly the expected records.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from memoweave_milvus.filters import translate

from memoweave.filters import evaluate, parse_filter
from memoweave.filters.ast import And, Not, Or
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord, VectorStore

DIMS = 4
_VALUES: list[Any] = [
    None, True, False, 0, 1, 1.0, 0.0, 2, -1, 2.5, "1", "true", "", "a%b", "a_b", "x\\y",
    'q"t', "o'b", "日本語", "Straße", "PIZZA party", [1], [True], [0, 2], ["a", "b"], [],
    ["a%b", "日本語"], {"n": 1},
]  # fmt: skip
_SCOPES: list[Any] = ["alice", "Alice", "alice ", 7, True, None, "x" * 600, 'o"\\n', "李雷"]
_MISSING = object()


def _payload(i: int) -> dict[str, Any]:
    payload: dict[str, Any] = {"i": i}
    value = _VALUES[i % len(_VALUES)]
    if i % 9 != 8:  # every ninth record lacks the key entirely
        payload["v"] = value
    scope = _SCOPES[i % len(_SCOPES)]
    if i % 7 != 6:
        payload["user_id"] = scope
    return payload


def _vector(i: int) -> list[float]:
    return [math.cos(i), math.sin(i), 0.5, (i % 5) / 5 + 0.1]


CORPUS = [VectorRecord(str(uuid.UUID(int=i + 1)), _vector(i), _payload(i)) for i in range(60)]

FILTERS: list[Any] = [
    *({"v": v} for v in (True, False, 0, 1, 1.0, 2, -1, 2.5, "1", "", "a%b", 'q"t', "日本語")),
    *({"v": {"ne": v}} for v in (True, 0, 1, 2, "1", "", "x\\y", "o'b")),
    {"v": {"in": [1, "1", True]}}, {"v": {"in": ["a_b", "Straße"]}}, {"v": {"nin": [0, "true"]}},
    {"v": {"nin": ["", "日本語"]}},
    *({"v": {op: n}} for op in ("gt", "gte", "lt", "lte") for n in (-1, 0, 0.5, 1, 2)),
    *({"v": {"contains": c}} for c in ("a", "%", "_", "\\", "a%b", "", "日本", 1, 0, True, 2, "b")),
    *({"v": {"icontains": c}} for c in ("pizza", "STRASSE", "A%B", "日本")),
    {"v": "*"}, {"NOT": {"v": "*"}}, {"user_id": "*"}, {"NOT": {"user_id": "*"}},
    *({"user_id": u} for u in ("alice", "Alice", "alice ", 7, True, "x" * 600, 'o"\\n', "李雷")),
    {"user_id": {"ne": "alice"}}, {"user_id": {"in": ["alice", "李雷"]}},
    {"user_id": {"nin": ["alice", "Alice"]}}, {"user_id": {"contains": "lic"}},
    {"NOT": {"v": {"gt": 0}}}, {"NOT": {"v": {"contains": "a"}}}, {"NOT": {"v": True}},
    {"NOT": [{"v": 1}, {"user_id": "alice"}]},
    {"OR": [{"v": {"lt": 0}}, {"user_id": {"in": ["Alice", "alice "]}}]},
    {"AND": [{"user_id": "alice"}, {"NOT": {"v": {"icontains": "A"}}}]},
    {"i": {"gte": 10, "lt": 20}}, Or(()), And(()), Not(Or(())),
]  # fmt: skip


@pytest.fixture(scope="module")
def loaded_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[VectorStore, str]]:
    path = str(tmp_path_factory.mktemp("milvus_filters") / "f.db")
    store = load_registry().create("vector_store", "milvus", {"uri": path})
    store.ensure_collection("filters", DIMS, "cosine")
    store.upsert(CORPUS)
    yield store, path
    store.close()


def _ids(items: Any) -> list[str]:
    return sorted(item.id for item in items)


def _list_all(store: VectorStore, node: Any) -> list[str]:
    out, cursor = [], None
    while True:
        page = store.list(filter=node, limit=7, cursor=cursor)
        out.extend(r.id for r in page.records)
        cursor = page.next_cursor
        if cursor is None:
            return out


@pytest.mark.parametrize("spec", FILTERS, ids=[repr(f)[:60] for f in FILTERS])
def test_filter_agrees_with_reference_evaluator(
    loaded_store: tuple[VectorStore, str], spec: Any
) -> None:
    store, path = loaded_store
    node = parse_filter(spec)
    expected = sorted(r.id for r in CORPUS if evaluate(node, r.payload))
    listed = _list_all(store, node)
    assert len(listed) == len(set(listed))
    assert sorted(listed) == expected
    assert store.count(filter=node) == len(expected)
    assert _ids(store.search(_vector(3), top_k=100, filter=node)) == expected
    tr = translate(node)
    if tr.exact and not tr.empty:
        from pymilvus import MilvusClient

        raw = MilvusClient(path)  # the same in-process Lite server
        try:
            rows = raw.query("filters", filter=tr.expr, output_fields=["id"], limit=1000)
        finally:
            raw.close()
        assert sorted(r["id"] for r in rows) == expected, f"native {tr.expr!r} is not exact"


def test_common_scope_filters_run_natively() -> None:
    for spec in ({"user_id": "alice"}, {"user_id": "alice", "agent_id": "a", "run_id": "r"}):
        assert translate(parse_filter(spec)).exact
