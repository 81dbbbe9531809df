"""The LLM layer under faults, through ``socialsim.results.run`` against the test server
(socialsim.testing.llm_server): replies of 1 MB, a reply cache that is corrupt, locked by another
process or edited, a finished run rerun with its server gone, its cache replayed into a new
directory, and a server that starts refusing the structured output a run resolved."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

from socialsim import config
from socialsim.llm import (
    CacheUnavailable,
    RefusedCacheRow,
    build_model,
    forget_models,
)
from socialsim.llm.server import known_info
from socialsim.llm.wrappers import EXCERPT_CHARS
from socialsim.results import RunStopped, run
from socialsim.testing.decrypto_policies import DecryptoPolicy
from socialsim.testing.llm_server import ScriptedChatServer, request_format

MEGABYTE = 1_000_000
CACHE = "llm_cache.sqlite"


def experiment(api_base: str, episodes: int = 1, **model) -> dict:
    return {
        "name": "cache_faults",
        "episodes": episodes,
        "seed": 0,
        "env": {"id": "decrypto_v0"},
        "seats": {
            "*": {
                "kind": "llm_decrypto",
                "model": {
                    "model": "openai/test",
                    "api_base": api_base,
                    "max_retries": 0,
                    **model,
                },
            }
        },
    }


def constrained_policy():
    """A llama-cpp-python server's answers: the probe's, and Decrypto's JSON alone."""
    inner = DecryptoPolicy()

    def policy(messages, request):
        if messages[-1]["content"] == 'Answer with {"ready": "yes"}.':
            return '{"ready": "yes"}'
        text = inner(messages, request)
        return text[text.rindex("{") :]

    return policy


def llama_cpp_python() -> ScriptedChatServer:
    return ScriptedChatServer(
        policy=constrained_policy(), family="llama_cpp_python", structured_formats=("grammar",)
    )


def records(directory: Path) -> list[dict]:
    lines = (directory / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def played(directory: Path) -> list:
    """What the episodes did: steps, messages, returns, counters (not timings or cache flags)."""
    return [
        (r["status"], r["steps"], r["messages"], r["returns"], r["counters"])
        for r in records(directory)
    ]


def calls(directory: Path) -> list[dict]:
    return [
        event
        for record in records(directory)
        for events in record["events"].values()
        for event in events
        if event.get("type") == "llm_call"
    ]


def fresh_run(*args, **kwargs):
    forget_models()  # as a new process would: no model, server or probe remembered
    return run(*args, **kwargs)


def warned(caught, category) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, category)]


def checkpointed_size(path: Path) -> int:
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return path.stat().st_size


class Listener:
    """A bare TCP listener on a stopped server's port: counts the connections anything opens
    to it, so that "no request" means no connection at all, not a refused one."""

    def __init__(self, port: int) -> None:
        self.socket = socket.socket()
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", port))
        self.socket.listen(16)
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.socket.close()


@pytest.fixture(autouse=True)
def _fresh(fresh_models):
    yield


# -- replies of 1 MB ---------------------------------------------------------------------------------


def test_replies_of_a_megabyte_are_invalid_answers_and_neither_record_nor_cache_grows(tmp_path):
    out = tmp_path / "out"
    with ScriptedChatServer(policy=lambda messages, request: "x" * MEGABYTE) as server:
        results = fresh_run(experiment(server.url), out=out)
        received = list(server.answered)
    assert results.failed == []
    (record,) = records(out)
    assert record["status"] == "done"
    # two turns, each seat's decision asked 10 times (the paper's attempts), then its fallback
    assert {seat: (c["llm_calls"], c["invalid_answers"], c["fallbacks"]) for seat, c in
            record["counters"].items()} == {seat: (20, 20, 2) for seat in
                                            ("encoder", "decoder", "interceptor")}  # fmt: skip
    assert server.requests == 60
    bound = 16 * 750  # 16 characters per token of llm_decrypto's max_tokens
    for event in calls(out):
        assert event["reply"] == "x" * EXCERPT_CHARS
        assert event["invalid"] == (
            f"the reply is {MEGABYTE} characters long, over the bound of {bound} "
            "(max_reply_chars): answer briefly, in the format asked for"
        )
    # a re-prompt carries the excerpts of the earlier replies, never a whole one
    assert max(json.dumps(r["messages"]).count("x" * EXCERPT_CHARS) for r in received) == 9
    assert (out / "episodes.jsonl").stat().st_size < 60_000  # was 60 MB
    db = sqlite3.connect(out / CACHE)
    assert db.execute("SELECT COUNT(*), MAX(LENGTH(text)) FROM replies").fetchone() == (
        60,
        EXCERPT_CHARS,
    )
    db.close()
    assert checkpointed_size(out / CACHE) < 100_000  # was 331 MB


def test_a_replayed_oversized_reply_is_invalid_again_with_no_request(tmp_path):
    out = tmp_path / "out"
    with ScriptedChatServer(policy=lambda messages, request: "x" * MEGABYTE) as server:
        fresh_run(experiment(server.url), out=out)
        server.reset_counts()
        fresh_run(experiment(server.url), out=tmp_path / "again", cache=out / CACHE)
        assert server.requests == 0
    assert played(tmp_path / "again") == played(out)
    assert all(event["cached"] and "invalid" in event for event in calls(tmp_path / "again"))


def test_max_reply_chars_is_the_tables_bound(tmp_path, llm_server):
    llm_server.policy = lambda messages, request: "y" * 50
    model = build_model(
        {"model": "openai/test", "api_base": llm_server.url, "max_reply_chars": 40}, tmp_path
    )
    reply = asyncio.run(model.complete([{"role": "user", "content": "hi"}]))
    assert (reply.text, reply.invalid) == (
        "y" * 40,
        "the reply is 50 characters long, over the bound of 40 (max_reply_chars): answer "
        "briefly, in the format asked for",
    )
    with pytest.raises(ValueError, match="max_reply_chars: expected a number of characters > 0"):
        build_model({"model": "openai/test", "api_base": llm_server.url, "max_reply_chars": 0})


# -- a cache that is only a cache --------------------------------------------------------------------


def test_a_cache_of_garbage_bytes_is_bypassed_with_one_warning_and_left_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    garbage = b"not an SQLite file \x00\xff" * 400
    (out / CACHE).write_bytes(garbage)
    with ScriptedChatServer(policy=DecryptoPolicy()) as server:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = fresh_run(experiment(server.url), out=out)
        assert results.failed == [] and results.ran == 1
        assert server.requests == len(calls(out)) == 9  # every reply asked for, none lost
    (message,) = warned(caught, CacheUnavailable)
    assert message == (
        f"the reply cache {out / CACHE} cannot be used (DatabaseError: file is not a database); "
        "the run goes on without it: replies are asked for and logged, not stored"
    )
    assert (out / CACHE).read_bytes() == garbage


def test_a_cache_with_damaged_pages_is_bypassed_and_the_episode_is_the_same(tmp_path):
    with ScriptedChatServer(policy=DecryptoPolicy()) as server:
        fresh_run(experiment(server.url), out=tmp_path / "first")
        cache = tmp_path / "first" / CACHE
        checkpointed_size(cache)
        pages = cache.read_bytes()
        cache.write_bytes(pages[:4096] + b"\xa5" * (len(pages) - 4096))  # all but the schema
        server.reset_counts()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = fresh_run(experiment(server.url), out=tmp_path / "again", cache=cache)
        assert results.failed == []
        assert server.requests == 9
    assert warned(caught, CacheUnavailable) == [
        f"the reply cache {cache} cannot be used (DatabaseError: database disk image is "
        "malformed); the run goes on without it: replies are asked for and logged, not stored"
    ]
    assert played(tmp_path / "again") == played(tmp_path / "first")


def hold_lock(path: Path) -> subprocess.Popen:
    """Another process holding an exclusive lock on the SQLite file ``path`` until killed."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('CREATE TABLE IF NOT EXISTS held (x)')\n"
            "db.execute('BEGIN EXCLUSIVE')\n"
            "print('held', flush=True)\n"
            "time.sleep(600)\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "held\n"
    return holder


@pytest.mark.slow  # two seconds of busy timeout
def test_a_cache_locked_by_another_process_is_bypassed_and_the_run_is_done(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    holder = hold_lock(out / CACHE)
    try:
        with ScriptedChatServer(policy=DecryptoPolicy()) as server:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results = fresh_run(experiment(server.url), out=out)
            assert results.failed == [] and server.requests == 9
    finally:
        holder.kill()
        holder.wait()
    assert warned(caught, CacheUnavailable) == [
        f"the reply cache {out / CACHE} cannot be used (OperationalError: database is locked); "
        "the run goes on without it: replies are asked for and logged, not stored"
    ]
    assert [e["error"] for e in calls(out)] == [None] * 9


@pytest.mark.slow  # two seconds of busy timeout
def test_a_lock_taken_mid_run_keeps_the_reply_already_paid_for(tmp_path, llm_server):
    model = build_model({"model": "openai/test", "api_base": llm_server.url}, tmp_path)
    ask = [{"role": "user", "content": "first"}]
    asyncio.run(model.complete(ask))
    holder = hold_lock(tmp_path / CACHE)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            paid = asyncio.run(model.complete([{"role": "user", "content": "second"}]))
            again = asyncio.run(model.complete([{"role": "user", "content": "second"}]))
            hit = asyncio.run(model.complete(ask))
    finally:
        holder.kill()
        holder.wait()
    assert paid.text == again.text == "echo: second" and not again.cached
    assert not hit.cached  # bypassed for the rest of the run, hits included
    assert llm_server.requests == 4
    assert len(warned(caught, CacheUnavailable)) == 1


def test_an_unreadable_cache_is_bypassed(tmp_path, llm_server):
    if os.geteuid() == 0:
        directory = tmp_path / CACHE  # root reads any file: a directory in its place instead
        directory.mkdir()
    else:
        (tmp_path / CACHE).write_bytes(b"")
        (tmp_path / CACHE).chmod(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = build_model({"model": "openai/test", "api_base": llm_server.url}, tmp_path)
        reply = asyncio.run(model.complete([{"role": "user", "content": "hi"}]))
    assert reply.text == "echo: hi" and llm_server.requests == 1
    assert len(warned(caught, CacheUnavailable)) == 1


def test_an_edited_row_is_refused_asked_again_and_replaced(tmp_path):
    first, replay = tmp_path / "first", tmp_path / "replay"
    with ScriptedChatServer(policy=DecryptoPolicy()) as server:
        fresh_run(experiment(server.url), out=first)
        cache = first / CACHE
        db = sqlite3.connect(cache)
        key, text = db.execute("SELECT key, text FROM replies ORDER BY rowid LIMIT 1").fetchone()
        db.execute("UPDATE replies SET text = ? WHERE key = ?", (text.upper(), key))
        db.commit()
        db.close()
        server.reset_counts()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fresh_run(experiment(server.url), out=replay, cache=cache)
        assert server.requests == 1  # the refused row, asked again
        assert len(warned(caught, RefusedCacheRow)) == 1
        assert played(replay) == played(first)
        db = sqlite3.connect(cache)
        assert db.execute("SELECT text FROM replies WHERE key = ?", (key,)).fetchone() == (text,)
        db.close()
        server.reset_counts()
        fresh_run(experiment(server.url), out=tmp_path / "third", cache=cache)
        assert server.requests == 0  # the replaced row passes its checksum


def test_a_cache_made_before_checksums_keeps_serving_its_rows(tmp_path, llm_server):
    ask = [{"role": "user", "content": "hi"}]
    table = {"model": "openai/test", "api_base": llm_server.url}
    key = build_model({**table, "cache": False}).settings.request_hash(ask)
    db = sqlite3.connect(tmp_path / CACHE)
    db.execute(
        "CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, request TEXT NOT NULL, "
        "text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
        "cost REAL, latency_s REAL NOT NULL, finish_reason TEXT, created TEXT NOT NULL)"
    )
    db.execute(
        "INSERT INTO replies VALUES (?, 'openai/test', '{}', 'stored', 1, 1, NULL, 0.1, 'stop', "
        "'2026-01-01')",
        (key,),
    )
    db.commit()
    db.close()
    model = build_model(table, tmp_path)
    assert asyncio.run(model.complete(ask)).text == "stored"
    asyncio.run(model.complete([{"role": "user", "content": "new"}]))  # a new row, in the old file
    assert llm_server.requests == 1
    forget_models()
    assert asyncio.run(build_model(table, tmp_path).complete(ask)).cached


# -- a finished run reruns and replays with no server ------------------------------------------------


def test_a_finished_run_reruns_with_no_connection_to_anything(tmp_path):
    out = tmp_path / "out"
    server = llama_cpp_python().start()
    url, port = server.url, server._httpd.server_address[1]
    try:
        first = fresh_run(experiment(url), out=out)
        assert first.failed == [] and server.requests == 10  # the probe and 9 calls
        assert request_format(server.answered[1]) == "grammar"
    finally:
        server.stop()
    (llm,) = json.loads((out / "manifest.json").read_text())["llm"]
    assert llm["config"]["server"] == {
        "family": "llama_cpp_python",
        "context_window": None,
        "structured_format": "grammar",
        "constrains": True,
    }
    listener = Listener(port)
    try:
        again = fresh_run(experiment(url), out=out)
        checked = fresh_run(experiment(url), out=out, check_only=True)
    finally:
        listener.close()
    assert (again.ran, again.total, checked.ran) == (0, 1, 0)
    assert listener.connections == 0


def test_a_resumed_run_constrains_as_its_manifest_recorded_without_asking(tmp_path):
    out = tmp_path / "out"
    with llama_cpp_python() as server:
        fresh_run(experiment(server.url, cache=False), out=out)
        (out / "episodes.jsonl").write_text("")  # the episode to play again
        server.reset_counts()
        fresh_run(experiment(server.url, cache=False), out=out)
        assert server.requests == 9  # no probe
        assert known_info(server.url, "test") is None  # and GET /models was not asked
        assert {request_format(r) for r in server.answered} == {"grammar"}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_finished_runs_cache_replays_into_a_new_directory_with_the_server_stopped(
    tmp_path, workers
):
    first, replay = tmp_path / "first", tmp_path / "replay"
    with llama_cpp_python() as server:
        url = server.url
        fresh_run(experiment(url, episodes=2), out=first)
    # nothing listens now: GET /models is refused, and the cache says what the server was; the
    # workers get it with their episodes
    results = fresh_run(
        {**experiment(url, episodes=2), "workers": workers}, out=replay, cache=first / CACHE
    )
    assert results.failed == [] and results.ran == 2
    assert sorted(played(replay), key=repr) == sorted(played(first), key=repr)
    assert {e["cached"] for e in calls(replay)} == {True}
    assert len(calls(replay)) == len(calls(first))
    (llm,) = json.loads((replay / "manifest.json").read_text())["llm"]
    assert llm["config"]["server"]["structured_format"] == "grammar"


def test_auto_with_the_server_out_of_reach_and_nothing_recorded_is_a_config_error(tmp_path):
    with pytest.raises(config.ConfigError) as raised:
        fresh_run(experiment("http://127.0.0.1:9/v1"), out=tmp_path / "out")
    assert str(raised.value) == (
        "seats.*.model.api_base: the server at http://127.0.0.1:9/v1 cannot be reached, and "
        "structured_output = 'auto' depends on what it is (it constrains answers on llama.cpp, "
        "llama-cpp-python and vLLM servers); start the server, or set seats.*.structured_output "
        "= true or false"
    )
    assert not (tmp_path / "out").exists()


def test_a_server_that_starts_refusing_the_schema_stops_the_run_naming_seat_and_model(tmp_path):
    out = tmp_path / "out"
    with llama_cpp_python() as server:
        fresh_run(experiment(server.url), out=out)
        server.structured_formats = ("llama_cpp_python",)  # restarted, another way
        server.reset_counts()
        with pytest.raises(RunStopped) as raised:
            fresh_run(experiment(server.url, episodes=2), out=out)
        assert server.requests == 1 and server.answered == []  # refused once, not retried
    message = str(raised.value)
    assert "seat encoder (llm_decrypto): ProviderError: openai/test at " in message
    assert (
        "the server refused structured output in the form 'grammar', which this run resolved "
        "at its start (HTTP 500:"
    ) in message
    assert [r["status"] for r in records(out)] == ["done", "failed"]


def test_a_row_of_whole_numbers_in_real_columns_passes_its_checksum(tmp_path):
    from socialsim.llm import Reply, ReplyStore

    store = ReplyStore(tmp_path / CACHE)
    store.put("k", Reply(text="t", model="m", cost=0, latency_s=1))
    assert store.get("k") == Reply(text="t", model="m", cost=0.0, latency_s=1.0, request_hash="k")


def test_a_server_table_that_is_not_what_a_run_records_is_a_config_error():
    bad = experiment("http://127.0.0.1:9/v1", server={"family": "ollama"})
    with pytest.raises(config.ConfigError) as raised:
        config.load(bad)
    assert str(raised.value).startswith(
        "seats.*.model.server: expected a table {family = one of 'vllm', 'llama_cpp', "
        "'llama_cpp_python', 'openai_compatible', context_window = tokens or absent} (what a "
        "run records), got {'family': 'ollama'}"
    )
