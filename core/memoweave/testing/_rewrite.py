"""Names of the kit modules whose asserts pytest rewrites (kept import-free on purpose)."""

from __future__ import annotations

KIT_MODULES: tuple[str, ...] = (
    "memoweave.testing.guard",
    "memoweave.testing.helpers",
    "memoweave.testing.filter_cases",
    "memoweave.testing.vs_base",
    "memoweave.testing.vs_collection",
    "memoweave.testing.vs_records",
    "memoweave.testing.vs_search",
    "memoweave.testing.vs_filters",
    "memoweave.testing.vs_paging",
    "memoweave.testing.vs_threads",
    "memoweave.testing.vector_store",
    "memoweave.testing.gs_base",
    "memoweave.testing.gs_write",
    "memoweave.testing.gs_traverse",
    "memoweave.testing.gs_scope",
    "memoweave.testing.graph_store",
    "memoweave.testing.llm",
    "memoweave.testing.embedder",
    "memoweave.testing.reranker",
    "memoweave.testing.model_base",
    "memoweave.testing.blocking",
    "memoweave.testing.async_suites",
    "memoweave.testing.local_llm",
)
