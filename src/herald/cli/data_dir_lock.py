"""One stack per data directory: `herald up` holds a lock on it for as long as it runs.

A second `herald up` in the same directory would otherwise find the first one's nats-server and
PostgreSQL, take them for leftovers of an earlier run and stop them, leaving the first stack
answering 503. The lock is an advisory `flock` on `<data dir>/herald.lock`: the kernel lets it go
when the holder exits, however it exits, so a crashed stack never leaves the directory locked.
The file also names the holder's pid, so the refusal can say which process to stop.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = "herald.lock"


class DataDirInUse(RuntimeError):
    """Another running process holds the data directory."""


class DataDirLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Takes the lock or raises DataDirInUse naming the process that holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 64, 0).decode(errors="replace").strip()
            os.close(fd)
            holder = f"pid {pid}" if pid else "its pid not yet written"
            raise DataDirInUse(
                f"the data directory {self.path.parent} is in use by a running Herald stack ({holder}); "
                "stop that one first (Ctrl-C in its terminal, or kill it), or give this one another "
                "directory (--data-dir or HERALD_DATA_DIR)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None
