"""``socialsim fork``: a recorded LLM episode replayed to a turn from its record and cache with
no model request, then continued with a change; ``--offline`` never sends a request. And
``socialsim run --offline``: a finished LLM run reruns with no request, a cut log replays from
the reply cache with none, and a reply the cache lacks stops the run naming the seat, its
decision and the call."""

from __future__ import annotations

import json

import pytest

from socialsim.cli import main
from socialsim.records import read_records
from socialsim.testing.gossip_policies import GossipPolicy

KEY_ENV = "SOCIALSIM_GOSSIP_TEST_KEY"


@pytest.fixture(scope="module", autouse=True)
def litellm_imported() -> None:
    from socialsim.llm import load_litellm

    load_litellm()


def _experiment(tmp_path, url):
    path = tmp_path / "x.toml"
    path.write_text(
        'name = "x"\nepisodes = 1\n[env]\nid = "donation_v0"\n'
        "[env.kwargs]\nn_agents = 4\nrounds = 6\n"
        '[seats."*"]\nkind = "llm_gossip"\nstructured_output = false\n'
        f'[seats."*".model]\nmodel = "openai/test"\napi_base = "{url}"\n'
        f'api_key_env = "{KEY_ENV}"\n'
    )
    return path


@pytest.mark.slow
def test_an_offline_fork_at_turn_3_replays_the_prefix_with_no_request(
    llm_server, fresh_models, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    llm_server.policy = GossipPolicy({"Kate"})
    run = tmp_path / "run"
    assert main(["run", str(_experiment(tmp_path, llm_server.url)), "--out", str(run)]) == 0
    (original,) = read_records(run)
    assert original.status == "done", original.error
    asked = llm_server.stats()["requests"]
    assert asked > 0
    # the same seats, offline: every reply is in the cache, the whole episode is the original's
    same = tmp_path / "same"
    argv = ["fork", str(run), "--episode", "0", "--at", "3", "--out", str(same), "--offline"]
    assert main(argv) == 0
    assert llm_server.stats()["requests"] == asked
    (replayed,) = read_records(same)
    assert replayed.messages == original.messages and replayed.steps == original.steps
    # a change from turn 3: Kate (agent_1) is replaced by an always-defect player; offline,
    # the first prompt the change makes new is refused, naming the seat and the decision
    capsys.readouterr()
    swap = 'seats.agent_1={kind = "always_defect"}'
    argv = ["fork", str(run), "--episode", "0", "--at", "3", "--set", swap, "--offline"]
    assert main([*argv, "--out", str(tmp_path / "offline")]) == 2
    err = capsys.readouterr().err
    assert "--offline: seat agent_" in err and "decision 'donate'" in err and "cache key" in err
    assert llm_server.stats()["requests"] == asked
    # online it asks the server only for what the change made new, and keeps the prefix
    assert main([*argv[:-1], "--out", str(tmp_path / "changed")]) == 0
    assert 0 < llm_server.stats()["requests"] - asked < asked
    (forked,) = read_records(tmp_path / "changed")
    prefix = [s for s in original.steps if s["turn"] < 3]
    assert forked.steps[: len(prefix)] == prefix
    assert [m for m in forked.messages if m["turn"] < 3] == [
        m for m in original.messages if m["turn"] < 3
    ]
    assert forked.steps != original.steps
    assert forked.seats["agent_1"] == {"kind": "always_defect"}
    manifest = json.loads((tmp_path / "changed" / "manifest.json").read_text())
    assert manifest["fork"]["at"] == 3 and manifest["episodes_total"] == 1


SCRIPTED = (
    'name = "scripted"\nepisodes = 2\n[env]\nid = "donation_v0"\n'
    "[env.kwargs]\nn_agents = 4\nrounds = 4\n"
    '[seats."*"]\nkind = "stern_judging"\n'
    '[grid]\n"env.kwargs.gossip" = [true, false]\n'
)


@pytest.fixture
def scripted_fork(tmp_path):
    """A scripted run of two cells and a fork of its gossip cell's episode 1 at turn 2, named
    by the cell's JSON as ``json.dumps`` writes it (spaces after the colons)."""
    path = tmp_path / "scripted.toml"
    path.write_text(SCRIPTED)
    run, out = tmp_path / "run", tmp_path / "fork"
    assert main(["run", str(path), "--out", str(run), "--quiet"]) == 0
    cell = json.dumps({"env.kwargs.gossip": True})
    swap = 'seats.agent_0={kind = "always_defect"}'
    argv = ["fork", str(run), "--episode", "1", "--cell", cell, "--at", "2", "--set", swap]
    assert main([*argv, "--out", str(out)]) == 0
    return run, out


def test_a_fork_is_a_results_directory_naming_its_origin_and_its_change(scripted_fork):
    import socialsim

    run, out = scripted_fork
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["episodes_total"] == 1
    assert manifest["fork"]["run"] == str(run)
    assert manifest["fork"]["set"] == ['seats.agent_0={kind = "always_defect"}']
    assert manifest["fork"]["cell"] == {"env.kwargs.gossip": True}
    frames = socialsim.load(out)
    assert len(frames.episodes) == 1


@pytest.mark.slow
def test_report_reads_a_fork_alone_and_beside_its_origin(scripted_fork, capsys):
    run, out = scripted_fork
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "episodes: 1 done, 0 failed (of 1)" in text
    state = (
        f"state: fork of {run} episode 1 (cell {{'env.kwargs.gossip': True}}) replayed to turn 2, "
        'then: seats.agent_0={kind = "always_defect"}'
    )
    assert text.startswith(state)
    assert "state: fork of " in (out / "report.html").read_text()
    assert main(["report", str(run), str(out), "--no-files"]) == 0


def test_a_cell_that_is_not_json_is_one_clear_line(scripted_fork, capsys):
    run, out = scripted_fork
    argv = ["fork", str(run), "--episode", "0", "--cell", "gossip=true", "--at", "2"]
    assert main([*argv, "--out", str(out.parent / "other")]) == 2
    err = capsys.readouterr().err
    assert "--cell: expected the cell as a JSON object" in err and "'gossip=true'" in err


# -- run --offline ----------------------------------------------------------------------------------


@pytest.fixture
def finished(tmp_path, llm_server, fresh_models, monkeypatch):
    """A finished LLM run of two episodes."""
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    llm_server.policy = GossipPolicy({"Kate"})
    path, out = _experiment(tmp_path, llm_server.url), tmp_path / "run"
    argv = ["run", str(path), "--out", str(out), "--quiet", "--set", "episodes=2"]
    assert main(argv) == 0
    assert llm_server.stats()["requests"] > 0
    return path, out


@pytest.mark.slow
def test_a_finished_llm_run_reruns_offline_with_no_request(finished, llm_server, capsys):
    path, out = finished
    asked = llm_server.stats()["requests"]
    argv = ["run", str(path), "--out", str(out), "--quiet", "--set", "episodes=2", "--offline"]
    assert main(argv) == 0
    assert llm_server.stats()["requests"] == asked
    assert "2 already logged, 0 to run" in capsys.readouterr().err


@pytest.mark.slow
def test_a_cut_log_replays_offline_from_the_cache_with_no_request(finished, llm_server):
    path, out = finished
    whole = [(r.steps, r.messages, r.returns) for r in read_records(out)]
    log = out / "episodes.jsonl"
    log.write_text(log.read_text().splitlines(keepends=True)[0])
    asked = llm_server.stats()["requests"]
    argv = ["run", str(path), "--out", str(out), "--quiet", "--set", "episodes=2", "--offline"]
    assert main(argv) == 0
    assert llm_server.stats()["requests"] == asked
    # the same game; only its calls are marked as the cache's
    assert [(r.steps, r.messages, r.returns) for r in read_records(out)] == whole


@pytest.mark.slow
def test_a_reply_the_cache_lacks_stops_an_offline_run_naming_seat_decision_and_call(
    finished, llm_server, capsys
):
    path, out = finished
    asked = llm_server.stats()["requests"]
    argv = ["run", str(path), "--out", str(out), "--quiet", "--offline", "--set", "episodes=3"]
    assert main(argv) == 1
    assert llm_server.stats()["requests"] == asked
    err = capsys.readouterr().err
    assert "stopped, as no retry can heal this: seat agent_" in err
    assert "(llm_gossip), decision 'donate' at turn " in err
    assert "OfflineMiss: offline: no recorded or cached reply for a request to openai/test" in err
    assert "cache key " in err
