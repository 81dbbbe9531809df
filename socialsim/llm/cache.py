"""The reply cache: an SQLite file of answered requests, and the :class:`Cache` wrapper.

A request is keyed explicitly on the SHA-256 of the canonical JSON (sorted keys, no spaces) of
``model``, ``api_base``, the full ``messages``, ``temperature``, ``max_tokens``, ``seed`` and every
provider parameter (:meth:`Settings.request <socialsim.llm.model.Settings.request>`): change any
of them and the key changes. The key alone names the request (its text, the whole chat, is not
stored: it made a row many times the size of its reply). Only successful replies are stored;
errors never are.

A row holds the reply's text and counts (a reply over ``max_reply_chars`` only as the excerpt
:class:`~socialsim.llm.ReplyLimit` left, marked invalid) and the checksum of both with the key:
a row that does not match it is refused, asked again and replaced. The ``servers`` table holds
what a run resolved of each server (:func:`recorded_server`), so that a replay of the cache
with the server gone constrains its answers as the run did and finds its rows.

A cache hit makes no request. Re-running a finished experiment with the same cache therefore
makes zero server calls. A call that must not get the cached answer of an identical earlier
request (e.g. a re-prompt that repeats the same messages) must change something in the request,
usually its ``seed``.

The file is opened in WAL mode with a short busy timeout, so several processes may share it;
within a process, every :class:`Cache` on the same path shares one connection
(:func:`open_store`). It is only a cache: corrupt, locked past the timeout or unreadable, it is
bypassed with one warning, and the reply still reaches the caller (:class:`ReplyStore`).
Identical requests in flight at the same time in one event loop are sent once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from socialsim.llm.model import (
    Chat,
    ChatMessage,
    ChatModel,
    Provider,
    Reply,
    Wrapper,
    check_messages,
    digest,
    served_name,
)
from socialsim.llm.offline import MISS as OFFLINE_MISS
from socialsim.llm.offline import OfflineMiss, is_offline
from socialsim.plain_json import canonical_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost REAL,
    latency_s REAL NOT NULL,
    finish_reason TEXT,
    created TEXT NOT NULL,
    invalid TEXT,
    checksum TEXT
)
"""
#: what a run resolved of each server (its family and window), for a replay without it
SERVERS = """
CREATE TABLE IF NOT EXISTS servers (
    api_base TEXT NOT NULL,
    model TEXT NOT NULL,
    facts TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (api_base, model)
)
"""
#: columns a file made before them lacks (added when it is opened); such a file's ``request``
#: column, which held each request's whole text, gets "" in new rows
ADDED_COLUMNS = {"invalid": "TEXT", "checksum": "TEXT"}
REPLY_COLUMNS = (
    "model, text, prompt_tokens, completion_tokens, cost, latency_s, finish_reason, invalid"
)

#: seconds a write waits for another process's lock before the cache is bypassed
BUSY_TIMEOUT_S = 2.0


class CacheUnavailable(UserWarning):
    """The reply cache cannot be read or written (corrupt, locked, unreadable): the run goes
    on without it. Said once per cache file and process."""


class RefusedCacheRow(UserWarning):
    """A row of the reply cache does not match its checksum (edited or damaged): it is a miss,
    asked again and replaced. Said once per cache file and process."""


def checksum(key: str, fields: Sequence[Any]) -> str:
    """The checksum of a row: its key and every field it holds."""
    return digest(canonical_json([key, *fields], allow_nan=False), 32)


def _as_stored(fields: Sequence[Any]) -> tuple[Any, ...]:
    """A reply's :data:`REPLY_COLUMNS` as the columns keep them (a 0 in a REAL column reads
    back as 0.0), so that a row checks the same written and read."""
    model, text, prompt_tokens, completion_tokens, cost, latency_s, finish_reason, invalid = fields
    return (
        model,
        text,
        int(prompt_tokens),
        int(completion_tokens),
        None if cost is None else float(cost),
        float(latency_s),
        finish_reason,
        invalid,
    )


class ReplyStore:
    """Replies on disk, by request key. Thread-safe; one connection per store.

    Only a cache: a file that cannot be opened, read or written (garbage, a lock another
    process holds past :data:`BUSY_TIMEOUT_S`, no permission, a full disk) is bypassed from then
    on (:attr:`bypassed` says why), with one :class:`CacheUnavailable` warning; every get is
    then a miss and every put is dropped, never an error. A row whose checksum does not match
    is a miss (one :class:`RefusedCacheRow` warning) and the next put replaces it.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._refused: set[str] = set()
        self._request_column = False
        self.bypassed: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit (isolation_level=None): each put is its own short transaction.
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            with self._lock:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(SCHEMA)
                self._db.execute(SERVERS)
                self._upgrade()
        except (sqlite3.Error, OSError) as error:
            self._bypass(error)

    def _upgrade(self) -> None:
        """Add the columns a file made before them lacks; its rows get their checksums."""
        have = {row[1] for row in self._db.execute("PRAGMA table_info(replies)")}
        self._request_column = "request" in have
        for name, kind in ADDED_COLUMNS.items():
            if name not in have:
                self._db.execute(f"ALTER TABLE replies ADD COLUMN {name} {kind}")
        rows = self._db.execute(
            f"SELECT key, {REPLY_COLUMNS} FROM replies WHERE checksum IS NULL"
        ).fetchall()
        if rows:
            self._db.executemany(
                "UPDATE replies SET checksum = ? WHERE key = ?",
                [(checksum(row[0], _as_stored(row[1:])), row[0]) for row in rows],
            )

    def _bypass(self, error: BaseException) -> None:
        if self.bypassed is not None:
            return
        self.bypassed = f"{type(error).__name__}: {error}"
        warnings.warn(
            f"the reply cache {self.path} cannot be used ({self.bypassed}); the run goes on "
            "without it: replies are asked for and logged, not stored",
            CacheUnavailable,
            stacklevel=3,
        )
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def get(self, key: str) -> Reply | None:
        if self.bypassed is not None:
            return None
        try:
            with self._lock:
                row = self._db.execute(
                    f"SELECT {REPLY_COLUMNS}, checksum FROM replies WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as error:
            self._bypass(error)
            return None
        if row is None:
            return None
        if checksum(key, _as_stored(row[:-1])) != row[-1]:
            if not self._refused:
                warnings.warn(
                    f"a row of the reply cache {self.path} does not match its checksum (edited "
                    "or damaged): it is asked again and replaced",
                    RefusedCacheRow,
                    stacklevel=3,
                )
            self._refused.add(key)
            return None
        model, text, prompt_tokens, completion_tokens, cost, latency_s, finish_reason, invalid = (
            row[:-1]
        )
        return Reply(
            text=text,
            model=model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            latency_s=latency_s,
            finish_reason=finish_reason,
            request_hash=key,
            invalid=invalid,
        )

    def put(self, key: str, reply: Reply) -> None:
        """Store ``reply`` unless the key is there already (the first answer stays, but a row
        refused by its checksum is replaced)."""
        if self.bypassed is not None:
            return
        fields = _as_stored(
            (
                reply.model,
                reply.text,
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.cost,
                reply.latency_s,
                reply.finish_reason,
                reply.invalid,
            )
        )
        verb = "OR REPLACE" if key in self._refused else "OR IGNORE"
        legacy = ", request" if self._request_column else ""
        values = (
            key,
            datetime.now(UTC).isoformat(timespec="seconds"),
            checksum(key, fields),
            *fields,
            *([""] if legacy else []),
        )
        try:
            with self._lock:
                self._db.execute(
                    f"INSERT {verb} INTO replies (key, created, checksum, {REPLY_COLUMNS}{legacy}) "
                    f"VALUES ({', '.join('?' * len(values))})",
                    values,
                )
        except sqlite3.Error as error:
            self._bypass(error)
            return
        self._refused.discard(key)

    def put_server(self, api_base: str, model: str, facts: Mapping[str, Any]) -> None:
        """Record what the run resolved of the server (see :func:`recorded_server`)."""
        if self.bypassed is not None:
            return
        text = canonical_json(dict(facts), allow_nan=False)
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO servers VALUES (?, ?, ?, ?)",
                    (api_base, model, text, checksum(f"{api_base} {model}", [text])),
                )
        except sqlite3.Error as error:
            self._bypass(error)

    def __len__(self) -> int:
        if self.bypassed is not None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def recorded_server(path: str | Path, api_base: str, model: str) -> dict[str, Any] | None:
    """What a run that filled the cache at ``path`` recorded of the server at ``api_base``
    serving ``model`` (:meth:`ServerInfo.facts <socialsim.llm.server.ServerInfo.facts>`); None
    when the file, the row or a matching checksum is missing, or the file cannot be read. Read
    on a connection of its own, closed at once (a process forks its workers after this)."""
    path = Path(path).expanduser()
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            row = db.execute(
                "SELECT facts, checksum FROM servers WHERE api_base = ? AND model = ?",
                (api_base, model),
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    if row is None or checksum(f"{api_base} {model}", [row[0]]) != row[1]:
        return None
    return json.loads(row[0])


_STORES: dict[Path, ReplyStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(path: str | Path) -> ReplyStore:
    """The process's one :class:`ReplyStore` for ``path`` (opened on first use; a forked
    worker opens its own, as a connection must not cross a fork)."""
    resolved = Path(path).expanduser().resolve()
    with _STORES_LOCK:
        store = _STORES.get(resolved)
        if store is None or store.pid != os.getpid():
            store = _STORES[resolved] = ReplyStore(resolved)
        return store


def forget_stores() -> None:
    """Forget the open stores: the next :func:`open_store` opens the file afresh (a store
    already in a model's hands stays open until the model goes)."""
    with _STORES_LOCK:
        _STORES.clear()


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
        provider = self.find(Provider)
        self._server = None if provider is None else provider.server

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        plain = check_messages(messages)
        settings = self.settings.with_overrides(overrides)
        key = settings.request_hash(plain)
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
        if is_offline():  # hermetic: what the cache does not hold is never asked
            raise OfflineMiss(
                f"{OFFLINE_MISS} for a request to {settings.model} "
                f"(cache key {key[:16]}, {self.store.path})"
            )
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        pending[slot] = future
        try:
            reply = await self.inner.complete(plain, **overrides)
        except Exception as error:
            future.set_exception(error)
            future.exception()  # marked retrieved: a failure nobody waited on is not a warning
            raise
        else:
            if self._server is not None:  # what the run resolved of the server, for a replay
                self.store.put_server(
                    settings.api_base, served_name(settings.model), self._server.facts()
                )
                self._server = None
            self.store.put(key, reply)
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
        invalid=reply.invalid,
    )
