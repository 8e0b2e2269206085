"""The indexes kept beside the history, below both ``memory`` and ``retrieval``.

- :mod:`.tokenize`: keyword tokens (lemmas, CJK bigrams);
- :mod:`.entities`: rule-based entity extraction;
- :mod:`.keyword_index` and :mod:`.keyword_postings`: per-scope BM25 over SQLite FTS5;
  :mod:`.keyword_topk`: the top-k of scopes too large to hold (MaxScore in SQLite);
- :mod:`.entity_index`: entity links with per-scope IDF;
- :mod:`.indexes`: :class:`SideIndexes`, what the write path talks to.

This package imports nothing from ``memoweave.memory`` or ``memoweave.retrieval``
(``tests/core/test_layering.py``); its host is described by :mod:`.contracts`.
"""

from memoweave.index.indexes import SideIndexes
from memoweave.index.keyword_index import KeywordDoc

__all__ = ["KeywordDoc", "SideIndexes"]
