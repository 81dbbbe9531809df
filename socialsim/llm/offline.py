"""Hermetic replay: while :func:`offline` is on, a request that no reply cache answers is an
:class:`OfflineMiss`, never sent, and no server is asked what it is (``--offline`` of
``socialsim run``, ``fork``, ``replay`` and ``rate``). The flag is also in the environment
(:data:`VARIABLE`), so the processes a run starts (its pool's workers) are offline too."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

#: set to ``1`` while a process is offline; its children inherit it
VARIABLE = "SOCIALSIM_OFFLINE"
#: how an offline miss's message starts (a run stops at the first)
MISS = "offline: no recorded or cached reply"


class OfflineMiss(RuntimeError):
    """A model request that neither the record nor the reply cache answers, in an offline run."""

    #: the episode names the seat's decision and turn beside it (:class:`~socialsim.episode.SeatError`)
    names_its_decision = True


def is_offline() -> bool:
    return os.environ.get(VARIABLE) == "1"


@contextlib.contextmanager
def offline(on: bool = True) -> Iterator[None]:
    """No model request inside the block (``on``): a cache miss raises :class:`OfflineMiss`."""
    before = os.environ.get(VARIABLE)
    if on:
        os.environ[VARIABLE] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before
