"""Getting validated JSON out of an LLM.

:func:`extract_json` tolerates what models do: code fences, JSON inside prose, trailing
commas, smart quotes around keys. :func:`generate_json` (a pipeline, see
:mod:`memoweave.runtime.steps`) calls the LLM (JSON schema mode when the provider claims
it, else JSON object mode), validates the answer against a pydantic model, and on failure
retries with the validation error in the conversation (``repairs`` times). Then it raises
``LLMError``: a strategy never writes half an answer.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memoweave.errors import LLMError, MemoweaveError
from memoweave.providers.llm import LLM, Message
from memoweave.runtime.steps import Steps, call

Model = TypeVar("Model", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``; ``ValueError`` if there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        for start, opener in ((candidate.find("{"), "{"), (candidate.find("["), "[")):
            if start < 0:
                continue
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


@functools.lru_cache(maxsize=64)
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()``, computed once per model (it costs milliseconds)."""
    return model.model_json_schema()


def generate_json(
    llm: LLM,
    messages: list[Message],
    model: type[Model],
    *,
    repairs: int = 1,
    max_tokens: int | None = None,
) -> Steps[Model]:
    """The pipeline asking ``llm`` for JSON matching ``model`` (each LLM call one step);
    raises ``LLMError`` when it cannot deliver."""
    response_format: Any = (
        {"name": model.__name__, "schema": copy.deepcopy(_json_schema(model))}
        if llm.capabilities.json_schema
        else "json_object"
    )
    conversation = list(messages)
    problem = "no answer"
    for _ in range(repairs + 1):
        try:
            response = yield call(
                llm.generate,
                conversation,
                response_format=response_format,
                temperature=0.0,
                max_tokens=max_tokens,
            )
        except MemoweaveError:
            raise
        except Exception as exc:  # a provider that broke its contract
            raise LLMError(f"the LLM failed: {type(exc).__name__}: {exc}") from exc
        try:
            return model.model_validate(extract_json(response.text))
        except (ValueError, PydanticValidationError) as exc:
            problem = _short(exc)
            conversation = [
                *conversation,
                {"role": "assistant", "content": response.text},
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
    )
