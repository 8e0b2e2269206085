"""Export / import round trips, idempotence, validation and re-embedding on real stores."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import ValidationError
from memoweave.memory import Memory
from memoweave.stores.graph_memory import InMemoryGraphStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder
from memoweave.transfer import export_jsonl, import_jsonl

from .conftest import MakeMemory, sample_lines, write_export


def _export(memory: Any, **kwargs: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = io.StringIO()
    export_jsonl(memory, out, **kwargs)
    header, *lines = [json.loads(line) for line in out.getvalue().splitlines()]
    return header, sorted(lines, key=lambda line: line["id"])


def test_round_trip_across_two_stores_gives_the_same_records(
    make_memory: MakeMemory, tmp_path: Path
) -> None:
    source = write_export(tmp_path / "in.jsonl", sample_lines(6))
    edge, plain = make_memory("qdrant"), make_memory("memory")
    report = import_jsonl(edge, source)
    assert (report.records, report.written, report.invalid) == (6, 6, [])
    assert report.embedded == 6  # no vectors in the file
    header, first = _export(edge, with_vectors=True)
    assert header["format"] == "memoweave-export" and header["count"] == 6
    again = tmp_path / "edge.jsonl"
    with again.open("w") as out:
        export_jsonl(edge, out, with_vectors=True)
    report = import_jsonl(plain, again)
    assert (report.written, report.vectors_reused, report.embedded) == (6, 6, 0)
    _, second = _export(plain, with_vectors=True)
    assert second == first
    by_id = {line["id"]: line for line in first}
    original = sample_lines(6)
    superseded = by_id[original[0]["id"]]
    assert superseded["status"] == "superseded"
    assert superseded["superseded_by"] == original[1]["id"]
    assert superseded["metadata"] == {"topic": "home", "priority": 2}
    assert [e["event"] for e in superseded["history"]] == ["ADD", "SUPERSEDE"]
    assert by_id[original[2]["id"]]["run_id"] == "r=1"
    assert by_id[original[3]["id"]]["metadata"] == {"nested": {"a": [1, 2]}}
    # the imported memories are live memories: scoped reads, search and history work
    hits = plain.search("Where does she live now? Berlin", user_id="maya", top_k=3)["results"]
    assert hits[0]["id"] == original[1]["id"]
    assert plain.get(original[2]["id"], agent_id="support/bot")["memory_type"] == (
        "procedural_memory"
    )
    assert len(plain.history(original[0]["id"])) == 2


def test_export_of_one_scope(make_memory: MakeMemory, tmp_path: Path) -> None:
    memory = make_memory()
    import_jsonl(memory, write_export(tmp_path / "in.jsonl", sample_lines(12)))
    header, lines = _export(memory, user_id="maya")
    assert header["source"]["scope"] == {"user_id": "maya"}
    assert {line["user_id"] for line in lines} == {"maya"} and len(lines) == 3
    assert all("vector" not in line for line in lines)


def test_import_twice_adds_nothing(make_memory: MakeMemory, tmp_path: Path) -> None:
    memory = make_memory()
    source = write_export(tmp_path / "in.jsonl", sample_lines(8))
    first = import_jsonl(memory, source)
    second = import_jsonl(memory, source)
    assert (first.written, first.events_added) == (8, 8)
    assert (second.written, second.unchanged, second.events_added, second.embedded) == (0, 8, 0, 0)
    assert memory._providers.vector_store.count() == 8
    assert len(memory.history(sample_lines()[0]["id"])) == 2


def test_bad_lines_are_reported_and_nothing_is_written(
    make_memory: MakeMemory, tmp_path: Path
) -> None:
    lines = sample_lines(5)
    bad = [
        {**lines[4], "id": "not-a-uuid"},
        {**lines[4], "id": lines[4]["id"].replace("5", "6"), "memory": "  "},
        {**lines[4], "id": lines[4]["id"].replace("5", "7"), "user_id": None},
        {**lines[4], "id": lines[4]["id"].replace("5", "8"), "metadata": {"user_id": "eve"}},
        {**lines[4], "id": lines[4]["id"].replace("5", "9"), "colour": "red"},
        lines[0],  # duplicate id
    ]
    source = write_export(tmp_path / "in.jsonl", lines + bad, raw=["{not json"])
    memory = make_memory()
    with pytest.raises(ValidationError) as caught:
        import_jsonl(memory, source)
    errors = caught.value.details["errors"]
    assert [e["line"] for e in errors] == [7, 8, 9, 10, 11, 12, 13]
    reasons = [e["reason"] for e in errors]
    assert "not a UUID" in reasons[0]
    assert "memory must be a non-empty string" in reasons[1]
    assert "at least one of user_id" in reasons[2]
    assert "identity key 'user_id'" in reasons[3]
    assert "unknown field 'colour'" in reasons[4]
    assert "already appears on line 2" in reasons[5]
    assert "invalid JSON" in reasons[6]
    assert "line 7" in caught.value.message
    assert memory._providers.vector_store.count() == 0
    assert memory.history(lines[0]["id"]) == []

    report = import_jsonl(memory, source, skip_invalid=True)
    assert (report.written, len(report.invalid)) == (5, 7)
    assert report.as_dict()["errors"][0] == {"line": 7, "reason": reasons[0]}


def test_an_id_of_another_scope_is_never_overwritten(
    make_memory: MakeMemory, tmp_path: Path
) -> None:
    memory = make_memory()
    lines = sample_lines(4)
    import_jsonl(memory, write_export(tmp_path / "a.jsonl", lines))
    hostile = [{**lines[1], "user_id": "eve", "memory": "Eve owns this now"}]
    with pytest.raises(ValidationError) as caught:
        import_jsonl(memory, write_export(tmp_path / "b.jsonl", hostile))
    assert "another scope" in caught.value.details["errors"][0]["reason"]
    assert memory.get(lines[1]["id"])["memory"] == "Moved to Berlin in June 2024"


def test_header_and_file_errors(make_memory: MakeMemory, tmp_path: Path) -> None:
    memory = make_memory()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(ValidationError, match="header"):
        import_jsonl(memory, bad)
    bad.write_text('{"format": "memoweave-export", "version": 99}\n')
    with pytest.raises(ValidationError, match="version 99"):
        import_jsonl(memory, bad)
    with pytest.raises(ValidationError, match="no such file"):
        import_jsonl(memory, tmp_path / "missing.jsonl")
    with pytest.raises(ValidationError, match="batch_size"):
        import_jsonl(memory, bad, batch_size=0)
    with pytest.raises(ValidationError, match="user_id"):
        export_jsonl(memory, io.StringIO(), user_id="")


def test_vectors_of_another_embedder_are_re_embedded(
    make_memory: MakeMemory, tmp_path: Path
) -> None:
    source = make_memory(embedder=HashingEmbedder(dims=32))
    import_jsonl(source, write_export(tmp_path / "in.jsonl", sample_lines(5)))
    exported = tmp_path / "with-vectors.jsonl"
    with exported.open("w") as out:
        export_jsonl(source, out, with_vectors=True)
    target = make_memory(embedder=HashingEmbedder(dims=64))
    report = import_jsonl(target, exported)
    assert (report.embedded, report.vectors_reused) == (5, 0)
    stored = target._providers.vector_store.get([sample_lines()[1]["id"]], with_vectors=True)
    expected = HashingEmbedder(dims=64).embed(["Moved to Berlin in June 2024"])[0]
    assert stored[0].vector == pytest.approx(expected)


def test_import_from_a_stream(make_memory: MakeMemory, tmp_path: Path) -> None:
    memory = make_memory()
    text = write_export(tmp_path / "in.jsonl", sample_lines(4)).read_text()
    seen: list[tuple[int, int]] = []
    report = import_jsonl(
        memory, io.StringIO(text), batch_size=3, progress=lambda *a: seen.append(a)
    )
    assert report.written == 4 and seen == [(3, 4), (4, 4)]


def test_imported_memories_get_their_graph_relations(tmp_path: Path) -> None:
    line = {**sample_lines(5)[-1], "id": "00000000-0000-0000-0000-0000000000aa"}
    line["memory"] = "Caroline met Melanie in Boston"
    graph = InMemoryGraphStore()
    config = {"history_db_path": str(tmp_path / "h.db")}
    with Memory(
        config, embedder=HashingEmbedder(), vector_store=InMemoryVectorStore(), graph_store=graph
    ) as memory:
        import_jsonl(memory, write_export(tmp_path / "in.jsonl", [line]))
        scope = {k: line[k] for k in ("user_id", "agent_id", "run_id") if line.get(k)}
        assert {r.memory_id for r in graph.relations(scope)} == {line["id"]}
        assert ("caroline", "co_mentioned", "melanie") in {
            r.triple() for r in graph.relations(scope)
        }
