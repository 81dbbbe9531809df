"""The reply cache: an SQLite file of answered requests, and the :class:`Cache` wrapper.

A request is keyed explicitly on the SHA-256 of the canonical JSON (sorted keys, no spaces) of
``model``, ``api_base``, the full ``messages``, ``temperature``, ``max_tokens``, ``seed`` and every
provider parameter (:meth:`Settings.request <socialsim.llm.model.Settings.request>`): change any
of them and the key changes. Only successful replies are stored; errors never are.

A cache hit makes no request. Re-running a finished experiment with the same cache therefore
makes zero server calls. A call that must not get the cached answer of an identical earlier
request (e.g. a re-prompt that repeats the same messages) must change something in the request,
usually its ``seed``.

The file is opened in WAL mode with a busy timeout, so several processes may share it; within a
process, every :class:`Cache` on the same path shares one connection (:func:`open_store`).
Identical requests in flight at the same time in one event loop are sent once.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
import weakref
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from socialsim.llm.model import (
    Chat,
    ChatMessage,
    ChatModel,
    Reply,
    Wrapper,
    check_messages,
    digest,
)
from socialsim.plain_json import canonical_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost REAL,
    latency_s REAL NOT NULL,
    finish_reason TEXT,
    created TEXT NOT NULL
)
"""


class ReplyStore:
    """Replies on disk, by request key. Thread-safe; one connection per store."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # Autocommit (isolation_level=None): each put is its own short transaction.
        self._db = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(SCHEMA)

    def get(self, key: str) -> Reply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT model, text, prompt_tokens, completion_tokens, cost, latency_s, finish_reason "
                "FROM replies WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        model, text, prompt_tokens, completion_tokens, cost, latency_s, finish_reason = row
        return Reply(
            text=text,
            model=model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            latency_s=latency_s,
            finish_reason=finish_reason,
            request_hash=key,
        )

    def put(self, key: str, request: dict[str, Any] | str, reply: Reply) -> None:
        """Store ``reply`` unless the key is there already (the first answer stays);
        ``request`` as a dict or already as its canonical JSON."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    reply.model,
                    request
                    if isinstance(request, str)
                    else canonical_json(request, allow_nan=False),
                    reply.text,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    reply.cost,
                    reply.latency_s,
                    reply.finish_reason,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                ),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


_STORES: dict[Path, ReplyStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(path: str | Path) -> ReplyStore:
    """The process's one :class:`ReplyStore` for ``path`` (opened on first use)."""
    resolved = Path(path).expanduser().resolve()
    with _STORES_LOCK:
        store = _STORES.get(resolved)
        if store is None:
            store = _STORES[resolved] = ReplyStore(resolved)
        return store


# Per event loop, the requests being answered now, by (store path, key): a twin request waits
# for the first one instead of sending its own.
_PENDING: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[Path, str], asyncio.Future]
] = weakref.WeakKeyDictionary()


class Cache(Wrapper):
    """Answer from ``store`` when the request was answered before; otherwise ask ``inner`` and
    store the reply. Hits come back with ``cached=True`` and ``attempt=0``."""

    def __init__(self, inner: ChatModel, store: ReplyStore | str | Path) -> None:
        super().__init__(inner)
        self.store = store if isinstance(store, ReplyStore) else open_store(store)

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        plain = check_messages(messages)
        settings = self.settings.with_overrides(overrides)
        # the key and the stored request from the chat's one encoding, which the inner layers
        # and the hit's prompt hash reuse (plain is a Chat)
        request = settings.request_json(plain)
        key = digest(request, 64)
        started = time.perf_counter()
        pending = _PENDING.setdefault(asyncio.get_running_loop(), {})
        slot = (self.store.path, key)
        while True:
            hit = self.store.get(key)
            if hit is not None:
                return _as_hit(hit, plain, started)
            twin = pending.get(slot)
            if twin is None:
                break
            try:
                reply = await asyncio.shield(twin)
            except asyncio.CancelledError:
                if twin.cancelled():
                    continue  # the first caller was cancelled, not us: ask ourselves
                raise
            return _as_hit(reply, plain, started)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        pending[slot] = future
        try:
            reply = await self.inner.complete(plain, **overrides)
        except Exception as error:
            future.set_exception(error)
            future.exception()  # marked retrieved: a failure nobody waited on is not a warning
            raise
        else:
            self.store.put(key, request, reply)
            future.set_result(reply)
            return reply
        finally:
            if not future.done():
                future.cancel()  # cancelled (or interrupted): a waiting twin asks for itself
            del pending[slot]

    def layer(self) -> dict[str, Any]:
        return {"layer": "Cache", "path": str(self.store.path)}


def _as_hit(reply: Reply, chat: Chat, started: float) -> Reply:
    return Reply(
        text=reply.text,
        model=reply.model,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        cost=reply.cost,
        latency_s=time.perf_counter() - started,
        cached=True,
        attempt=0,
        prompt_hash=chat.prompt_hash,
        request_hash=reply.request_hash,
        finish_reason=reply.finish_reason,
    )
