"""Image parts of messages become text through an LLM that claims vision.

With a vision LLM, each image is described in one call (answer
:class:`~memoweave.memory.schemas.ImageDescription`, repaired like every answer) and the
description is appended to its message's text; the images of all messages are described
concurrently under ``AsyncMemory``. Without one, image parts are dropped and only text
parts count.
"""

from __future__ import annotations

from dataclasses import replace

from memoweave.memory.llm_json import generate_json
from memoweave.memory.messages import NormalizedMessage
from memoweave.memory.prompts import load_prompt
from memoweave.memory.schemas import ImageDescription
from memoweave.providers.llm import LLM
from memoweave.runtime.steps import Steps, gather

#: Completion budget of one description (two or three sentences).
DESCRIPTION_MAX_TOKENS = 200


def describe_images(
    llm: LLM | None, messages: list[NormalizedMessage], *, repairs: int = 1
) -> Steps[list[NormalizedMessage]]:
    """``messages`` with image descriptions appended to their text (when possible)."""
    if llm is None or not llm.capabilities.vision or not any(m.images for m in messages):
        return messages
    parts = [
        generate_json(
            llm,
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": load_prompt("vision_v2")}, dict(image)],
                }
            ],
            ImageDescription,
            repairs=repairs,
            max_tokens=DESCRIPTION_MAX_TOKENS,
        )
        for message in messages
        for image in message.images
    ]
    answers = iter((yield gather(*parts)))
    out = []
    for message in messages:
        descriptions = [next(answers).description.strip() for _ in message.images]
        text = "\n".join([message.text, *(f"[image: {d}]" for d in descriptions if d)]).strip()
        out.append(replace(message, text=text))
    return out
