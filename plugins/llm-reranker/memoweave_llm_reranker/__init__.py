"""memoweave-llm-reranker: the ``llm`` reranker (one LLM call scores every candidate).

See :mod:`.reranker` for the behaviour and :mod:`.parsing` for the accepted answers.
"""

from __future__ import annotations

__version__ = "0.1.0"
