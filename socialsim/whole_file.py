"""Files written whole or not at all (the results directory's manifest, the set-aside lines,
the log's index)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_whole(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``path`` whole or not at all: its bytes to a temporary file beside it, synced, then
    renamed over it (removed again if anything fails). The file gets the mode of the one it
    replaces, else what the user's umask gives a new file (as ``open`` does)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(fd, "wb") as f:
            try:
                mode = path.stat().st_mode & 0o777
            except FileNotFoundError:
                mode = 0o666 & ~_umask()
            os.fchmod(f.fileno(), mode)
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # read it the only way there is: set it, and put it back
    os.umask(mask)
    return mask
