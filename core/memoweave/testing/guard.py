"""The base class of every conformance suite and its override guard.

A plugin's test class must run every standard test. ``test_no_overrides_DO_NOT_OVERRIDE``
fails when a subclass overrides a standard ``test_*`` method, or deletes it (sets it to
``None`` or to anything that is not a function), unless the override is decorated with
``@pytest.mark.xfail(reason="why this provider cannot pass it")`` with a non-empty reason.
Optional features are skipped through capability flags, never by deleting tests.

The suites also check their own fixtures (:func:`check_factory_fixture`,
:func:`check_built`): a factory fixture that returns the provider itself instead of a
callable gets one failure saying so, not one ``TypeError`` per standard test.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from memoweave.testing.blocking import Blocking

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


_BROKEN_FIXTURES: dict[tuple[type, str], str] = {}
"""(test class, fixture name) -> the test that reported the fixture as broken."""


def check_factory_fixture(
    request: pytest.FixtureRequest, names: tuple[str, ...], kind: str
) -> None:
    """Fail once, with one line saying what to fix, when the first of ``names`` the test
    uses is not a zero-argument callable; skip the class's later tests with a pointer to
    that failure (instead of one raw ``TypeError`` per standard test)."""
    name = next((n for n in names if n in request.fixturenames), None)
    if name is None:
        return
    factory = request.getfixturevalue(name)
    if callable(factory):
        return
    key = (request.cls or type(None), name)
    if key in _BROKEN_FIXTURES:
        pytest.skip(f"`{name}` is not callable (reported once, by {_BROKEN_FIXTURES[key]})")
    _BROKEN_FIXTURES[key] = request.node.nodeid
    pytest.fail(
        f"`{name}` returned an instance of {type(factory).__name__}, not a zero-argument "
        f"callable: return "
        f"`lambda: load_registry().create(...)` so the kit can build a fresh {kind} when it "
        "needs one, not the store itself",
        pytrace=False,
    )


def check_built(provider: Any, cls: type, name: str) -> Any:
    """``provider`` (what the factory fixture ``name`` built) if it is a ``cls`` (also
    behind the async suites' :class:`~memoweave.testing.blocking.Blocking` view)."""
    target = provider.target if isinstance(provider, Blocking) else provider
    if not isinstance(target, cls):
        pytest.fail(
            f"`{name}()` built an instance of {type(target).__name__}, not a {cls.__name__}: "
            "build it "
            f"through load_registry().create(...)",
            pytrace=False,
        )
    return provider
