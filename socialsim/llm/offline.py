"""Hermetic replay: while :func:`offline` is on, a request that no reply cache answers is an
:class:`OfflineMiss`, never sent (``socialsim fork --offline``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_OFFLINE = [False]


class OfflineMiss(RuntimeError):
    """A model request that neither the record nor the reply cache answers, in an offline run."""


def is_offline() -> bool:
    return _OFFLINE[0]


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """No model request inside the block: a cache miss raises :class:`OfflineMiss`."""
    before = _OFFLINE[0]
    _OFFLINE[0] = True
    try:
        yield
    finally:
        _OFFLINE[0] = before
