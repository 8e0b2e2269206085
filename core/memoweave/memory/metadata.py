"""Checking the metadata a caller attaches to a memory."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from memoweave.errors import ValidationError
from memoweave.memory.payload import SYSTEM_KEYS
from memoweave.memory.scope import IDENTITY_KEYS
from memoweave.memory.validate import check_text
from memoweave.providers.store_checks import INT64_MAX, INT64_MIN

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_METADATA_BYTES = 16_384
MAX_METADATA_DEPTH = 16
"""How deeply dicts and lists may nest inside metadata (a flat ``{"k": "v"}`` is 1)."""


def validate_metadata(metadata: Any) -> dict[str, Any]:
    """Check caller metadata: a dict of identifier keys, no system or identity keys."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationError(
            f"metadata must be a dict, got {type(metadata).__name__}",
            hint="Pass metadata={'key': 'value'}.",
        )
    for key in metadata:
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValidationError(
                f"metadata key {key!r} is not an identifier",
                hint="Use keys of letters, digits and underscores, starting with a letter.",
            )
        if key in IDENTITY_KEYS or key == "actor_id":
            raise ValidationError(
                f"metadata cannot set the identity key {key!r}",
                hint=f"Pass {key} as its own argument; identity never comes from metadata.",
            )
        if key in SYSTEM_KEYS:
            raise ValidationError(
                f"metadata key {key!r} is reserved by memoweave",
                hint="Rename the key, e.g. prefix it with 'app_'.",
            )
    _check_values(metadata)
    size = len(json.dumps(dict(metadata), ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValidationError(
            f"metadata is {size} bytes; the limit is {MAX_METADATA_BYTES}",
            hint="Keep large data in your own database and store a key here.",
        )
    return dict(metadata)


def _check_values(metadata: Mapping[str, Any]) -> None:
    """Every value is JSON that every store keeps exactly: strings (valid Unicode), 64-bit
    integers, finite floats, booleans, ``None``, and lists and string-keyed dicts of those
    nested at most :data:`MAX_METADATA_DEPTH` deep. Iterative, so depth cannot overflow."""
    hint = "Use strings, 64-bit integers, finite numbers, booleans, lists and dicts only."
    stack: list[tuple[str, Any, int]] = [("metadata", metadata, 1)]
    while stack:
        where, value, depth = stack.pop()
        if isinstance(value, str):
            check_text(where, value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if not INT64_MIN <= value <= INT64_MAX:
                raise ValidationError(f"{where} is an integer beyond 64 bits", hint=hint)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValidationError(f"{where} is {value!r}, not a finite number", hint=hint)
        elif isinstance(value, (Mapping, list, tuple)):
            if depth > MAX_METADATA_DEPTH:
                raise ValidationError(
                    f"metadata nests dicts and lists more than {MAX_METADATA_DEPTH} levels deep",
                    hint="Flatten the metadata; keep deep documents in your own database.",
                )
            if isinstance(value, Mapping):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise ValidationError(f"{where} has a non-string key {key!r}", hint=hint)
                    stack.append((f"{where}.{check_text(where + ' key', key)}", item, depth + 1))
            else:
                stack.extend((f"{where}[{i}]", item, depth + 1) for i, item in enumerate(value))
        else:
            raise ValidationError(
                f"{where} is a {type(value).__name__}, not a JSON value", hint=hint
            )
