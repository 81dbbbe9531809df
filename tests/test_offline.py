"""``socialsim run --offline``: no model request at all. A finished LLM run reruns with none; a
run whose log was cut replays its missing episodes from the reply cache with none; a reply the
cache lacks stops the run with one line naming the seat, its decision and the call."""

from __future__ import annotations

import pytest

from socialsim.cli import main
from socialsim.records import read_records

KEY_ENV = "SOCIALSIM_OFFLINE_TEST_KEY"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "dummy-key")


@pytest.fixture(scope="module", autouse=True)
def litellm_imported() -> None:
    from socialsim.llm import load_litellm

    load_litellm()


def _experiment(tmp_path, url):
    from socialsim.testing.gossip_policies import GossipPolicy  # noqa: F401 - the server's

    path = tmp_path / "x.toml"
    path.write_text(
        'name = "x"\nepisodes = 2\n[env]\nid = "donation_v0"\n'
        "[env.kwargs]\nn_agents = 4\nrounds = 3\n"
        '[seats."*"]\nkind = "llm_gossip"\nstructured_output = false\n'
        f'[seats."*".model]\nmodel = "openai/test"\napi_base = "{url}"\n'
        f'api_key_env = "{KEY_ENV}"\n'
    )
    return path


@pytest.fixture
def finished(tmp_path, llm_server, fresh_models):
    from socialsim.testing.gossip_policies import GossipPolicy

    llm_server.policy = GossipPolicy({"Kate"})
    path, out = _experiment(tmp_path, llm_server.url), tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    assert llm_server.stats()["requests"] > 0
    return path, out


@pytest.mark.slow
def test_a_finished_llm_run_reruns_offline_with_no_request(finished, llm_server, capsys):
    path, out = finished
    asked = llm_server.stats()["requests"]
    assert main(["run", str(path), "--out", str(out), "--quiet", "--offline"]) == 0
    assert llm_server.stats()["requests"] == asked
    assert "2 already logged, 0 to run" in capsys.readouterr().err


@pytest.mark.slow
def test_a_cut_log_replays_offline_from_the_cache_with_no_request(finished, llm_server):
    path, out = finished
    whole = [(r.steps, r.messages, r.returns) for r in read_records(out)]
    log = out / "episodes.jsonl"
    log.write_text(log.read_text().splitlines(keepends=True)[0])
    asked = llm_server.stats()["requests"]
    assert main(["run", str(path), "--out", str(out), "--quiet", "--offline"]) == 0
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
