"""The answers the LLM strategies ask for: one pydantic model per answer, and the
:class:`~memoweave.providers.llm.ResponseSchema` each one sends (the single place where
they are defined; the LLM kit checks providers with exactly these).

Two views of each answer, on purpose:

- the **sent schema** (:func:`response_schema`) is made for constrained decoding: every
  property ``required``, ``additionalProperties: false``, no ``$ref``, no titles, defaults
  or class docstrings (field descriptions stay), and no length or count bounds (llama.cpp
  turns ``maxLength: 2000`` into a 2,000-deep grammar rule and dies). It is valid for
  OpenAI strict mode, llama.cpp's GBNF converter and Ollama's ``format``;
- the **parsing model** validates what came back, from any server mode: the keys the code
  needs are required (``{"facts": [...]}`` is not an additive answer), list fields the code
  can do without default to ``[]``, unknown keys are ignored, memory numbers must be
  integers (``true`` is not memory 1; digit strings are accepted), texts are checked
  for length after parsing, and one answer may hold at most ``max_memories`` entries
  (validation context, from ``extraction.max_memories_per_add``). A failure is repaired
  once by :func:`memoweave.memory.llm_json.generate_json`, then it is an ``LLMError``.
"""

from __future__ import annotations

import copy
import functools
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    ValidationInfo,
    model_validator,
)

from memoweave.providers.llm import ResponseSchema

#: Longest memory text an LLM answer may carry (checked after parsing, never in the schema).
MAX_MEMORY_CHARS = 2_000
#: Default of ``extraction.max_memories_per_add``.
DEFAULT_MAX_MEMORIES = 50
_CONTEXT_CAP = "max_memories"


def _memory_number(value: Any) -> Any:
    """An existing memory's number: a JSON integer or a string of digits, nothing else."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"a memory number must be an integer, got {value!r}")
    if isinstance(value, str):
        if not (value.isascii() and value.strip().isdigit()):
            raise ValueError(f"a memory number must be an integer, got {value!r}")
        return int(value)
    return value


def _memory_text(value: str) -> str:
    text = " ".join(value.split())
    if len(text) > MAX_MEMORY_CHARS:
        raise ValueError(
            f"a memory is {len(text)} characters; write short facts of at most {MAX_MEMORY_CHARS}"
        )
    return text


MemoryNumber = Annotated[int, BeforeValidator(_memory_number)]
MemoryText = Annotated[str, AfterValidator(_memory_text)]


def _check_cap(count: int, info: ValidationInfo, what: str) -> None:
    cap = (info.context or {}).get(_CONTEXT_CAP)
    if cap is not None and count > cap:
        raise ValueError(f"{count} {what} in one answer; the limit is {cap}")


class ExtractedMemory(BaseModel):
    """One fact of an additive answer."""

    text: MemoryText = Field(description="One short self-contained fact.")
    replaces: list[MemoryNumber] = Field(
        default_factory=list, description="Numbers of the existing memories it replaces."
    )
    sources: list[MemoryNumber] = Field(
        default_factory=list, description="Numbers of the new messages it comes from."
    )


class AdditiveAnswer(BaseModel):
    """The additive strategy's answer: the new facts."""

    memories: list[ExtractedMemory]

    @model_validator(mode="after")
    def _cap(self, info: ValidationInfo) -> AdditiveAnswer:
        _check_cap(len(self.memories), info, "memories")
        return self


class ExtractedRelation(BaseModel):
    """One link a fact states between two named things (additive answer with a graph)."""

    source: str = Field(description="A named thing, as written (a person, place, pet...).")
    relation: str = Field(description="A short verb phrase, e.g. 'adopted'.")
    target: str = Field(description="The other named thing.")


class ExtractedGraphMemory(ExtractedMemory):
    """One fact with the relations it states (asked for with a graph store). A missing
    ``relations`` key (``None``) means the model ignored the instruction: the write path
    falls back to the offline links; ``[]`` means the fact links nothing."""

    relations: list[ExtractedRelation] | None = Field(
        default=None, description="The links the fact states; [] when none."
    )


class AdditiveGraphAnswer(BaseModel):
    """The additive answer with a graph store: the new facts and their relations."""

    memories: list[ExtractedGraphMemory]

    @model_validator(mode="after")
    def _cap(self, info: ValidationInfo) -> AdditiveGraphAnswer:
        _check_cap(len(self.memories), info, "memories")
        return self


class ExtractedFacts(BaseModel):
    """Step 1 of the decide strategy: the facts of the new messages."""

    facts: list[MemoryText]

    @model_validator(mode="after")
    def _cap(self, info: ValidationInfo) -> ExtractedFacts:
        _check_cap(len(self.facts), info, "facts")
        return self


class Decision(BaseModel):
    """One event of step 2 of the decide strategy."""

    id: MemoryNumber | None = Field(
        default=None, description="The existing memory's number; null for ADD."
    )
    event: Annotated[
        Literal["ADD", "UPDATE", "DELETE", "NONE"],
        BeforeValidator(lambda v: v.strip().upper() if isinstance(v, str) else v),
    ]
    text: MemoryText | None = Field(
        default=None, description="The new text (ADD, UPDATE); null otherwise."
    )


class MemoryDecisions(BaseModel):
    """Step 2 of the decide strategy: one event per new fact or affected memory."""

    memory: list[Decision]

    @model_validator(mode="after")
    def _cap(self, info: ValidationInfo) -> MemoryDecisions:
        _check_cap(len(self.memory), info, "events")
        return self


class ProceduralSummary(BaseModel):
    """The procedural strategy's answer: the summary of an agent's run."""

    summary: str = Field(description="Task, progress and state of the run, in plain text.")

    @model_validator(mode="after")
    def _not_blank(self) -> ProceduralSummary:
        if not self.summary.strip():
            raise ValueError("the summary is empty")
        return self


class ImageDescription(BaseModel):
    """A vision LLM's description of one image."""

    description: str = Field(description="Two or three sentences about the image.")


#: Every answer the core asks an LLM for, by role (the kit iterates over these).
ANSWER_MODELS: dict[str, type[BaseModel]] = {
    "additive": AdditiveAnswer,
    "additive_graph": AdditiveGraphAnswer,
    "decide_facts": ExtractedFacts,
    "decide_events": MemoryDecisions,
    "procedural": ProceduralSummary,
    "vision": ImageDescription,
}


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema in the grammar-safe form described in the module docstring."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(x) for x in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return clean(defs[node["$ref"].rsplit("/", 1)[-1]])
        out = {k: clean(v) for k, v in node.items() if k not in ("title", "default")}
        if out.get("type") == "object":  # a class docstring is no help to the model
            out.pop("description", None)
            out["required"] = list(out.get("properties", {}))
            out["additionalProperties"] = False
        return out

    schema: dict[str, Any] = clean(raw)
    return schema


@functools.cache
def _response_schema(model: type[BaseModel]) -> ResponseSchema:
    return ResponseSchema(model.__name__, strict_json_schema(model), strict=True)


def response_schema(model: type[BaseModel]) -> ResponseSchema:
    """The schema sent for ``model`` (a fresh copy: providers cannot alter the original)."""
    sent = _response_schema(model)
    return ResponseSchema(sent.name, copy.deepcopy(sent.schema), strict=sent.strict)


def core_response_schemas() -> dict[str, ResponseSchema]:
    """Every schema the core's strategies send, by role (see :data:`ANSWER_MODELS`)."""
    return {role: response_schema(model) for role, model in ANSWER_MODELS.items()}


def validation_context(max_memories: int | None) -> dict[str, Any]:
    """The pydantic validation context that applies the per-answer cap."""
    return {_CONTEXT_CAP: max_memories}


__all__ = [
    "ANSWER_MODELS",
    "DEFAULT_MAX_MEMORIES",
    "MAX_MEMORY_CHARS",
    "AdditiveAnswer",
    "AdditiveGraphAnswer",
    "Decision",
    "ExtractedFacts",
    "ExtractedGraphMemory",
    "ExtractedMemory",
    "ExtractedRelation",
    "ImageDescription",
    "MemoryDecisions",
    "MemoryNumber",
    "MemoryText",
    "ProceduralSummary",
    "core_response_schemas",
    "response_schema",
    "strict_json_schema",
    "validation_context",
]
