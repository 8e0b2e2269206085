"""Which process owns a journaled write: a lock file held for the life of a history.

Several processes may share one home (one history database, a store that allows it).
A write in flight is journaled before it touches the store; a process that opens the
home rolls back the journal rows a *crash* left behind, and must never roll back the
write another live process is in the middle of. Each :class:`OwnerLock` holds an
exclusive ``flock`` on ``<history>.owners/<owner>.lock`` until it is released or its
process dies (the kernel drops the lock), so "can I take that lock?" tells a dead owner
from a live one without trusting pids. Where ``fcntl`` is missing (Windows) every owner
counts as dead, which is right for one process per home.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # Windows: no owner locks


class OwnerLock:
    """This process's claim on the journal rows it writes (see the module docstring)."""

    def __init__(self, history_path: str) -> None:
        self.owner = uuid.uuid4().hex
        self._folder = Path(f"{history_path}.owners") if history_path != ":memory:" else None
        self._fd: int | None = None
        if self._folder is not None and fcntl is not None:
            self._folder.mkdir(parents=True, exist_ok=True)
            self._sweep()
            # locked under a temporary name, then renamed: a sweeping process never sees
            # this owner's file unlocked
            temporary = self._folder / f"{self.owner}.tmp"
            fd = os.open(temporary, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.replace(temporary, self._folder / f"{self.owner}.lock")
            self._fd = fd

    def _sweep(self) -> None:
        """Remove the lock files of dead owners (their journal rows count as dead either way)."""
        assert self._folder is not None
        for path in self._folder.glob("*.lock"):
            if not self.alive(path.stem):
                with contextlib.suppress(OSError):
                    path.unlink()

    def alive(self, owner: str | None) -> bool:
        """Whether ``owner`` (``None``: a row written before owners were recorded) is a
        live history: this one, or one whose lock file is still locked."""
        if owner is None or self._folder is None or fcntl is None:
            return False
        if owner == self.owner:
            return True
        path = self._folder / f"{owner}.lock"
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            return False  # released cleanly, or never created: nobody holds it
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)
        return False

    def release(self) -> None:
        """Drop the lock and its file. Idempotent."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                (self._folder / f"{self.owner}.lock").unlink()  # type: ignore[operator]  # fd set: folder too
            os.close(self._fd)
            self._fd = None
