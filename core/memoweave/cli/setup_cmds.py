"""``memoweave init`` (write a commented configuration) and ``memoweave reset``."""

from __future__ import annotations

from pathlib import Path

import click

from memoweave.cli.common import config_option, open_memory, server_option
from memoweave.cli.errors import confirm
from memoweave.errors import ValidationError

_STORES: dict[str, str] = {
    "qdrant": """vector_store:
  provider: qdrant                  # pip install memoweave-qdrant
  config:
    mode: edge                      # embedded Qdrant Edge: no server, one process at a time
    path: {home}/qdrant-edge
""",
    "qdrant-server": """vector_store:
  provider: qdrant                  # pip install memoweave-qdrant
  config:
    url: ${{QDRANT_URL:-http://localhost:6333}}   # a Qdrant server or cluster
    api_key: ${{QDRANT_API_KEY:-}}
""",
    "milvus": """vector_store:
  provider: milvus                  # pip install memoweave-milvus
  config:
    uri: {home}/milvus.db           # Milvus Lite; http://host:19530 for a server
""",
    "upstash": """vector_store:
  provider: upstash                 # pip install memoweave-upstash
  config:
    url: ${{UPSTASH_VECTOR_REST_URL}}
    token: ${{UPSTASH_VECTOR_REST_TOKEN}}
    # embeddings: server            # an index with an embedding model embeds the text;
                                    # then remove the embedder section
""",
    "memory": """vector_store:
  provider: memory                  # built in: exact search in process memory
  config:
    path: {home}/memory-store       # omit to keep nothing on disk
""",
}
_EMBEDDERS: dict[str, str] = {
    "onnx": """embedder:
  provider: onnx                    # pip install memoweave-onnx: int8 all-MiniLM-L6-v2, 384 dims
""",
    "sentence-transformers": """embedder:
  provider: sentence-transformers   # pip install memoweave-sentence-transformers (torch)
  config:
    model: /path/to/a/local/model   # omit for the packaged all-MiniLM-L6-v2
""",
    "openai": """embedder:
  provider: openai                  # pip install memoweave-openai; any OpenAI-compatible server
  config:
    model: text-embedding-3-small
    api_key: ${{OPENAI_API_KEY}}
""",
    "ollama": """embedder:
  provider: ollama                  # pip install memoweave-ollama
  config:
    model: nomic-embed-text
    host: ${{OLLAMA_HOST:-http://127.0.0.1:11434}}
""",
}
_LLMS: dict[str, str] = {
    "none": """# llm:                            # without an LLM, add(infer=True) uses the offline
#   provider: openai                # extractor; uncomment to let a model extract facts
""",
    "openai": """llm:
  provider: openai                  # pip install memoweave-openai; any OpenAI-compatible server
  config:
    model: gpt-4.1-mini
    api_key: ${{OPENAI_API_KEY}}
    # base_url: http://localhost:8000/v1   # vLLM, LM Studio, llama.cpp, DeepSeek...
""",
    "ollama": """llm:
  provider: ollama                  # pip install memoweave-ollama
  config:
    model: llama3.2
    host: ${{OLLAMA_HOST:-http://127.0.0.1:11434}}
""",
}
_TAIL = """history_db_path: {home}/history.db   # SQLite: history, message window, write journal
collection_name: memoweave
extraction:
  strategy: additive                # one LLM call per add(); "decide" is mem0 v1's two calls
  # custom_instructions: "Only remember food preferences."
retrieval:
  keyword_source: core              # BM25 beside the history; "store" uses the store's own
"""


@click.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("memoweave.yaml"),
    show_default=True,
    help="Where to write the configuration.",
)
@click.option("--store", type=click.Choice(sorted(_STORES)), default="qdrant", show_default=True)
@click.option(
    "--embedder", type=click.Choice(sorted(_EMBEDDERS)), default="onnx", show_default=True
)
@click.option("--llm", type=click.Choice(sorted(_LLMS)), default="none", show_default=True)
@click.option(
    "--home",
    default="~/.memoweave",
    show_default=True,
    help="Folder for the local files (store, history).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(output: Path, store: str, embedder: str, llm: str, home: str, force: bool) -> None:
    """Write a commented YAML configuration for the chosen providers."""
    if output.exists() and not force:
        raise ValidationError(
            f"{output} already exists", hint="Pass --force to overwrite it, or -o another path."
        )
    body = (_STORES[store] + _EMBEDDERS[embedder] + _LLMS[llm] + _TAIL).format(
        home=home.rstrip("/")
    )
    text = (
        "# memoweave configuration (docs/configuration.md); ${VAR} and ${VAR:-default} read\n"
        "# the environment. Use it with --config FILE or MEMOWEAVE_CONFIG=FILE.\n" + body
    )
    output.write_text(text, encoding="utf-8")
    click.echo(
        f"Wrote {output}; check it with: memoweave doctor --config {output} "
        f"(then pass --config {output}, or set MEMOWEAVE_CONFIG={output})."
    )


@click.command()
@config_option
@server_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def reset(config_path: Path | None, server_url: str | None, yes: bool) -> None:
    """Delete EVERY memory of every scope, the history and the indexes (with --server: an
    admin key's call to POST /reset)."""
    where = server_url or (str(config_path) if config_path is not None else "the embedded stack")
    confirm(f"Delete every memory and all history of {where}?", yes=yes)
    with open_memory(config_path, server_url) as memory:
        memory.reset()
    click.echo("Everything was deleted.")
