"""llama.cpp models behind the test Ollama server: chat (SmolLM2) and embeddings (MiniLM).

Each backend owns one in-process ``llama_cpp.Llama`` and a lock (a ``Llama`` is not
thread-safe). Models load with llama.cpp's "extra buffer types" (weight repacking / AMX)
disabled, through the core's :func:`memoweave.local_llm.runner.extra_buffer_types_disabled`
(on the test machine the AMX kernels die with SIGILL on any multi-token batch); the chat
model is the packaged SmolLM2 (:func:`memoweave.local_llm.packaged_gguf`).
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoweave.local_llm import packaged_gguf
from memoweave.local_llm.runner import extra_buffer_types_disabled

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


def load_llama(path: Path, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(path, **kwargs)`` with extra buffer types disabled (see above)."""
    import llama_cpp

    with extra_buffer_types_disabled():
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
        llama = load_llama(path or packaged_gguf(), n_ctx=n_ctx, n_threads=n_threads)
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
