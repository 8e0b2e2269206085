"""The ``llm`` reranker: one LLM call scores every candidate document.

Behaviour (the contract of this provider):

- all documents go into one prompt as a numbered list (each cut to ``max_document_chars``);
  more than ``max_documents`` raises ``ValidationError`` (no silent truncation);
- the LLM is asked for ``{"scores": [...]}`` (0-10) with the matching JSON schema as
  ``response_format``; :func:`~memoweave_llm_reranker.parsing.parse_scores` accepts the
  common variants;
- an unusable answer gets ``repair_retries`` repair calls (default one) that show the
  model its answer and the reason; if none is usable, ``RerankerError`` is raised with the
  reason and the last answer in ``details`` — there is no silent fallback to the input order;
- ``LLMError`` from the LLM becomes ``RerankerError`` carrying the LLM's message, except
  when the error carries the model's answer in ``details["text"]`` (the provider got an
  answer but rejected it, e.g. not JSON): that text is parsed and repaired like any other;
- results are sorted by score descending; ties keep the input order.
"""

from __future__ import annotations

from collections.abc import Sequence

from memoweave.errors import LLMError, RerankerError, ValidationError
from memoweave.providers.llm import LLM, Message
from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave_llm_reranker.config import LLMRerankerConfig
from memoweave_llm_reranker.parsing import UnusableAnswer, parse_scores
from memoweave_llm_reranker.prompt import build_messages, repair_messages, score_schema
from memoweave_llm_reranker.validate import check_documents, check_query, check_top_k


class LLMReranker(Reranker):
    """Reranks with ``llm`` (see the module docstring).

    ``owns_llm``: close the LLM in :meth:`close` (true when the factory created it).
    """

    def __init__(self, llm: LLM, config: LLMRerankerConfig, *, owns_llm: bool = False) -> None:
        if not isinstance(llm, LLM):
            raise ValidationError(
                f"llm must be an LLM provider, got {type(llm).__name__}",
                hint="Create it with memoweave.plugins.load_registry().create('llm', ...).",
            )
        self.llm = llm
        self.config = config
        self._owns_llm = owns_llm
        self._closed = False

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        check_query(query)
        docs = check_documents(documents, self.config.max_documents)
        check_top_k(top_k)
        if not docs:
            return []
        if self._closed:
            raise RerankerError("the reranker is closed", hint="Create a new one after close().")
        scores = self._scores(query, docs)
        return ranked(docs, scores, top_k)

    def _scores(self, query: str, docs: list[str]) -> list[float]:
        n = len(docs)
        messages = build_messages(query, docs, self.config.max_document_chars)
        answer = ""
        reason = ""
        for attempt in range(self.config.repair_retries + 1):
            if attempt:
                messages = repair_messages(messages, answer, reason, n)
            answer = self._ask(messages, n)
            try:
                return parse_scores(answer, n)
            except UnusableAnswer as exc:
                reason = str(exc)
        raise RerankerError(
            f"the LLM gave no usable scores for {n} documents after "
            f"{self.config.repair_retries + 1} attempt(s): {reason}",
            hint="Use a stronger LLM, or one whose server supports JSON schema output.",
            details={"reason": reason, "answer": answer[:1000]},
        )

    def _ask(self, messages: list[Message], n: int) -> str:
        max_tokens = self.config.max_tokens or 8 * n + 32
        try:
            response = self.llm.generate(
                messages,
                response_format=score_schema(n),
                temperature=self.config.temperature,
                max_tokens=max_tokens,
            )
        except LLMError as exc:
            text = exc.details.get("text")
            if isinstance(text, str):
                # The LLM answered but its provider rejected the output (e.g. not JSON):
                # hand the raw text to our more lenient parser and, failing that, repair.
                return text
            raise RerankerError(
                f"the reranking LLM failed: {exc.message}",
                hint=exc.hint,
                details={"llm_error": exc.to_dict()},
            ) from exc
        return response.text

    def close(self) -> None:
        """Close the LLM if this reranker created it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._owns_llm:
            self.llm.close()
