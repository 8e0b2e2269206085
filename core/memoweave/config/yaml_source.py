"""Reading a YAML configuration file while keeping the line of every value.

:func:`read_yaml` returns the parsed mapping and a :data:`Locator` that maps a location
(``("vector_store", "config", "uri")``) to the 1-based line where it is written, or where
its closest written parent is (for a missing field).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from memoweave.config.diagnostics import Loc, Locator, config_error
from memoweave.errors import ConfigError


def _locator(root: yaml.Node | None) -> Locator:
    def locate(loc: Loc) -> int | None:
        node = root
        if node is None:
            return None
        for part in loc:
            child = None
            if isinstance(node, yaml.MappingNode):
                child = next((v for k, v in node.value if k.value == str(part)), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                child = node.value[part] if 0 <= part < len(node.value) else None
            if child is None:
                break
            node = child
        return node.start_mark.line + 1

    return locate


def read_yaml(path: str | Path) -> tuple[dict[str, Any], Locator]:
    """Parse ``path`` safely. An empty file is an empty mapping.

    Raises:
        ConfigError: the file is missing or unreadable, is not valid YAML (message names
            file and line), or its top level is not a mapping.
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{file}: cannot read configuration file: {exc.strerror or exc}",
            hint="Check the path passed to MemoryConfig.from_yaml().",
            details={"file": file},
        ) from exc
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        where = f"{file}:{line}:{mark.column + 1}" if mark is not None else file
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            f"{where}: invalid YAML: {problem}",
            hint="Fix the YAML syntax at that line (indentation, quotes, ':' after keys).",
            details={"file": file, "line": line, "path": "<root>", "reason": problem},
        ) from exc
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise config_error(
            f"the top level must be a mapping, got {type(data).__name__}",
            path="<root>",
            file=file,
            line=1,
        )
    return data, _locator(node)
