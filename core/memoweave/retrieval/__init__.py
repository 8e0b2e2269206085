"""Search: candidate signals, fusion, threshold, reranking and explanations."""

from memoweave.retrieval.retriever import Retriever

__all__ = ["Retriever"]
