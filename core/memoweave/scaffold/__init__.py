"""``memoweave plugins new``: a new plugin folder, rendered from this package's templates.

A template folder per provider kind (``vector_store/``) holds the files of a complete
plugin in the layout every plugin of this repository follows (docs/plugins.md, "Plugin
layout"): ``pyproject.toml`` (distribution ``memoweave-<name>``, the entry point at
``memoweave_<name>.plugin``), ``README.md``, the package (``__init__.py``, ``plugin.py``,
``config.py``, the provider module) and ``tests/test_conformance.py`` running the kit.
``{{key}}`` in a file, and the folder name ``PACKAGE``, are replaced by :func:`names`.
The generated plugin passes its conformance suite as it is; ``plugins/example-dictstore``
is exactly this rendering (a test holds it).
"""

from __future__ import annotations

import re
from pathlib import Path

from memoweave.errors import ValidationError

KINDS = ("vector_store",)
"""The provider kinds a plugin can be generated for."""
TEMPLATES = Path(__file__).resolve().parent
_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_-]*")


def names(name: str, *, provider: str | None = None, prefix: str | None = None) -> dict[str, str]:
    """The template values of plugin ``name`` (lowercase words joined by ``-``): folder
    ``name``, ``distribution`` ``memoweave-<name>``, ``package`` ``memoweave_<name_>``,
    registered ``provider`` (default ``name``), class ``Prefix`` (default the CamelCase of
    ``name``)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValidationError(
            f"invalid plugin name {name!r}",
            hint="Use lowercase letters and digits, words joined by '-', e.g. acme-store.",
        )
    provider = name if provider is None else provider
    if not _PROVIDER.fullmatch(provider):
        raise ValidationError(
            f"invalid provider name {provider!r}", hint="Use [a-z0-9][a-z0-9_-]*."
        )
    prefix = "".join(word.capitalize() for word in name.split("-")) if prefix is None else prefix
    if not prefix.isidentifier() or not prefix[:1].isupper():
        raise ValidationError(
            f"invalid class prefix {prefix!r}", hint="Use a CamelCase identifier, e.g. Acme."
        )
    return {
        "name": name,
        "distribution": f"memoweave-{name}",
        "package": "memoweave_" + name.replace("-", "_"),
        "provider": provider,
        "Prefix": prefix,
    }


def render(kind: str, values: dict[str, str]) -> dict[Path, str]:
    """``{relative path: text}`` of the plugin of ``kind`` with ``values`` filled in."""
    if kind not in KINDS:
        raise ValidationError(
            f"no template for provider kind {kind!r}", hint=f"Use one of {', '.join(KINDS)}."
        )
    root = TEMPLATES / kind
    files: dict[Path, str] = {}
    for template in sorted(root.rglob("*.tmpl")):
        parts = [
            values["package"] if p == "PACKAGE" else p for p in template.relative_to(root).parts
        ]
        text = template.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        files[Path(*parts).with_suffix("")] = text
    return files


def new_plugin(
    name: str,
    target: Path,
    *,
    kind: str = "vector_store",
    provider: str | None = None,
    prefix: str | None = None,
) -> list[Path]:
    """Write plugin ``name`` of ``kind`` into the new folder ``target / name``; the files
    written. Refuses (``ValidationError``) a folder that already exists."""
    files = render(kind, names(name, provider=provider, prefix=prefix))
    folder = Path(target) / name
    if folder.exists():
        raise ValidationError(
            f"{folder} already exists", hint="Pick another name or --dir, or remove the folder."
        )
    written = []
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


__all__ = ["KINDS", "names", "new_plugin", "render"]
