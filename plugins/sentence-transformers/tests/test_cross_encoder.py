"""The cross-encoder reranker on a tiny real model built by the test (see conftest.py).

Expected scores come from the same model run directly through transformers, so these
tests check the provider's plumbing: scoring every pair, ordering, top_k and indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import ConfigError, RerankerError, ValidationError
from memoweave.plugins import load_registry

QUERY = "Where does the user live?"
DOCS = [
    "The user enjoys playing tennis on weekends.",
    "The user lives in Lisbon, Portugal.",
    "Photosynthesis converts light into chemical energy.",
    "The user's sister lives in Madrid.",
    "Bananas are rich in potassium.",
    "",
]

Reference = Callable[[Path, str, list[str]], list[float]]


def _cross_encoder(model: Path, **config: Any) -> Any:
    return load_registry().create("reranker", "cross-encoder", {"model": str(model), **config})


@pytest.fixture(scope="module")
def st_ce(st_tiny_cross_encoder: Path) -> Iterator[Any]:
    provider = _cross_encoder(st_tiny_cross_encoder, batch_size=2)
    yield provider
    provider.close()


def test_scores_and_order_match_the_model(
    st_ce: Any, st_tiny_cross_encoder: Path, st_tiny_cross_encoder_reference: Reference
) -> None:
    expected = st_tiny_cross_encoder_reference(st_tiny_cross_encoder, QUERY, DOCS)
    gaps = sorted(abs(a - b) for i, a in enumerate(expected) for b in expected[i + 1 :])
    assert gaps[0] > 1e-4, "the test model's scores must be distinct for a meaningful order"
    expected_order = sorted(range(len(DOCS)), key=lambda i: -expected[i])

    ranked = st_ce.rerank(QUERY, DOCS, len(DOCS))
    assert [r.index for r in ranked] == expected_order
    assert [r.text for r in ranked] == [DOCS[i] for i in expected_order]
    for r in ranked:
        assert r.score == pytest.approx(expected[r.index], abs=1e-5)


def test_top_k_keeps_the_best(st_ce: Any) -> None:
    full = st_ce.rerank(QUERY, DOCS, 10)
    top = st_ce.rerank(QUERY, DOCS, 2)
    assert len(full) == len(DOCS)
    assert [r.index for r in top] == [r.index for r in full[:2]]


def test_multi_label_model_is_rejected(
    tmp_path: Path, st_build_cross_encoder: Callable[..., Path]
) -> None:
    model_dir = st_build_cross_encoder(tmp_path, num_labels=3)
    with pytest.raises(RerankerError) as info:
        _cross_encoder(model_dir)
    assert "3 output labels" in info.value.message


def test_missing_model_raises_reranker_error(tmp_path: Path) -> None:
    with pytest.raises(RerankerError) as info:
        _cross_encoder(tmp_path / "missing")
    assert "never downloads" in info.value.hint


def test_model_is_required() -> None:
    with pytest.raises(ConfigError):
        load_registry().create("reranker", "cross-encoder", {})


def test_bad_arguments_raise_validation_error(st_ce: Any) -> None:
    with pytest.raises(ValidationError):
        st_ce.rerank(None, DOCS, 3)
    with pytest.raises(ValidationError):
        st_ce.rerank(QUERY, "one document", 3)
    with pytest.raises(ValidationError):
        st_ce.rerank(QUERY, DOCS, True)


def test_rerank_after_close_raises(st_tiny_cross_encoder: Path) -> None:
    provider = _cross_encoder(st_tiny_cross_encoder)
    provider.close()
    provider.close()
    assert provider.rerank(QUERY, [], 3) == []
    with pytest.raises(RerankerError):
        provider.rerank(QUERY, DOCS, 3)
