"""Image parts of messages become text through an LLM that claims vision.

With a vision LLM, each image is described in one call and the description is appended to
its message's text. Without one, image parts are dropped and only text parts count.
"""

from __future__ import annotations

from dataclasses import replace

from memoweave.memory.messages import NormalizedMessage
from memoweave.memory.prompts import load_prompt
from memoweave.providers.llm import LLM


def describe_images(llm: LLM | None, messages: list[NormalizedMessage]) -> list[NormalizedMessage]:
    """``messages`` with image descriptions appended to their text (when possible)."""
    if llm is None or not llm.capabilities.vision or not any(m.images for m in messages):
        return messages
    out = []
    for message in messages:
        descriptions = [
            llm.generate(
                [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": load_prompt("vision_v1")},
                            dict(image),
                        ],
                    }
                ],
                temperature=0.0,
                max_tokens=200,
            ).text.strip()
            for image in message.images
        ]
        text = "\n".join([message.text, *(f"[image: {d}]" for d in descriptions if d)]).strip()
        out.append(replace(message, text=text))
    return out
