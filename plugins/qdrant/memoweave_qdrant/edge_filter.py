"""The neutral filter tree of :mod:`memoweave_qdrant.filters` as a Qdrant Edge ``Filter``."""

from __future__ import annotations

from typing import Any

from memoweave_qdrant.filters import Clause, Condition, IsEmpty, Match, Range, Substring


class NativeFilter:
    """Builds ``qdrant_edge`` filters from :class:`Clause` trees (``q``: the module)."""

    def __init__(self, q: Any, np: Any) -> None:
        self._q = q
        self._np = np

    def of(self, where: Clause | None) -> Any:
        """The native filter of ``where`` (``None``: no filter)."""
        return None if where is None else self._clause(where)

    def _clause(self, clause: Clause) -> Any:
        return self._q.Filter(
            must=[self._cond(c) for c in clause.must] or None,
            should=[self._cond(c) for c in clause.should] or None,
            must_not=[self._cond(c) for c in clause.must_not] or None,
        )

    def _cond(self, cond: Condition) -> Any:
        q = self._q
        if isinstance(cond, Clause):
            return self._clause(cond)
        if isinstance(cond, Match):
            # The binding reads a Python bool as the integer 0/1 (bool subclasses int);
            # numpy.bool_ is not an int, so it reaches Qdrant as a JSON boolean.
            value = self._np.bool_(cond.value) if isinstance(cond.value, bool) else cond.value
            return q.FieldCondition(cond.key, match=q.MatchValue(value))
        if isinstance(cond, Range):
            rng = q.RangeFloat(gt=cond.gt, gte=cond.gte, lt=cond.lt, lte=cond.lte)
            return q.FieldCondition(cond.key, range=rng)
        if isinstance(cond, Substring):
            return q.FieldCondition(cond.key, match=q.MatchSubstring(cond.text))
        if isinstance(cond, IsEmpty):
            return q.IsEmptyCondition(cond.key)
        raise TypeError(f"unknown condition {cond!r}")
