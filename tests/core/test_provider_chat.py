"""memoweave.providers.chat: OpenAI-style messages, content parts, tools, tool arguments."""

from __future__ import annotations

import pytest

from memoweave.errors import LLMError, ValidationError
from memoweave.providers.chat import check_messages, function_tools, split_parts, tool_arguments


@pytest.mark.parametrize(
    ("messages", "fragment", "index"),
    [
        ("hello", "must be a list, got str", None),
        ([], "messages is empty", None),
        ([{"role": "user", "content": "hi"}, "hi"], r"messages\[1\] is str, not a dict", 1),
    ],
)
def test_check_messages_rejects(messages: object, fragment: str, index: int | None) -> None:
    with pytest.raises(ValidationError, match=fragment) as info:
        check_messages(messages)
    assert info.value.details.get("index") == index


def test_check_messages_returns_the_list() -> None:
    messages = ({"role": "user", "content": "hi"},)
    assert check_messages(messages) == [{"role": "user", "content": "hi"}]


def test_split_parts_separates_texts_and_images_in_order() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    parts = [{"type": "text", "text": "a"}, image, {"type": "text", "text": "b"}]
    assert split_parts(parts, 0) == (["a", "b"], [image])


@pytest.mark.parametrize("content", [42, [{"type": "audio"}], [{"type": "text", "text": 1}]])
def test_split_parts_rejects_malformed_content(content: object) -> None:
    with pytest.raises(ValidationError, match=r"messages\[2\]\.content") as info:
        split_parts(content, 2)
    assert info.value.details == {"index": 2}


def test_function_tools_wraps_bare_specs_and_keeps_wrapped_ones() -> None:
    bare = {"name": "save", "parameters": {"type": "object"}}
    wrapped = {"type": "function", "function": {"name": "find"}, "strict": True}
    assert function_tools([bare, wrapped]) == [{"type": "function", "function": bare}, wrapped]
    assert function_tools(None) is None and function_tools([]) is None


@pytest.mark.parametrize("tools", ["save", [{"nope": 1}], [{"type": "function", "function": {}}]])
def test_function_tools_rejects_malformed_specs(tools: object) -> None:
    with pytest.raises(ValidationError, match="tool"):
        function_tools(tools)


def test_tool_arguments_accepts_json_text_mappings_and_nothing() -> None:
    assert tool_arguments("f", '{"a": 1}') == {"a": 1}
    assert tool_arguments("f", {"a": 1}) == {"a": 1}
    assert tool_arguments("f", "") == {} and tool_arguments("f", None) == {}


@pytest.mark.parametrize(
    ("arguments", "fragment"), [('{"a": ', "not JSON"), ("[1]", "not a JSON object")]
)
def test_tool_arguments_rejects_non_objects(arguments: str, fragment: str) -> None:
    with pytest.raises(LLMError, match=fragment) as info:
        tool_arguments("f", arguments)
    assert info.value.details == {"tool": "f", "arguments": arguments}
