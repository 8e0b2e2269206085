"""memoweave.distributions: Name and Version from the header block equal what
importlib.metadata's full parse gives, for every installed distribution."""

from __future__ import annotations

import importlib.metadata

import pytest

from memoweave.distributions import installed_version, name_and_version


def test_every_installed_distribution_reads_as_importlib_metadata_reads_it() -> None:
    dists = list(importlib.metadata.distributions())
    assert len(dists) > 20
    for dist in dists:
        meta = dist.metadata
        expected = {k: meta[k] for k in ("Name", "Version") if meta[k] is not None}
        assert name_and_version(dist) == expected, dist._path  # type: ignore[attr-defined]
    for name in ("pydantic", "simplemma", "memoweave"):
        assert installed_version(name) == importlib.metadata.version(name)


def test_a_missing_distribution_raises_as_importlib_metadata_does() -> None:
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        installed_version("memoweave-no-such-distribution")
