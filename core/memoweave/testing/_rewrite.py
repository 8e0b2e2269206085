"""Names of the kit modules whose asserts pytest rewrites: every module of this package
but the three that are imported before the rewrite can be registered. Read from the
package folder (nothing imported), so a new kit module is rewritten without a list to
keep up to date."""

from __future__ import annotations

from pathlib import Path

NOT_REWRITTEN = frozenset({"__init__", "_rewrite", "pytest_plugin"})
"""Imported while the rewrite is being registered (the package, this module, the
``pytest11`` plugin), so pytest could not rewrite them; none holds a standard test."""

KIT_MODULES: tuple[str, ...] = tuple(
    sorted(
        f"{__package__}.{path.stem}"
        for path in Path(__file__).parent.glob("*.py")
        if path.stem not in NOT_REWRITTEN
    )
)
