"""Run ``llama_cpp.server`` with llama.cpp's *extra buffer types* disabled.

Same command line as ``python -m llama_cpp.server``. Extra buffer types are where ggml puts
its AMX and weight-repacking kernels; on machines (or sandboxes/VMs) whose CPU advertises
AMX without letting processes use the tile registers, a native build dies with SIGILL
(``tilezero``/``tileloadd``) on the first multi-token batch of a quantized model. Turning
them off (``llama_model_params.use_extra_bufts = False``) falls back to the ordinary AVX
kernels; the answers are the same, only the fast paths are skipped.
"""

from __future__ import annotations

import llama_cpp.llama_cpp as llama_lib

_default_params = llama_lib.llama_model_default_params


def _params_without_extra_bufts() -> llama_lib.llama_model_params:
    params = _default_params()
    params.use_extra_bufts = False
    return params


llama_lib.llama_model_default_params = _params_without_extra_bufts

if __name__ == "__main__":
    from llama_cpp.server.__main__ import main

    main()
