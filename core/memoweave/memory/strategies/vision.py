"""Image parts of messages become text through an LLM that claims vision.

With a vision LLM, each image is described in one call and the description is appended to
its message's text. Without one, image parts are dropped and only text parts count.
"""

from __future__ import annotations

from dataclasses import replace

from memoweave.memory.messages import NormalizedMessage
from memoweave.memory.prompts import load_prompt
from memoweave.providers.llm import LLM
from memoweave.runtime.steps import Steps, call, gather


def describe_images(
    llm: LLM | None, messages: list[NormalizedMessage]
) -> Steps[list[NormalizedMessage]]:
    """``messages`` with image descriptions appended to their text (when possible); the
    images of all messages are described concurrently under ``AsyncMemory``."""
    if llm is None or not llm.capabilities.vision or not any(m.images for m in messages):
        return messages
    steps = [
        call(
            llm.generate,
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": load_prompt("vision_v1")}, dict(image)],
                }
            ],
            temperature=0.0,
            max_tokens=200,
        )
        for message in messages
        for image in message.images
    ]
    answers = iter((yield gather(*steps)))
    out = []
    for message in messages:
        descriptions = [next(answers).text.strip() for _ in message.images]
        text = "\n".join([message.text, *(f"[image: {d}]" for d in descriptions if d)]).strip()
        out.append(replace(message, text=text))
    return out
