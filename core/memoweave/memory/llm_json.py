"""Getting validated JSON out of an LLM.

:func:`extract_json` tolerates what models do: code fences, JSON inside prose, trailing
commas. :func:`generate_json` (a pipeline, see :mod:`memoweave.runtime.steps`) sends the
answer model's :class:`~memoweave.providers.llm.ResponseSchema` (see
:mod:`memoweave.memory.schemas`) when the provider enforces schemas, else asks for JSON
mode; it validates the answer against the pydantic model (with the per-answer cap in the
validation context) and, on failure, retries with the validation error in the
conversation (``repairs`` times). An answer the provider could not read as JSON (an
``LLMError`` carrying ``details["text"]``) is repaired the same way. Then it raises
``LLMError``: a strategy never writes half an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memoweave.errors import LLMError, MemoweaveError
from memoweave.memory.schemas import response_schema, validation_context
from memoweave.providers.llm import LLM, Message
from memoweave.runtime.steps import Steps, call

Model = TypeVar("Model", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def extract_json(text: str) -> Any:
    """The first JSON value (object or array, whichever opens first) in ``text``;
    ``ValueError`` if there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        openers = sorted(
            (start, opener) for opener in "{[" if (start := candidate.find(opener)) >= 0
        )
        for start, opener in openers:
            closer = "}" if opener == "{" else "]"
            end = candidate.rfind(closer)
            while end > start:
                chunk = candidate[start : end + 1]
                for attempt in (chunk, _TRAILING_COMMA.sub(r"\1", chunk)):
                    try:
                        return json.loads(attempt)
                    except json.JSONDecodeError:
                        pass
                end = candidate.rfind(closer, start, end)
    raise ValueError("no JSON object found in the model's answer")


def _short(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}"
            for e in exc.errors()[:5]
        )
    return str(exc)


def generate_json(
    llm: LLM,
    messages: list[Message],
    model: type[Model],
    *,
    repairs: int = 1,
    max_tokens: int | None = None,
    max_memories: int | None = None,
) -> Steps[Model]:
    """The pipeline asking ``llm`` for JSON matching ``model`` (each LLM call one step);
    raises ``LLMError`` when it cannot deliver. ``max_memories`` caps the entries of one
    answer (a longer answer is repaired, then an error)."""
    context = validation_context(max_memories)
    conversation = list(messages)
    problem = "no answer"
    for _ in range(repairs + 1):
        response_format: Any = (
            response_schema(model) if llm.capabilities.json_schema else "json_object"
        )
        try:
            response = yield call(
                llm.generate,
                conversation,
                response_format=response_format,
                temperature=0.0,
                max_tokens=max_tokens,
            )
            text = response.text
        except LLMError as exc:
            raw = exc.details.get("text")
            if not isinstance(raw, str):
                raise
            text, problem = raw, exc.message  # the model answered, but not with JSON
        except MemoweaveError:
            raise
        except Exception as exc:  # a provider that broke its contract
            raise LLMError(f"the LLM failed: {type(exc).__name__}: {exc}") from exc
        else:
            try:
                return model.model_validate(extract_json(text), context=context)
            except (ValueError, PydanticValidationError) as exc:
                problem = _short(exc)
        conversation = [
            *conversation,
            {"role": "assistant", "content": text},
            {
                "role": "user",
                "content": f"That answer was invalid ({problem}). Reply with only the "
                "corrected JSON object, in the format asked for.",
            },
        ]
    raise LLMError(
        f"the LLM's answer did not match the expected format after {repairs + 1} attempt(s): "
        f"{problem}",
        hint="Use a stronger model or one with JSON mode; nothing was written.",
        details={"answer": text[:500], "format": model.__name__},
    )
