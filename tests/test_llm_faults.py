"""Fault injection: an LLM donation experiment run through the CLI against a test server that
fails 10% of requests with HTTP 500, 10% with 429, answers 10% with garbage and lets 5% time
out (seeded), after failing its first 7 requests. The experiment completes (re-run as a user would resume, while episodes fail
after the model's retries), every episode is accounted for, and the records hold exactly the
invalid answers, retries and failures the server's own counts imply.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from socialsim.cli import main
from socialsim.testing.gossip_policies import GossipPolicy

KEY_ENV = "SOCIALSIM_FAULTS_TEST_KEY"
EPISODES = 6
# Normal replies take milliseconds; a "timeout" fault sleeps far longer than the client waits,
# so that neither a busy machine nor a slow event loop blurs which requests timed out.
CLIENT_TIMEOUT_S = 2.0
TIMEOUT_SLEEP_S = 4.0
RATES = {"server_error": 0.10, "rate_limit": 0.10, "garbage": 0.10, "timeout": 0.05}


def experiment_file(directory: Path, api_base: str) -> Path:
    path = directory / "llm_faults.toml"
    path.write_text(
        f"""
name = "llm_faults"
episodes = {EPISODES}
seed = 0
max_concurrent = 3

[env]
id = "donation_v0"

[env.kwargs]
n_agents = 4

[seats."*"]
kind = "llm_gossip"

[seats."*".model]
model = "openai/test"
api_base = "{api_base}"
api_key_env = "{KEY_ENV}"
cache = false          # every reply must come from the server, so its counts are the truth
timeout = {CLIENT_TIMEOUT_S}
max_retries = 2
backoff = 0.01
""",
        encoding="utf-8",
    )
    return path


def warm_up(server) -> None:
    """One fault-free call first: litellm's first request in a process builds its schemas for
    about a second, holding the event loop (and so the clients' timers); then zero the counts."""
    import asyncio

    from socialsim.llm import LiteLLMModel

    server.set_schedule([None])  # answered (by echo) without drawing from the fault stream
    model = LiteLLMModel("openai/test", api_base=server.url, timeout=30)
    asyncio.run(model.complete([{"role": "user", "content": "hello"}]))
    server.reset_counts()


def read_records(directory: Path) -> list[dict]:
    lines = (directory / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.slow
def test_faulty_server_experiment_completes_and_counts_every_injected_fault(
    llm_server, fresh_models, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    warm_up(llm_server)
    llm_server.policy = GossipPolicy({"Emma"})
    llm_server.fault_rates = dict(RATES)
    llm_server.timeout_sleep_s = TIMEOUT_SLEEP_S
    # The first requests all fail: with 3 episodes in flight and 3 attempts per call, 7 failures
    # in a row make at least one episode outlive its retries, so the resume is always tested.
    llm_server.set_schedule(["server_error", "rate_limit"] * 3 + ["server_error"])
    file = experiment_file(tmp_path, llm_server.url)
    out = tmp_path / "results"

    codes = []
    for _ in range(6):  # a user re-runs the same command until nothing is left to do
        codes.append(main(["run", str(file), "--out", str(out), "--quiet"]))
        if codes[-1] == 0:
            break
    assert codes[-1] == 0, codes

    records = read_records(out)
    done = [r for r in records if r["status"] == "done"]
    failed = [r for r in records if r["status"] == "failed"]
    # Every episode is accounted for: done exactly once; a failed one was retried and done.
    assert sorted(r["episode"] for r in done) == list(range(EPISODES))
    assert {r["episode"] for r in failed} <= {r["episode"] for r in done}
    assert failed and codes[0] == 1  # a run with a failed episode exits 1...
    assert all(code == 1 for code in codes[:-1])  # ...and the user runs it again
    for record in failed:
        assert "gave up after 3 attempts" in record["error"]
        errors = [e for ev in record["events"].values() for e in ev if e.get("error")]
        assert len(errors) == 1  # the call that outlived its retries ended the episode

    # The server still sleeps on the requests whose client timed out last; let them finish so
    # that its counts are final (it counts a reply when it sends it).
    deadline = time.monotonic() + TIMEOUT_SLEEP_S + 5
    while llm_server.stats()["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.05)
    stats = llm_server.stats()
    assert stats["in_flight"] == 0
    faults = llm_server.faults
    counters = [c for r in records for c in r["counters"].values()]
    events = [e for r in records for ev in r["events"].values() for e in ev]
    calls = [e for e in events if e["type"] == "llm_call"]
    replies = [e for e in calls if e["error"] is None]
    invalid = sum(c["invalid_answers"] for c in counters)
    llm_calls = sum(c["llm_calls"] for c in counters)

    # Garbage replies and only they are invalid answers (the policy always answers validly).
    assert invalid == faults["garbage"] == sum("invalid" in e for e in replies)
    # Every reply the server sent reached an agent, except those to clients that timed out.
    assert llm_calls == len(replies) == stats["answered"] - faults["timeout"]
    # Every 429, 500 and timeout was retried, or counted in the attempts of a call given up on.
    transient = faults["server_error"] + faults["rate_limit"] + faults["timeout"]
    retried = sum(e["attempt"] - 1 for e in replies) + sum(
        e["attempt"] for e in calls if e["error"] is not None
    )
    assert retried == transient
    # 429s and 500s are the only requests that got no reply at all.
    assert stats["requests"] == faults["server_error"] + faults["rate_limit"] + stats["answered"]
    # Three garbage replies in a row end in the fallback; no other fallback happens.
    fallbacks = sum(c["fallbacks"] for c in counters)
    assert fallbacks == sum(e["type"] == "fallback" for e in events)
    # Every done episode played all 6 rounds with a decision for each (fallbacks included).
    assert all(len(r["summary"]["interactions"]) == 6 for r in done)

    with capsys.disabled():
        print(
            f"\nfault injection: {stats['requests']} requests, injected {dict(faults)}; "
            f"{llm_calls} replies seen, {invalid} invalid answers "
            f"(rate {invalid / llm_calls:.3f}; garbage rate among replies "
            f"{faults['garbage'] / (stats['answered'] - faults['timeout']):.3f}), "
            f"{fallbacks} fallbacks; {len(failed)} episodes failed and were retried; "
            f"CLI exit codes {codes}"
        )
