"""The base class of every conformance suite and its override guard.

A plugin's test class must run every standard test. ``test_no_overrides_DO_NOT_OVERRIDE``
fails when a subclass overrides a standard ``test_*`` method, or deletes it (sets it to
``None`` or to anything that is not a function), unless the override is decorated with
``@pytest.mark.xfail(reason="why this provider cannot pass it")`` with a non-empty reason.
Optional features are skipped through capability flags, never by deleting tests.
"""

from __future__ import annotations

import inspect
from typing import Any

GUARD_TEST = "test_no_overrides_DO_NOT_OVERRIDE"


class StandardTests:
    """Base of the suites; a class that sets ``_kit_suite = True`` in its body is a suite."""

    _kit_suite = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if GUARD_TEST in cls.__dict__ and not cls.__dict__.get("_kit_suite", False):
            raise TypeError(f"{cls.__qualname__} must not override {GUARD_TEST}")

    def test_no_overrides_DO_NOT_OVERRIDE(self) -> None:
        """No standard test is deleted, or overridden without a reasoned xfail mark.

        Troubleshooting: do not override or delete standard tests to make them pass. If the
        engine genuinely cannot honour one, override it with
        ``@pytest.mark.xfail(reason="...")`` and call ``super()``; optional features are
        declared through ``capabilities`` (or the suite's flags) and skipped by the kit.
        """
        problems = find_guard_violations(type(self))
        assert not problems, "Standard tests deleted or overridden:\n" + "\n".join(problems)


def suite_of(cls: type) -> type:
    """The conformance suite ``cls`` derives from (the first suite in its MRO)."""
    suites = [k for k in cls.__mro__ if k.__dict__.get("_kit_suite", False)]
    if not suites:
        raise TypeError(f"{cls.__qualname__} does not derive from a memoweave conformance suite")
    return suites[0]


def standard_test_names(suite: type) -> list[str]:
    """The names of the standard tests defined by ``suite`` and its mixins."""
    return sorted(
        name
        for name in dir(suite)
        if name.startswith("test_") and callable(inspect.getattr_static(suite, name, None))
    )


def has_reasoned_xfail(obj: object) -> bool:
    """True when ``obj`` carries ``@pytest.mark.xfail`` with a non-empty ``reason``."""
    for mark in getattr(obj, "pytestmark", None) or []:
        reason = mark.kwargs.get("reason") if mark.name == "xfail" else None
        if isinstance(reason, str) and reason.strip():
            return True
    return False


def find_guard_violations(cls: type) -> list[str]:
    """One line per standard test that ``cls`` deleted or overrode without a reasoned xfail."""
    suite = suite_of(cls)
    problems: list[str] = []
    for name in standard_test_names(suite):
        original = inspect.getattr_static(suite, name)
        current = inspect.getattr_static(cls, name, None)
        if current is original:
            continue
        if not callable(current):
            problems.append(
                f"- {name}: deleted (set to {current!r}); standard tests may not be removed"
            )
        elif not has_reasoned_xfail(current):
            problems.append(
                f"- {name}: overridden without @pytest.mark.xfail(reason=...); "
                "keep the standard test or mark the override as an expected failure"
            )
    return problems
