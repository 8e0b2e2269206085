"""The files of a Qdrant Edge collection folder ``<root>/<name>/``: its metadata file,
its shard folders and the durable writes that create them (see :mod:`.edge_engine`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoweave.errors import VectorStoreError
from memoweave.providers.vector_store import Metric
from memoweave_qdrant.edge_index import DATATYPES

META = "memoweave.json"
SINGLE = "shard"
"""The shard folder of the single-shard layout."""
MAX_PARTITIONS = 256
_PART = re.compile(r"shard-(\d{3})-of-(\d{3})")
_SHARD_CONFIG = "edge_config.json"
"""A shard's own configuration file (written by qdrant-edge), read only by repair."""
_DISTANCES: dict[str, Metric] = {"Cosine": "cosine", "Dot": "dot", "Euclid": "euclidean"}


def part_name(p: int, partitions: int) -> str:
    """The folder name of partition ``p`` of ``partitions``."""
    return f"shard-{p:03d}-of-{partitions:03d}"


def read_meta(folder: Path, name: str) -> dict[str, Any]:
    """The checked metadata of collection ``name`` in ``folder``; a ``VectorStoreError``
    naming the repair when it is missing or damaged."""
    meta_file = folder / META
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        partitions = meta.get("partitions", 1) if isinstance(meta, dict) else None
        if (
            isinstance(meta, dict)
            and isinstance(meta.get("dims"), int)
            and meta["metric"]
            and meta.get("datatype", "float32") in DATATYPES
            and type(partitions) is int
            and 1 <= partitions <= MAX_PARTITIONS
        ):
            return meta
        problem = "is not a memoweave metadata file"
    except FileNotFoundError:
        problem = "is missing"
    except (OSError, ValueError, KeyError) as exc:
        problem = f"is unreadable ({exc})"
    raise VectorStoreError(
        f"the Qdrant Edge collection {name!r} at {folder} cannot be opened: "
        f"its metadata file {meta_file} {problem}; nothing was deleted",
        hint="Run `memoweave doctor --repair` to rebuild it from the shard's own "
        "configuration, or restore the file from a backup.",
        details={"collection": name, "location": str(folder), "repair": True},
    )


def partition_folders(folder: Path, name: str, partitions: int) -> set[int]:
    """The partitions of ``partitions`` whose shard folders exist in ``folder``; a
    ``VectorStoreError`` if one belongs to another partition count."""
    found = set()
    for entry in os.listdir(folder):
        match = _PART.fullmatch(entry)
        if match is None:
            continue
        p, of = int(match[1]), int(match[2])
        if of != partitions or p >= partitions:
            raise VectorStoreError(
                f"the Qdrant Edge collection {name!r} at {folder} cannot be opened: it "
                f"holds partition folder {entry} but its metadata records {partitions} "
                "partitions; nothing was changed",
                hint="Restore the collection folder (or its memoweave.json) from a backup.",
                details={"collection": name, "location": str(folder)},
            )
        found.add(p)
    return found


def rebuilt_meta(folder: Path, name: str) -> dict[str, Any]:
    """The metadata of collection ``name`` rebuilt from its shards: ``dims``, ``metric``
    and ``datatype`` from a shard's own configuration, the partition count from the
    partition folders' names (none: the single-shard layout)."""
    meta: dict[str, Any] = {}
    shard = folder / SINGLE
    parts = sorted(entry for entry in os.listdir(folder) if _PART.fullmatch(entry))
    counts = {int(entry[-3:]) for entry in parts}
    if not shard.is_dir() and len(counts) == 1:
        shard, meta["partitions"] = folder / parts[0], counts.pop()
    config_file = shard / _SHARD_CONFIG
    try:
        vectors = json.loads(config_file.read_text(encoding="utf-8"))["vectors"][""]
        dims, metric = int(vectors["size"]), _DISTANCES[vectors["distance"]]
        datatype = vectors.get("datatype") or "float32"
        if datatype not in DATATYPES:
            raise ValueError(f"unknown vector datatype {datatype!r}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise VectorStoreError(
            f"cannot rebuild the metadata of {folder}: the shard configuration "
            f"{config_file} is unreadable ({exc}); nothing was changed",
            hint="Restore the collection folder from a backup.",
            details={"collection": name, "location": str(folder)},
        ) from exc
    return {"dims": dims, "metric": metric, "datatype": datatype, **meta}


def create_folder(final: Path, fill: Callable[[Path], None]) -> None:
    """Create folder ``final`` complete or not at all: ``fill`` writes it under a staging
    name beside it (``.<name>.creating-<uuid>``, a leftover :func:`remove_leftovers`
    deletes), which is then renamed to ``final`` and the rename made durable."""
    staging = final.parent / f".{final.name}.creating-{uuid.uuid4().hex}"
    fill(staging)
    os.replace(staging, final)
    sync_dir(final.parent)


def remove_folder(folder: Path) -> None:
    """Delete ``folder``: renamed first (``.<name>.dropping-<uuid>``, durably), so that a
    crash mid-way leaves a leftover, never a half-deleted folder under its name."""
    doomed = folder.parent / f".{folder.name}.dropping-{uuid.uuid4().hex}"
    os.replace(folder, doomed)
    sync_dir(folder.parent)
    shutil.rmtree(doomed, ignore_errors=True)


def remove_leftovers(root: Path, name: str) -> None:
    """Delete the staging folders of collection ``name`` and of its partitions that a
    crash left behind (they never hold acknowledged data)."""
    leftovers = [*root.glob(f".{name}.creating-*"), *root.glob(f".{name}.dropping-*")]
    if (root / name).is_dir():
        leftovers += (root / name).glob(".shard-*.creating-*")
    for leftover in leftovers:
        shutil.rmtree(leftover, ignore_errors=True)


def write_json(path: Path, value: Any) -> None:
    """Write ``path`` atomically and durably (temporary file, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    sync_dir(path.parent)


def sync_dir(folder: Path) -> None:
    """fsync a folder so that a rename in it survives a power cut (POSIX only)."""
    if os.name != "posix":  # pragma: no cover
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
