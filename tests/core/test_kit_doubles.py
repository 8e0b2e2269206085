"""The model suites' own logic, exercised with the core's doubles and tiny real providers.

The doubles are not providers, so no suite is *run* against them as a plugin would; instead
each standard test method is called directly to show that it passes for a correct
implementation and fails for a specific bug. The remote checks run against real sockets
(a closed port and the kit's 500-server) through a minimal urllib client.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import ValidationError as PydanticValidationError

from memoweave.errors import LLMError, RerankerError, ValidationError
from memoweave.providers.embedder import Purpose
from memoweave.providers.llm import (
    LLM,
    LLMCapabilities,
    LLMResponse,
    Message,
    ResponseSchema,
    Usage,
)
from memoweave.providers.reranker import RankedDocument, Reranker
from memoweave.testing import (
    ERROR_MARKER,
    EmbedderConformance,
    LLMConformance,
    RerankerConformance,
    error_server,
    free_port,
)
from memoweave.testing.doubles import MALFORMED_JSON, HashingEmbedder, ScriptedLLM
from memoweave.testing.guard import standard_test_names
from memoweave.testing.llm import SCHEMA, schema_errors


def _cases(method: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """``(suffix, extra args)`` per case of a standard test (its ``parametrize`` values)."""
    marks = [m for m in getattr(method, "pytestmark", []) if m.name == "parametrize"]
    if not marks:
        return [("", ())]
    return [(f"[{value}]", (value,)) for value in marks[0].args[1]]


def _run_all(suite: Any, provider: Any) -> dict[str, str]:
    """Call every provider-taking standard test of ``suite``; outcome per test name
    (``name[value]`` for parametrized ones)."""
    outcomes: dict[str, str] = {}
    for name in standard_test_names(type(suite)):
        method = getattr(suite, name)
        params = [p for p in method.__code__.co_varnames[1 : method.__code__.co_argcount]]
        for suffix, extra in _cases(method):
            try:
                method(*([provider] if params else []), *extra)
                outcomes[name + suffix] = "passed"
            except pytest.skip.Exception:
                outcomes[name + suffix] = "skipped"
            except (AssertionError, pytest.fail.Exception, PydanticValidationError) as exc:
                outcomes[name + suffix] = f"failed: {exc}"
    return outcomes


# --- embedder suite ---------------------------------------------------------------------


class ReversingEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        return super().embed(texts, purpose=purpose)[::-1]


class EmptyDroppingEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        return super().embed([t for t in texts if t] if isinstance(texts, list) else texts)


class TupleEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        return [tuple(v) for v in super().embed(texts, purpose=purpose)]  # type: ignore[misc]


class OffByOneSplitEmbedder(HashingEmbedder):
    """Splits batches into parts of 32 texts and slices every part after the first one
    text too far (the last text of the batch is embedded twice)."""

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        if not isinstance(texts, list) or len(texts) <= 32:
            return super().embed(texts, purpose=purpose)
        out = super().embed(texts[:32], purpose=purpose)
        for start in range(32, len(texts), 32):
            part = texts[start + 1 : start + 33] or texts[-1:]
            out += super().embed((part + texts[-1:])[: len(texts[start : start + 32])])
        return out


class DeduplicatingEmbedder(HashingEmbedder):
    """Embeds each distinct text once and maps the vectors back by the distinct texts'
    positions, not the original ones."""

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        if not isinstance(texts, list):
            return super().embed(texts, purpose=purpose)
        unique = list(dict.fromkeys(texts))
        vectors = super().embed(unique, purpose=purpose)
        return [vectors[min(i, len(unique) - 1)] for i in range(len(texts))]


def test_embedder_suite_passes_for_the_hashing_embedder() -> None:
    outcomes = _run_all(EmbedderConformance(), HashingEmbedder(dims=32))
    assert outcomes.pop("test_semantic_similarity") == "skipped"
    assert outcomes.pop("test_unreachable_server_raises_embedding_error") == "skipped"
    assert outcomes.pop("test_http_500_raises_embedding_error_with_message") == "skipped"
    assert set(outcomes.values()) == {"passed"}, outcomes


@pytest.mark.parametrize(
    ("embedder", "failing"),
    [
        (ReversingEmbedder(), "test_batch_keeps_input_order"),
        (EmptyDroppingEmbedder(), "test_unicode_and_empty_strings"),
        (TupleEmbedder(), "test_dims_match_vectors"),
        (OffByOneSplitEmbedder(), "test_large_batch_keeps_order_across_splits"),
        (DeduplicatingEmbedder(), "test_large_batch_keeps_order_across_splits"),
    ],
    ids=["reversed-batch", "drops-empty-strings", "tuples", "off-by-one-split", "dedup-remap"],
)
def test_embedder_suite_catches_bugs(embedder: HashingEmbedder, failing: str) -> None:
    assert _run_all(EmbedderConformance(), embedder)[failing].startswith("failed")


# --- LLM suite --------------------------------------------------------------------------


#: A valid answer to each schema the kit sends, by ``ResponseSchema.name``.
VALID_ANSWERS: dict[str, dict[str, Any]] = {
    "AdditiveAnswer": {
        "memories": [{"text": "Alice lives in Berlin", "replaces": [1], "sources": [1]}]
    },
    "AdditiveGraphAnswer": {
        "memories": [
            {
                "text": "Alice adopted a dog named Max",
                "replaces": [],
                "sources": [1],
                "relations": [{"source": "Alice", "relation": "adopted", "target": "Max"}],
            }
        ]
    },
    "ExtractedFacts": {"facts": ["Alice is a vegetarian"]},
    "MemoryDecisions": {"memory": [{"id": 1, "event": "UPDATE", "text": "Alice lives in Berlin"}]},
    "ProceduralSummary": {"summary": "Task: count rows. Progress: data.csv has 42 rows."},
    "ImageDescription": {"description": "A red bicycle leaning on a white wall."},
    "city_population": {"city": "Lisbon", "population": 545000},
}


def _good_answer(messages: list[Message]) -> str:
    text = json.dumps(messages)
    if "JSON" in text:
        return '{"answer": "yes"}'
    return "Blue."


class ValidatingScriptedLLM(ScriptedLLM):
    """A correct LLM: checks its input; answers a schema with a valid object (unless a
    ``default`` was scripted, which then answers everything)."""

    def generate(self, messages: list[Message], **kwargs: Any) -> LLMResponse:
        if not messages:
            raise ValidationError("messages must not be empty")
        fmt = kwargs.get("response_format")
        if isinstance(fmt, ResponseSchema) and self.default is _good_answer:
            self.push(VALID_ANSWERS[fmt.name])
        return super().generate(messages, **kwargs)


class SchemaMutatingLLM(ValidatingScriptedLLM):
    def generate(self, messages: list[Message], **kwargs: Any) -> LLMResponse:
        fmt = kwargs.get("response_format")
        if isinstance(fmt, ResponseSchema):
            fmt.schema.pop("additionalProperties", None)  # e.g. "cleaning" it for the server
        return super().generate(messages, **kwargs)


class BareDictLLM(ValidatingScriptedLLM):
    """Accepts any dict as a schema (the bug of issue 17: a wrapper taken for a schema)."""

    def generate(self, messages: list[Message], **kwargs: Any) -> LLMResponse:
        if isinstance(kwargs.get("response_format"), dict):
            kwargs["response_format"] = None
            self.push({"anything": 1})
        return super().generate(messages, **kwargs)


def test_llm_suite_passes_for_a_correct_scripted_llm() -> None:
    llm = ValidatingScriptedLLM(default=_good_answer)
    outcomes = _run_all(LLMConformance(), llm)
    assert outcomes.pop("test_unreachable_server_raises_llm_error") == "skipped"
    assert outcomes.pop("test_http_500_raises_llm_error_with_message") == "skipped"
    assert set(outcomes.values()) == {"passed"}, outcomes
    assert len(llm.calls) <= 12  # the suite stays cheap for real models
    assert all(c.kwargs["max_tokens"] and c.kwargs["max_tokens"] <= 192 for c in llm.calls)
    sent = {c.kwargs["response_format"].name for c in llm.calls if c.kwargs["response_format"]
            and c.kwargs["response_format"] != "json_object"}  # fmt: skip
    assert sent == set(VALID_ANSWERS)  # every core schema, exactly as the core sends it


def test_llm_suite_requires_input_validation() -> None:
    outcome = _run_all(LLMConformance(), ScriptedLLM(default=_good_answer))
    assert outcome["test_empty_messages_are_rejected"].startswith("failed")


@pytest.mark.parametrize(
    ("llm", "failing"),
    [
        (ValidatingScriptedLLM(default=MALFORMED_JSON), "test_json_object_mode"),
        (ValidatingScriptedLLM(default="[1, 2]"), "test_json_object_mode"),
        (ValidatingScriptedLLM(default='{"population": "many"}'), "test_json_schema_mode"),
        (ValidatingScriptedLLM(default='{"facts": ["x"]}'), "test_core_schema[additive]"),
        (
            ValidatingScriptedLLM(default='{"memory": [{"id": true, "event": "DELETE"}]}'),
            "test_core_schema[decide_events]",
        ),
        (SchemaMutatingLLM(default=_good_answer), "test_core_schema[procedural]"),
        (BareDictLLM(default=_good_answer), "test_bare_schema_dict_is_rejected"),
        (ValidatingScriptedLLM(default="  "), "test_generate_text"),
        (
            ValidatingScriptedLLM(default=LLMResponse("x", usage=Usage(3, 50))),
            "test_temperature_and_max_tokens_are_honoured",
        ),
    ],
    ids=[
        "malformed-json",
        "json-array",
        "schema-violation",
        "wrong-schema-answer",
        "boolean-memory-id",
        "mutates-schema",
        "accepts-bare-dict",
        "blank-text",
        "ignores-max-tokens",
    ],
)
def test_llm_suite_catches_bugs(llm: ScriptedLLM, failing: str) -> None:
    assert _run_all(LLMConformance(), llm)[failing].startswith("failed")


def test_schema_mode_only_checks_json_without_native_schema_support() -> None:
    llm = ValidatingScriptedLLM(
        default='{"population": "many"}', capabilities=LLMCapabilities(json_schema=False)
    )
    assert _run_all(LLMConformance(), llm)["test_json_schema_mode"] == "passed"


def test_schema_checker() -> None:
    assert schema_errors({"city": "Lisbon", "population": 5}, SCHEMA) == []
    assert schema_errors({"population": 5}, SCHEMA) == ["$: missing 'city'"]
    assert schema_errors({"city": 1, "population": 5}, SCHEMA) == [
        "$.city: expected string, got int"
    ]
    assert schema_errors({"city": "x", "population": 1, "x": 0}, SCHEMA) == [
        "$: unexpected key 'x'"
    ]
    nullable = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert schema_errors(None, nullable) == [] and schema_errors(3, nullable) == []
    assert schema_errors("3", nullable)
    assert schema_errors({"city": "x", "population": True}, SCHEMA)  # bool is not an integer
    assert schema_errors([1], SCHEMA) == ["$: expected object, got list"]
    items = {"type": "array", "items": {"type": "number", "enum": [1, 2.5]}}
    assert schema_errors([1, 2.5], items) == []
    assert schema_errors([3], items) == ["$[0]: 3 not in [1, 2.5]"]


# --- remote checks against real sockets ---------------------------------------------------


class UrllibLLM(LLM):
    """A minimal OpenAI-style client; ``carry_message=False`` drops the server's message."""

    def __init__(self, base_url: str, *, carry_message: bool = True) -> None:
        self.url = base_url.rstrip("/") + "/v1/chat/completions"
        self.carry_message = carry_message
        self.closed = 0

    def generate(self, messages: list[Message], **kwargs: Any) -> LLMResponse:
        body = json.dumps({"messages": messages, "max_tokens": kwargs.get("max_tokens")})
        request = urllib.request.Request(self.url, data=body.encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                data = json.load(response)
        except urllib.error.HTTPError as exc:
            detail = json.load(exc)["error"]["message"] if self.carry_message else ""
            raise LLMError(f"HTTP {exc.code} from {self.url} {detail}".strip()) from exc
        except OSError as exc:
            raise LLMError(f"cannot reach {self.url}: {exc}") from exc
        return LLMResponse(data["choices"][0]["message"]["content"])

    def close(self) -> None:
        self.closed += 1


class RemoteUrllibSuite(LLMConformance):
    remote = True
    carry_message = True

    def provider_for_url(self, base_url: str) -> LLM:
        return UrllibLLM(base_url, carry_message=self.carry_message)


def test_remote_checks_pass_for_a_correct_client() -> None:
    suite = RemoteUrllibSuite()
    suite.test_unreachable_server_raises_llm_error()
    suite.test_http_500_raises_llm_error_with_message()


def test_remote_check_requires_the_server_message() -> None:
    suite = RemoteUrllibSuite()
    suite.carry_message = False
    with pytest.raises(AssertionError, match=ERROR_MARKER):
        suite.test_http_500_raises_llm_error_with_message()


def test_remote_check_requires_typed_errors() -> None:
    class Leaky(UrllibLLM):
        def generate(self, messages: list[Message], **kwargs: Any) -> LLMResponse:
            with urllib.request.urlopen(self.url, timeout=5):
                raise AssertionError("unreachable")

    class LeakySuite(LLMConformance):
        remote = True

        def provider_for_url(self, base_url: str) -> LLM:
            return Leaky(base_url)

    with pytest.raises(urllib.error.URLError):
        LeakySuite().test_unreachable_server_raises_llm_error()


def test_remote_flag_without_provider_for_url_is_explained() -> None:
    class Forgetful(LLMConformance):
        remote = True

    with pytest.raises(NotImplementedError, match="provider_for_url"):
        Forgetful().test_unreachable_server_raises_llm_error()


def test_error_server_answers_500_with_the_marker_and_stops() -> None:
    with error_server() as url:
        for method in ("GET", "POST"):
            request = urllib.request.Request(url + "/any/path", data=b"{}", method=method)
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(request, timeout=5)
            assert info.value.code == 500
            body = json.load(info.value)
            assert body["error"]["message"] == body["message"] == ERROR_MARKER
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)
    assert 1024 <= free_port() <= 65535


# --- reranker suite ---------------------------------------------------------------------


class OverlapReranker(Reranker):
    """Scores by shared lowercase words (a tiny real reranker)."""

    descending = True

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        if top_k < 1:
            raise RerankerError(f"top_k must be >= 1, got {top_k}")
        words = set(re.findall(r"\w+", query.lower()))
        scored = [
            RankedDocument(i, d, float(len(words & set(re.findall(r"\w+", d.lower())))))
            for i, d in enumerate(documents)
        ]
        scored.sort(key=lambda r: r.score, reverse=self.descending)
        return scored[:top_k]


class AscendingReranker(OverlapReranker):
    descending = False


class ProbabilityReranker(OverlapReranker):
    """Overlap scores as probabilities: the share of the query's words a document has."""

    @property
    def scores_are_probabilities(self) -> bool:
        return True

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        words = max(1, len(re.findall(r"\w+", query)))
        out = super().rerank(query, documents, top_k)
        return [RankedDocument(r.index, r.text, r.score / words) for r in out]


class CountsAsProbabilitiesReranker(OverlapReranker):
    """Claims probabilities but returns word counts (can exceed 1)."""

    @property
    def scores_are_probabilities(self) -> bool:
        return True


class SimilarityReranker(ProbabilityReranker):
    """The same shares of the query's words, claimed as similarities."""

    @property
    def scores_are_probabilities(self) -> bool:
        return False

    @property
    def scores_are_similarities(self) -> bool:
        return True


class CountsAsSimilaritiesReranker(OverlapReranker):
    """Claims similarities but returns word counts (can exceed 1)."""

    @property
    def scores_are_similarities(self) -> bool:
        return True


class BothKindsReranker(ProbabilityReranker):
    """Claims its scores are probabilities and similarities at once."""

    @property
    def scores_are_similarities(self) -> bool:
        return True


class TextKeyedReranker(OverlapReranker):
    """Maps results back to positions by their text, so a repeated document gets its first
    copy's index and the later copy is lost."""

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        best = {r.text: r for r in super().rerank(query, documents, len(documents) or 1)}
        out = [RankedDocument(list(documents).index(t), t, r.score) for t, r in best.items()]
        return sorted(out, key=lambda r: r.score, reverse=True)[:top_k]


class FirstQueryPairsReranker(OverlapReranker):
    """Batches ``score_pairs`` by scoring every document against the first pair's query."""

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        out = self.rerank(pairs[0][0], [d for _, d in pairs], len(pairs))
        return [r.score for r in sorted(out, key=lambda r: r.index)]


class SemanticRerankerSuite(RerankerConformance):
    semantic = True


def test_reranker_suite_passes_for_a_correct_reranker() -> None:
    outcomes = _run_all(SemanticRerankerSuite(), OverlapReranker())
    assert outcomes.pop("test_unreachable_server_raises_reranker_error") == "skipped"
    assert outcomes.pop("test_http_500_raises_reranker_error_with_message") == "skipped"
    assert outcomes.pop("test_probability_scores_are_in_the_unit_interval") == "skipped"
    assert outcomes.pop("test_similarity_scores_are_in_the_unit_interval") == "skipped"
    assert set(outcomes.values()) == {"passed"}, outcomes


def test_reranker_suite_checks_similarity_scores() -> None:
    outcomes = _run_all(SemanticRerankerSuite(), SimilarityReranker())
    assert outcomes["test_similarity_scores_are_in_the_unit_interval"] == "passed"
    assert outcomes["test_probability_scores_are_in_the_unit_interval"] == "skipped"
    for wrong in (CountsAsSimilaritiesReranker(), BothKindsReranker()):
        outcomes = _run_all(SemanticRerankerSuite(), wrong)
        assert outcomes["test_similarity_scores_are_in_the_unit_interval"].startswith("failed")


def test_reranker_suite_checks_probability_scores() -> None:
    outcomes = _run_all(SemanticRerankerSuite(), ProbabilityReranker())
    assert outcomes["test_probability_scores_are_in_the_unit_interval"] == "passed"
    assert (
        _run_all(SemanticRerankerSuite(), OverlapReranker())[
            "test_probability_scores_are_in_the_unit_interval"
        ]
        == "skipped"
    )
    outcomes = _run_all(SemanticRerankerSuite(), CountsAsProbabilitiesReranker())
    assert outcomes["test_probability_scores_are_in_the_unit_interval"].startswith("failed")


def test_reranker_suite_catches_ascending_order() -> None:
    outcomes = _run_all(SemanticRerankerSuite(), AscendingReranker())
    assert outcomes["test_returns_top_k_sorted_with_input_indexes"].startswith("failed")
    assert outcomes["test_relevant_document_ranks_first"].startswith("failed")


def test_reranker_suite_catches_text_keyed_positions() -> None:
    outcomes = _run_all(SemanticRerankerSuite(), TextKeyedReranker())
    assert outcomes["test_repeated_documents_keep_their_positions"].startswith("failed")


def test_reranker_suite_catches_pairs_scored_against_one_query() -> None:
    outcomes = _run_all(SemanticRerankerSuite(), FirstQueryPairsReranker())
    assert outcomes["test_score_pairs_match_rerank"].startswith("failed")
    assert outcomes["test_returns_top_k_sorted_with_input_indexes"] == "passed"
