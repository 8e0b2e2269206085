"""The ``pytest11`` entry point of memoweave (loaded in every pytest run where it is installed).

It asks pytest to rewrite the asserts of the conformance kit so a failing standard test
shows the compared values, and provides the session fixtures ``local_llm_server`` (a real
small LLM) and ``onnx_embedder`` (the real default embedder), each started only by the
tests that ask for it. It imports nothing heavy.
"""

from __future__ import annotations

import pytest

from memoweave.testing._rewrite import KIT_MODULES

pytest.register_assert_rewrite(*KIT_MODULES)

from memoweave.testing.local_embedder import onnx_embedder  # noqa: E402
from memoweave.testing.local_llm import local_llm_server  # noqa: E402

__all__ = ["local_llm_server", "onnx_embedder"]
