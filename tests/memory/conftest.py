"""Fixtures for the Memory API tests: the real core (in-memory store, SQLite history)
with the test doubles standing in for the model providers only.

``make_memory`` (the root conftest's ``memory_factory``; and so ``memory`` and
``llm_memory``) runs every test twice: on
``Memory`` and on ``AsyncMemory`` driven through :class:`memoweave.testing.blocking.
Blocking`, so both APIs are held to the same arguments, results and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memoweave.memory import Memory
from memoweave.testing.doubles import ScriptedLLM

MakeMemory = Callable[..., Memory]


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest) -> str:
    """Which API the test runs on."""
    return str(request.param)


@pytest.fixture
def make_memory(memory_factory: Any) -> MakeMemory:
    """``make_memory(config=None, **overrides)``: the root conftest's ``memory_factory``
    (a fresh in-memory store and history per Memory, closed after the test)."""
    return memory_factory  # type: ignore[no-any-return]


@pytest.fixture
def memory(make_memory: MakeMemory) -> Memory:
    """A Memory with no LLM (verbatim and offline strategies)."""
    return make_memory()


@pytest.fixture
def llm() -> ScriptedLLM:
    """A scripted LLM; tests queue its answers."""
    return ScriptedLLM()


@pytest.fixture
def llm_memory(make_memory: MakeMemory, llm: ScriptedLLM) -> Memory:
    """A Memory using the additive strategy with the scripted LLM."""
    return make_memory(llm=llm)
