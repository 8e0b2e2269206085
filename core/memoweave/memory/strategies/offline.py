"""The ``offline`` strategy: ``add(infer=True)`` with no LLM configured.

A deterministic extractor, documented as the fallback, not as a substitute for an LLM:
the user's messages are split into sentences; greetings, questions, thanks and filler are
dropped; declarative statements of at least three words are kept, whitespace-normalised.
Assistant, tool and system messages are ignored (the user's own statements are the facts).
"""

from __future__ import annotations

import re

from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.runtime.steps import Steps, done

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_GREETING = re.compile(
    r"^(hi|hello|hey|yo|good (morning|afternoon|evening|night)|thanks?( you)?|thank you|"
    r"ok(ay)?|sure|cool|great|nice|bye|goodbye|see you|lol|haha|yes|no|yeah|yep|nope|"
    r"你好|谢谢|こんにちは|ありがとう)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(r"^(um+|uh+|hmm+|well|so|anyway)[,.!]?$", re.IGNORECASE)
_MIN_WORDS = 3
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _is_statement(sentence: str) -> bool:
    text = sentence.strip()
    if not text or text.endswith(("?", "？")) or _FILLER.match(text):
        return False
    words = text.split()
    if _GREETING.match(text) and len(words) <= 4:
        return False
    if _CJK.search(text):
        return len(text) >= 4
    return len(words) >= _MIN_WORDS


def extract_statements(text: str) -> list[str]:
    """The declarative sentences of ``text``, in order, without duplicates."""
    out: dict[str, None] = {}
    for sentence in _SENTENCE.split(text):
        cleaned = " ".join(sentence.split())
        if cleaned not in out and _is_statement(cleaned):
            out[cleaned] = None
    return list(out)


class OfflineStrategy:
    """Keep the user's declarative statements; no model, no network."""

    needs_related = False

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """One ``AddMemory`` per statement in the user's messages."""
        return done(
            [
                AddMemory(
                    text=statement,
                    source_message_ids=(message.id,),
                    actor_id=message.name,
                    role=message.role,
                )
                for message in request.messages
                if message.role == "user"
                for statement in extract_statements(message.text)
            ]
        )
