"""The index of ``episodes.jsonl``: what a rerun needs of each record, so that a finished or
resumed run reads its log in one hash, not one parse.

``episodes.index`` beside the log holds a header line (the format, the name of the head, the
bytes and lines of the log it covers, their SHA-256, and the SHA-256 of the heads) and then the
*head* of every record in those lines, in their order: the fields a reader asked for
(:func:`read`'s ``head``; for an evolution run, the record's identity, status, returns, the
fitness and strategy texts a generation is born of). A run writes it, whole, after it logs
(:func:`write`); only a scan of a log whose every line is a record has a digest to write it
from (a record found bad or set aside leaves none, so the next run reads the log whole and
writes it again).

Trust. The index is believed only for bytes that hash to the SHA-256 it names: a record edited
in place, planted, cut or removed after the index was written changes that hash, and the log is
then read whole, every line parsed and checked (its schema, and the caller's identity checks on
the heads) as if there were no index; lines appended after the index was written are parsed and
checked the same way, after its bytes. So the index vouches only for lines that were checked
when read, or written by the run itself. Editing the index by hand (and its hash with it) is not
caught: it is a cache of the run's own, as the code is.

Why an index rather than a cheaper parse, measured on ``experiments/align_evolution.toml`` (300
records, a 72 MB log; the figures in ``experiments/bench/rerun_bench.py``): parsing the log with
orjson alone takes 1.3 s of CPU and the records' schema checks 0.55 s, against 3.9-5 s for the
whole run, so no rerun that parses its log gets under a quarter of the run (the interpreter and
imports take 0.2 s more); the log's SHA-256 takes 0.038 s, and a rerun from the index 0.37 s.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from socialsim import records
from socialsim.whole_file import write_whole

INDEX = "episodes.index"
FORMAT = 1
_CHUNK = 1 << 20

Head = Callable[[dict[str, Any]], dict[str, Any]]


def read(directory: str | os.PathLike, head: Head, name: str) -> records.LogScan:
    """``directory``'s log as :func:`records.read_log` reads it, each record kept as
    ``head(record)``: the lines its index (of the head ``name``) vouches for taken from it, the
    rest parsed and checked."""
    return records.read_log(directory, head=head, known=_indexed(Path(directory), name))


def _indexed(directory: Path, name: str) -> records.LogScan | None:
    """The scan of the log's bytes its index covers, ``None`` unless the index is of ``name``,
    whole, and those bytes hash to what it says."""
    try:
        text = (directory / INDEX).read_bytes()
        header, _, heads = text.partition(b"\n")
        info = orjson.loads(header)
        if (
            not isinstance(info, dict)
            or info.get("format") != FORMAT
            or info.get("head") != name
            or info.get("heads_sha256") != hashlib.sha256(heads).hexdigest()
        ):
            return None
        size, lines = info["size"], info["lines"]
        digest = _hash_prefix(directory / records.EPISODES, size)
        if digest is None or digest.hexdigest() != info["sha256"]:
            return None
        kept = orjson.loads(heads)
        if len(kept) != lines:
            return None
        done = {
            (records.cell_id(data["cell"]), data["episode"])
            for data in kept
            if data["status"] == "done"
        }
    except (OSError, ValueError, KeyError, TypeError):  # not an index of ours: read the log
        return None
    return records.LogScan(kept, done, [], b"", lines, size, digest, indexed=size)


def _hash_prefix(path: Path, size: Any) -> Any:
    """SHA-256 of the first ``size`` bytes of ``path`` (``None`` when it has fewer)."""
    if type(size) is not int or size < 0:
        return None
    digest, buffer, left = hashlib.sha256(), bytearray(_CHUNK), size
    view = memoryview(buffer)
    with open(path, "rb") as f:
        while left:
            count = f.readinto(view[: min(left, _CHUNK)])
            if not count:
                return None
            digest.update(view[:count])
            left -= count
    return digest


def write(directory: str | os.PathLike, scan: records.LogScan, name: str) -> None:
    """Write the index of the log as ``scan`` holds it (its heads, of ``name``), if the scan
    vouches for every line of it and the index on disk does not cover them already. Nothing
    is written when it cannot be (a read-only disk): the next run reads the log whole."""
    if scan.digest is None or len(scan.records) != scan.lines or scan.indexed == scan.size:
        return
    heads = orjson.dumps(scan.records)
    header = {
        "format": FORMAT,
        "head": name,
        "size": scan.size,
        "lines": scan.lines,
        "sha256": scan.digest.hexdigest(),
        "heads_sha256": hashlib.sha256(heads).hexdigest(),
    }
    try:
        write_whole(Path(directory) / INDEX, [orjson.dumps(header), b"\n", heads])
    except OSError:
        return
    scan.indexed = scan.size
