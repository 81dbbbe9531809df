"""How ``socialsim serve`` listens: uvicorn, with the bounds a server open to people needs.

A connection is a file descriptor, and the process has few (often 1,024): held open by clients
that send nothing, or half a request, they would starve every other request, and once none is
left each failed ``accept()`` would log a traceback. So:

* **A connection cap** (:func:`connection_cap`: :data:`MAX_CONNECTIONS`, or fewer when the
  process's descriptor limit leaves less than :data:`SPARE_DESCRIPTORS` beside them): a
  connection past it gets ``503`` and is closed at once, so the server does not run out of
  descriptors (asyncio accepts up to ``backlog`` connections before any is refused, and the
  game logs and journals need some).
* **A head timeout** (:data:`HEAD_SECONDS`): a request's line and headers must arrive within
  it of the connection (or of the last response on a kept-alive one), else the connection is
  closed; uvicorn has no such bound of its own. Bodies have theirs in the app
  (:data:`socialsim.web.app.BODY_SECONDS`).
* **A bounded log** (:class:`BoundedLog`): at most :data:`LOG_BURST` records a
  :data:`LOG_WINDOW` of each kind (uvicorn's and asyncio's warnings, accept errors) and one
  line each, no traceback; then one line saying how many were left out.

The uvicorn options set (:func:`options`), and why:

* ``http=GuardedH11``: uvicorn's h11 protocol with the cap and the head timeout above.
* ``backlog=100`` (:data:`BACKLOG`; uvicorn's default is 2048): the listen queue, and so the
  most connections accepted in one burst, which the descriptors kept free must cover.
* ``timeout_keep_alive=5``: an idle kept-alive connection is closed after 5 s (uvicorn's default,
  named so that it stays).
* ``ws_max_size=MAX_BODY``: a seat's page sends nothing larger over its live socket.
* ``ws_ping_interval=20``, ``ws_ping_timeout=20``: a live socket whose page has gone (a closed
  laptop) is noticed within 40 s and closed.
* ``log_level="warning"``: no line per request.
* ``limit_concurrency`` is left unset: the connection cap bounds what it would, without
  answering 503 to the requests of connections already held.
The app caps the live sockets of one seat (:data:`socialsim.web.app.MAX_SOCKETS_PER_SEAT`).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 1000
#: connections asyncio accepts in one go (uvicorn's ``backlog``), before any is refused
BACKLOG = 100
#: descriptors kept free: one accept burst, and the sessions' logs, journals and manifests
SPARE_DESCRIPTORS = BACKLOG + 64
HEAD_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5.0
LOG_BURST = 20
LOG_WINDOW = 60.0
_REFUSED = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


def connection_cap(wanted: int = MAX_CONNECTIONS) -> int:
    """``wanted``, or fewer if the descriptor limit leaves less beside :data:`SPARE_DESCRIPTORS`
    (at least 1)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - SPARE_DESCRIPTORS))


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol, with a connection cap and a head timeout (the module docstring);
    :func:`guarded` sets the two."""

    cap = MAX_CONNECTIONS
    head_seconds = HEAD_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        if len(self.connections) > self.cap:
            transport.write(_REFUSED)
            transport.close()
            BoundedLog.note("socialsim.web", f"connection refused: {self.cap} are open")
            return
        self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._head_since = self.loop.time()
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_seconds, self._head_late)

    def _head_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        between = self.cycle is None or self.cycle.response_complete
        if not (between and self.conn.their_state is h11.IDLE):
            return  # a request is under way (its body has the app's bound), or an upgrade
        left = self._head_since + self.head_seconds - self.loop.time()
        if left > 0:  # a response ended since this timer was set: the new wait's remainder
            self._head_timer = self.loop.call_later(left, self._head_late)
            return
        self.transport.close()


def guarded(cap: int, head_seconds: float = HEAD_SECONDS) -> type[GuardedH11]:
    """The protocol class with this cap and head timeout."""
    return type("GuardedH11", (GuardedH11,), {"cap": cap, "head_seconds": head_seconds})


class BoundedLog(logging.Filter):
    """Let through at most :data:`LOG_BURST` records of a kind (logger and message) every
    :data:`LOG_WINDOW` seconds, each on one line (the traceback dropped, its last line kept);
    the first record after a window that left some out says how many."""

    def __init__(self) -> None:
        super().__init__()
        self._counts: dict[tuple[str, str], list[float]] = {}  # kind -> start, shown, left out

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, str(record.msg))
        now = time.monotonic()
        start, shown, left_out = self._counts.get(kind, (now, 0, 0))
        if now - start > LOG_WINDOW:
            if left_out:
                record.msg = f"{record.msg} ({int(left_out)} more like it left out)"
            start, shown, left_out = now, 0, 0
        if shown >= LOG_BURST:
            self._counts[kind] = [start, shown, left_out + 1]
            return False
        self._counts[kind] = [start, shown + 1, left_out]
        text = record.getMessage().splitlines()[0] if record.getMessage() else ""
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text = f"{text}: {type(error).__name__}: {error}"
        record.msg, record.args = text, ()
        record.exc_info = record.exc_text = record.stack_info = None
        return True

    @staticmethod
    def note(logger: str, text: str) -> None:
        logging.getLogger(logger).warning(text)


#: the loggers a flood writes to: uvicorn's, asyncio's (accept errors), ours
LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio", "socialsim.web")


def bound_logs() -> None:
    """Put one :class:`BoundedLog` on each of :data:`LOGGERS` (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, BoundedLog) for f in logger.filters):
            logger.addFilter(BoundedLog())
    if not logging.getLogger("socialsim.web").handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("socialsim: %(message)s"))
        logging.getLogger("socialsim.web").addHandler(handler)
        logging.getLogger("socialsim.web").propagate = False


def options(
    cap: int | None = None, head_seconds: float = HEAD_SECONDS, max_message: int = 16 * 1024
) -> dict[str, Any]:
    """uvicorn's keywords for ``serve`` (the module docstring says why each)."""
    bound_logs()
    return {
        "http": guarded(connection_cap() if cap is None else cap, head_seconds),
        "backlog": BACKLOG,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "ws_max_size": max_message,
        "ws_ping_interval": 20.0,
        "ws_ping_timeout": 20.0,
        "log_level": "warning",
    }


__all__ = ["BoundedLog", "GuardedH11", "connection_cap", "guarded", "options"]
