"""Reading a YAML configuration file while keeping the line of every value.

:func:`read_yaml` returns the parsed mapping and a :data:`Locator` that maps a location
(``("vector_store", "config", "uri")``) to the 1-based line where it is written, or where
its closest written parent is (for a missing field).

Hostile files are refused before anything is built: a duplicate key in one mapping (YAML
would keep the last silently), aliases that expand to more than :data:`MAX_NODES` nodes
("billion laughs") or refer to themselves. Anchors and aliases within that budget work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from memoweave.config.diagnostics import Loc, Locator, config_error
from memoweave.errors import ConfigError

MAX_NODES = 100_000
"""Nodes a configuration may hold once its aliases are expanded."""


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


def _check_nodes(root: yaml.Node, file: str) -> None:
    """Refuse duplicate keys, self-referring aliases and an expanded size beyond
    :data:`MAX_NODES`, in one pass over the composed graph (each node visited once)."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > MAX_NODES:
                _fail(node, file, f"the file expands to more than {MAX_NODES} values (aliases)")
            continue
        if key in size:
            continue
        if key in open_nodes:
            _fail(node, file, "an alias refers to the node that contains it")
        open_nodes.add(key)
        if isinstance(node, yaml.MappingNode):
            _check_duplicates(node, file)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_duplicates(node: yaml.MappingNode, file: str) -> None:
    seen: dict[str, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        if key_node.value in seen:
            first = seen[key_node.value].start_mark.line + 1
            _fail(
                key_node, file, f"duplicate key {key_node.value!r} (first written on line {first})"
            )
        seen[key_node.value] = key_node


def _fail(node: yaml.Node, file: str, problem: str) -> None:
    line = node.start_mark.line + 1
    raise ConfigError(
        f"{file}:{line}: invalid configuration file: {problem}",
        hint="Write each key once per mapping, and use anchors and aliases sparingly.",
        details={"file": file, "line": line, "path": "<root>", "reason": problem},
    )


def read_yaml(path: str | Path) -> tuple[dict[str, Any], Locator]:
    """Parse ``path`` safely. An empty file is an empty mapping.

    Raises:
        ConfigError: the file is missing or unreadable, is not valid YAML (message names
            file and line), or its top level is not a mapping.
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{file}: the configuration file is not valid UTF-8 (byte {exc.start})",
            hint="Save the file as UTF-8.",
            details={"file": file},
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"{file}: cannot read configuration file: {exc.strerror or exc}",
            hint="Check the path passed to MemoryConfig.from_yaml().",
            details={"file": file},
        ) from exc
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_nodes(node, file)
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
