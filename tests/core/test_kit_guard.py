"""The conformance kit's own rules: the override guard, the Troubleshooting docstrings, the
lazy package exports, and (in a real pytest run) xfail overrides and assertion rewriting."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memoweave.testing as kit
from memoweave.testing.guard import (
    GUARD_TEST,
    find_guard_violations,
    has_reasoned_xfail,
    standard_test_names,
    suite_of,
)

SUITES = [
    kit.VectorStoreConformance,
    kit.LLMConformance,
    kit.EmbedderConformance,
    kit.RerankerConformance,
]


def test_unchanged_subclass_has_no_violations() -> None:
    class Plain(kit.VectorStoreConformance):
        pass

    assert suite_of(Plain) is kit.VectorStoreConformance
    assert find_guard_violations(Plain) == []
    Plain().test_no_overrides_DO_NOT_OVERRIDE()


def test_override_without_xfail_is_reported() -> None:
    class Sneaky(kit.LLMConformance):
        def test_json_object_mode(self, llm: object) -> None:
            pass

    problems = find_guard_violations(Sneaky)
    assert len(problems) == 1 and "test_json_object_mode" in problems[0]
    with pytest.raises(AssertionError, match="test_json_object_mode"):
        Sneaky().test_no_overrides_DO_NOT_OVERRIDE()


@pytest.mark.parametrize("value", [None, 0, "skip me"])
def test_deleted_test_is_reported(value: object) -> None:
    class Deleting(kit.EmbedderConformance):
        test_deterministic = value

    [problem] = find_guard_violations(Deleting)
    assert "test_deterministic" in problem and "deleted" in problem


def test_override_with_reasoned_xfail_is_allowed() -> None:
    class Honest(kit.RerankerConformance):
        @pytest.mark.xfail(reason="the engine rounds scores to integers")
        def test_unicode_documents(self, reranker: object) -> None:
            super().test_unicode_documents(reranker)  # type: ignore[arg-type]

    assert find_guard_violations(Honest) == []


@pytest.mark.parametrize(
    "mark",
    [
        pytest.mark.xfail,
        pytest.mark.xfail(reason=""),
        pytest.mark.xfail(reason="   "),
        pytest.mark.skip(reason="not supported"),
    ],
    ids=["bare", "empty-reason", "blank-reason", "skip-instead"],
)
def test_override_with_unreasoned_or_other_mark_is_reported(mark: pytest.MarkDecorator) -> None:
    def test_top_k_above_document_count(self: object, reranker: object) -> None:
        pass

    decorated = mark(test_top_k_above_document_count)
    Marked = type("Marked", (kit.RerankerConformance,), {decorated.__name__: decorated})
    assert not has_reasoned_xfail(decorated)
    [problem] = find_guard_violations(Marked)
    assert "test_top_k_above_document_count" in problem


def test_violations_in_an_intermediate_base_are_seen() -> None:
    class Base(kit.VectorStoreConformance):
        test_new_collection_is_empty = None  # type: ignore[assignment]

    class Leaf(Base):
        pass

    assert any("test_new_collection_is_empty" in p for p in find_guard_violations(Leaf))


def test_overriding_the_guard_itself_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=GUARD_TEST):
        type("Cheater", (kit.LLMConformance,), {GUARD_TEST: lambda self: None})


def test_class_outside_any_suite_is_rejected() -> None:
    with pytest.raises(TypeError, match="conformance suite"):
        suite_of(int)


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.__name__)
def test_every_standard_test_ends_with_troubleshooting(suite: type) -> None:
    names = standard_test_names(suite)
    assert GUARD_TEST in names
    missing = []
    for name in names:
        doc = inspect.getdoc(getattr(suite, name)) or ""
        paragraphs = [p for p in doc.split("\n\n") if p.strip()]
        last = paragraphs[-1] if paragraphs else ""
        if len(paragraphs) < 2 or not last.startswith("Troubleshooting:") or len(last) < 40:
            missing.append(name)
    assert not missing, f"{suite.__name__}: no closing Troubleshooting paragraph in {missing}"


def test_suite_sizes() -> None:
    sizes = {s.__name__: len(standard_test_names(s)) for s in SUITES}
    assert sizes["VectorStoreConformance"] >= 40, sizes
    assert min(sizes.values()) >= 8, sizes


def test_package_exports_are_lazy_and_complete() -> None:
    for name in kit.__all__:
        assert getattr(kit, name) is not None
    assert set(kit.__all__) <= set(dir(kit))
    with pytest.raises(AttributeError):
        kit.NoSuchThing  # noqa: B018


PLUGIN_LIKE_TESTS = """
import pytest

from memoweave.plugins import load_registry
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing import VectorStoreConformance


class CountsOneTooMany(InMemoryVectorStore):
    def count(self, *, filter=None):
        return super().count(filter=filter) + 1


class TestHonest(VectorStoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path):
        return lambda: load_registry().create("vector_store", "memory", {})

    @pytest.mark.xfail(reason="demonstrates a reasoned expected failure", strict=True)
    def test_new_collection_is_empty(self, vector_store):
        vector_store.upsert([])
        assert vector_store.count() == 1


class TestSneaky(TestHonest):
    def test_drop_collection_empties_it(self, vector_store, collection_name):
        pass


class TestBroken(VectorStoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path):
        return lambda: CountsOneTooMany()
"""


def test_real_pytest_run_reports_guard_xfail_and_rewritten_asserts(tmp_path: Path) -> None:
    module = tmp_path / "test_plugin_like.py"
    module.write_text(textwrap.dedent(PLUGIN_LIKE_TESTS))
    selection = "no_overrides or new_collection_is_empty"
    args = ["-q", "-p", "no:cacheprovider", "-rfx", "--rootdir", str(tmp_path), str(module)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "-k", selection],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )
    out = result.stdout + result.stderr
    assert "FAILED test_plugin_like.py::TestSneaky::test_no_overrides_DO_NOT_OVERRIDE" in out, out
    assert "test_drop_collection_empties_it: overridden without" in out, out
    assert "XFAIL test_plugin_like.py::TestHonest::test_new_collection_is_empty" in out, out
    assert "FAILED test_plugin_like.py::TestBroken::test_new_collection_is_empty" in out, out
    # assertion rewriting of the kit module shows the compared values
    assert "assert 1 == 0" in out, out
    assert "2 failed, 2 passed" in out and "2 xfailed" in out, out
