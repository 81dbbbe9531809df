"""The Ray backend: episodes played as Ray tasks, on a local Ray or on an existing cluster.

``backend = "ray"`` in an experiment (``pip install 'socialsim[ray]'``). The driver connects to
the cluster that ``RAY_ADDRESS`` names, or starts a local Ray with ``workers`` CPUs (set
``RAY_AUTH_MODE=disabled`` for it). Each task plays up to ``max_concurrent`` episodes at once in
its own event loop (scripted ones without one) and returns their records as the lines it
encoded; the driver, the only writer of the log, writes them as tasks finish, without decoding
them again, so a killed run resumes as on the other backends, and the records are theirs byte
for byte apart from ``timing``. An LLM seat's reply cache lives in the results
directory, which the cluster's workers must then see (a shared file system) or the seat's
``model.cache`` names a path they do.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from socialsim.records import EpisodeRecord


class _Lines:
    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.lines: list[tuple[str, str]] = []

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        self.lines.append((status, line))


def _play_batch(specs: Sequence[Any], directory: str | None) -> list[tuple[str, str]]:
    from socialsim.runner import play_specs

    log = _Lines(directory)
    play_specs(specs, log, max_concurrent=len(specs))
    return log.lines


def run_on_ray(
    specs: Sequence[Any],
    log: Any,
    max_concurrent: int = 1,
    workers: int = 1,
    on_done=None,
) -> None:
    """Play ``specs`` as Ray tasks of ``max_concurrent`` episodes each, appending to ``log``."""
    try:
        import ray
    except ModuleNotFoundError:
        raise RuntimeError("backend: 'ray' needs Ray: pip install 'socialsim[ray]'") from None
    started = not ray.is_initialized()
    if started:
        address = os.environ.get("RAY_ADDRESS")
        options = {"include_dashboard": False, "log_to_driver": False}
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(num_cpus=max(1, workers), **options)
    task = ray.remote(num_cpus=1)(_play_batch)
    size = max(1, max_concurrent)
    directory = str(log.directory) if log.directory is not None else None
    refs = [task.remote(list(specs[i : i + size]), directory) for i in range(0, len(specs), size)]
    try:
        while refs:
            done, refs = ray.wait(refs, num_returns=1)
            for status, line in ray.get(done[0]):
                log.write(line, status)
                if on_done is not None:
                    failed = None if status == "done" else EpisodeRecord.from_line(line)
                    on_done(status, failed)
    finally:  # on Ctrl-C too: nothing keeps playing for a log nobody writes
        for ref in refs:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
