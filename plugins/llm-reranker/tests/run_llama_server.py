"""``python -m llama_cpp.server`` with llama.cpp's extra buffer types turned off.

Same command line as ``llama_cpp.server``. Some VMs (this project's machines among them)
advertise AMX in cpuid without enabling the tile registers, and a native llama.cpp build
then dies with SIGILL (``tileloadd``) in its AMX kernels, which live in the "extra buffer
types". ``use_extra_bufts = False`` falls back to the ordinary AVX kernels (same answers).
The same workaround is used by memoweave-openai's test support.
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
