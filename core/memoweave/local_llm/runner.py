"""``python -m memoweave.local_llm.runner``: ``llama_cpp.server`` with llama.cpp's *extra
buffer types* disabled (same command line as ``python -m llama_cpp.server``).

Extra buffer types are where ggml puts its AMX and weight-repacking kernels; on machines
(or sandboxes/VMs) whose CPU advertises AMX without letting processes use the tile
registers, a native build dies with SIGILL (``tilezero``/``tileloadd``) on the first
multi-token batch of a quantized model. Turning them off
(``llama_model_params.use_extra_bufts = False``) falls back to the ordinary AVX kernels;
the answers are the same, only the fast paths are skipped. llama-cpp-python 0.3.36 has no
option for it, so the default model params are patched.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_PATCH_LOCK = threading.Lock()


@contextmanager
def extra_buffer_types_disabled() -> Iterator[None]:
    """Models loaded in this block (in this process) use no extra buffer types."""
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params

    def params() -> Any:
        value = original()
        value.use_extra_bufts = False
        return value

    with _PATCH_LOCK:
        lib.llama_model_default_params = params
        try:
            yield
        finally:
            lib.llama_model_default_params = original


def main() -> None:
    """Run llama_cpp.server's CLI with the patch in place for the whole process."""
    from llama_cpp.server.__main__ import main as server_main

    with extra_buffer_types_disabled():
        server_main()


if __name__ == "__main__":
    main()
