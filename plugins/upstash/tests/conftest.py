"""Fixtures of the memoweave-upstash tests: emulated Upstash Vector indexes on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from memoweave_upstash.emulator import UpstashEmulator


@pytest.fixture
def upstash_emu() -> Iterator[UpstashEmulator]:
    """A fresh emulated 8-dimension cosine index, stopped after the test."""
    with UpstashEmulator(dims=8, metric="cosine") as emu:
        yield emu
