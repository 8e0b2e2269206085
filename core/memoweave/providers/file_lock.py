"""An exclusive, non-blocking advisory lock on a file, for embedded stores' folders.

The lock belongs to the open file, so the operating system drops it when the process dies:
a crash never leaves a stale lock behind. Two opens in the same process conflict too (POSIX
``flock`` locks belong to the open file description; Windows locks the byte range).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


class LockHeld(OSError):
    """Another process (or another store in this process) holds the lock."""


class ExclusiveFileLock:
    """``acquire()`` takes the lock on ``path`` (created if missing) or raises
    :class:`LockHeld`; ``release()`` drops it (idempotent)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock now or raise :class:`LockHeld`; a no-op if already held."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock(fd)
        except OSError as exc:
            os.close(fd)
            raise LockHeld(f"{self.path} is locked by another process or store") from exc
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (the lock file stays; it holds nothing)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                _unlock(fd)
            finally:
                os.close(fd)


if sys.platform == "win32":  # pragma: no cover - Windows
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
