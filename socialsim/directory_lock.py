"""One writer per results directory: ``socialsim run`` holds an advisory lock on ``DIR/run.lock``
(``fcntl.flock``; the file holds the holder's pid) from before it reads what is logged until
its log is closed. A second run on the directory is refused, naming the process that holds it.
The kernel releases the lock when its process ends, however it ends, so the file a killed run
leaves behind blocks nothing.

A directory where the lock file cannot be made (a read-only disk) is read unlocked: nothing can
write there, so a run with nothing left to do ends cleanly, and one with episodes to play stops
at its first write (:class:`~socialsim.records.LogWriteError`).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from socialsim.config import ConfigError

LOCK = "run.lock"

#: The lock files this process holds open. A process forked from it (a pool worker) closes its
#: copies at once, so that the lock ends with the run itself, not with its last worker.
_held: set[int] = set()


def _close_inherited() -> None:
    for fd in _held:
        os.close(fd)
    _held.clear()


os.register_at_fork(after_in_child=_close_inherited)


@contextmanager
def hold(directory: Path) -> Iterator[None]:
    """Hold ``directory``'s lock (making the directory if it does not exist) for the block;
    a :class:`ConfigError` naming the holder's pid if another process holds it. A directory
    this call made, and the lock file it made, are removed again if nothing else was written."""
    made_directory = not directory.exists()
    path = directory / LOCK
    made_lock = not path.exists()
    fd = _lock(directory, path)
    if fd is not None:
        _held.add(fd)
    try:
        yield
    finally:
        if fd is not None:
            _held.discard(fd)
            try:
                if made_lock and os.listdir(directory) == [LOCK]:  # nothing written: leave none
                    path.unlink()
                    if made_directory:
                        directory.rmdir()
            except OSError:  # a directory gone or made read-only meanwhile
                pass
            os.close(fd)


def _lock(directory: Path, path: Path) -> int | None:
    """The descriptor of the held lock file, or ``None`` when the disk lets us make none."""
    while True:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise ConfigError(
                f"--out {directory}: in use by another socialsim run (pid {holder or 'unknown'}, "
                f"which holds {path}); wait for it to end, or choose another directory"
            ) from None
        if _same_file(fd, path):  # not a file a finishing run removed as we opened it
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:  # a full disk: the lock holds without the pid
        pass
    return fd


def _holder(fd: int) -> str:
    """The pid in a held lock file (its holder writes it just after taking the lock)."""
    for _ in range(50):
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if holder:
            return holder
        time.sleep(0.01)
    return ""


def _same_file(fd: int, path: Path) -> bool:
    try:
        held, named = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def holder(directory: Path) -> str | None:
    """The pid of the run that holds ``directory``'s lock now (``""`` if it wrote none), or
    ``None`` when no run holds it (a reader's question: it takes the lock for an instant only
    when nobody holds it, and a shared one)."""
    try:
        fd = os.open(Path(directory) / LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None
