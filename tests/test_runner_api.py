"""The runner's paths and the Python API: a synchronous episode (no event loop) gives the record
of the event loop's; Episode driven step by step; the log's commit guarantee; socialsim.make,
run and load; the fit of agent kinds; --check, growing a grid and a shared reply cache."""

import asyncio
import json
import subprocess
import sys

import numpy as np
import pytest

import socialsim
from socialsim.agent import Agent
from socialsim.config import ConfigError
from socialsim.episode import Episode, EpisodeSpec
from socialsim.records import EventLog, read_records
from socialsim.runner import is_synchronous, play_episode, play_episode_async
from socialsim.testing import cli
from socialsim.testing.gossip_policies import GossipPolicy

DONATION = EpisodeSpec(
    env_id="donation_v0",
    seed=3,
    seats={f"agent_{i}": {"kind": "stern_judging"} for i in range(5)},
    env_kwargs={"n_agents": 5},
)


def with_form(spec: EpisodeSpec, form: str) -> EpisodeSpec:
    return EpisodeSpec(spec.env_id, spec.seed, spec.seats, spec.env_kwargs, form=form)


@pytest.mark.parametrize("form", ["parallel", "aec"])
def test_a_scripted_episode_without_an_event_loop_gives_the_event_loop_s_record(form):
    spec = with_form(DONATION, form)
    assert is_synchronous(spec)
    plain = play_episode(spec)
    looped = asyncio.run(play_episode_async(spec))
    assert plain.status == looped.status == "done"
    assert plain.content() == looped.content()


@pytest.mark.parametrize("form", ["parallel", "aec"])
def test_episode_driven_step_by_step_gives_play_episode_s_record(form):
    spec = with_form(DONATION, form)
    episode = Episode(spec)
    episode.start()
    decisions = 0
    while episode.deciding:
        actions = {
            a: episode.agents[a].act(episode.observations[a], episode.inbox(a), episode.infos[a])
            for a in episode.deciding
        }
        decisions += len(actions)
        episode.advance(actions)
    record = episode.record("done", None, "", 0.0)
    assert decisions == sum(len(step["actions"]) for step in record.steps) > 0
    assert record.content() == play_episode(spec).content()


class Sleeper(Agent):
    """An asynchronous agent: its episodes need an event loop."""

    async def aact(self, observation, messages, info):
        await asyncio.sleep(0)
        return 0


def test_an_agent_with_its_own_aact_is_played_in_an_event_loop():
    spec = EpisodeSpec("matching_pennies_v0", 0, {"matcher": {"kind": "pennies_random"}})
    agents = {"matcher": Sleeper(), "mismatcher": Sleeper()}
    for agent_id, agent in agents.items():
        agent.reset(agent_id, agent_id, 0)
    episode = Episode(spec, agents)
    assert not episode.synchronous
    record = play_episode(spec, agents)
    assert record.status == "done"
    assert record.returns == {"matcher": 10.0, "mismatcher": -10.0}  # 0 vs 0: every round a match


def test_each_appended_record_reaches_the_file_before_any_commit(tmp_path):
    log = EventLog(tmp_path, commit_every=1000, commit_seconds=3600.0)
    records = [play_episode(with_form(DONATION, "parallel"))] * 3
    for record in records:
        log.append(record)
    # not fsynced yet, but written: a reader (or a run after a kill) sees every record
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 3
    assert log._uncommitted == 3
    log.close()
    assert log._uncommitted == 0
    assert [r.content() for r in read_records(tmp_path)] == [records[0].content()]  # one key


def test_make_builds_the_aec_form_by_default_and_the_parallel_form_on_request():
    from pettingzoo import AECEnv, ParallelEnv

    assert isinstance(socialsim.make("donation_v0", n_agents=4), AECEnv)
    parallel = socialsim.make("donation_v0", form="parallel", n_agents=4)
    assert isinstance(parallel, ParallelEnv) and len(parallel.possible_agents) == 4
    with pytest.raises(ValueError, match="env.kwargs: unknown key 'agents'"):
        socialsim.make("donation_v0", agents=4)


def test_run_then_load_gives_the_tidy_frames(tmp_path):
    results = socialsim.run("matching_pennies", out=tmp_path / "r", overrides=["episodes=2"])
    assert (results.total, results.ran, results.failed) == (4, 4, [])
    frames = socialsim.load(tmp_path / "r")
    assert len(frames.episodes) == 4 and set(frames.episodes["status"]) == {"done"}
    assert len(frames.agent_episodes) == 8  # two seats
    assert len(frames.steps) == 4 * 10 * 2  # 10 rounds, both players act
    assert set(frames.messages["kind"]) >= {"reveal"}
    assert frames.llm_calls.empty
    with pytest.raises(ConfigError, match="holds no experiment"):
        socialsim.load(tmp_path)


def test_import_socialsim_leaves_the_runner_and_pandas_unimported():
    code = "import sys, socialsim; print(sorted(m for m in ('socialsim.runner', 'pandas', 'socialsim.results') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_decoded_vectors_are_memory_mapped_and_equal_to_the_decoded_ones(tmp_path):
    from socialsim.agents.embedding import vectors

    words = ["paris", "france", "paris", "zero"]  # a repeated word: its first row wins
    matrix = np.array([[3, 4], [1, 0], [0, 2], [0, 0]], dtype=np.float32)
    fresh = vectors.WordVectors(words, matrix.copy(), name="t")
    folder = tmp_path / "t-1"
    vectors._save_decoded(fresh, folder)
    loaded = vectors._load_decoded(folder, "t")
    assert isinstance(loaded.unit, np.memmap)
    assert isinstance(loaded._table, np.memmap)  # the sorted words too: no dict is built
    asked = ["zero", "paris", "france", "nope", "par", "parisx"]
    assert loaded.rows(asked).tolist() == fresh.rows(asked).tolist() == [3, 0, 1, -1, -1, -1]
    assert loaded.words == fresh.words == words
    assert np.array_equal(loaded.unit, fresh.unit) and np.array_equal(loaded.norms, fresh.norms)
    assert loaded.raw(["paris", "nope"]).tolist() == [[3.0, 4.0], [1.0, 1.0]]


def test_a_hint_vocabulary_is_kept_looked_up_beside_its_decoded_vectors(tmp_path):
    from socialsim.agents.embedding import vectors

    words = ["paris", "france", "zero", "tower"]
    matrix = np.array([[3, 4], [1, 0], [0, 2], [2, 0]], dtype=np.float32)
    folder = tmp_path / "t-1"
    vectors._save_decoded(vectors.WordVectors(words, matrix, name="t"), folder)
    hints = tmp_path / "hints.txt"
    hints.write_text("# a comment\nTower\nfrance\nnope\nparis\n", encoding="utf-8")
    built = vectors.load_hint_vocabulary(vectors._load_decoded(folder, "t"), hints)
    kept = [p for p in folder.iterdir() if p.name.startswith("hints-")]
    assert len(kept) == 1 and (kept[0] / "unit.npy").is_file()
    # as a new process finds it (new vectors object, so the per-process table is empty)
    read = vectors.load_hint_vocabulary(vectors._load_decoded(folder, "t"), hints)
    assert isinstance(read.unit, np.memmap) and not isinstance(built.unit, np.memmap)
    assert read.words == built.words == ["france", "paris"]  # "Tower" has no vector: exact case
    paris = (np.float32(3) / np.float32(5), np.float32(4) / np.float32(5))  # its unit vector
    assert np.array_equal(read.unit, built.unit) and read.unit.tolist() == [[1, 0], list(paris)]
    assert read.rows_of(" PARIS ") == built.rows_of("paris") == [1]
    hints.write_text("tower\nzero\n", encoding="utf-8")  # a changed file is looked up again
    changed = vectors.load_hint_vocabulary(vectors._load_decoded(folder, "t"), hints)
    assert changed.words == ["tower", "zero"]
    assert len([p for p in folder.iterdir() if p.name.startswith("hints-")]) == 2


# -- through the CLI ----------------------------------------------------------------------------


LLM_GOSSIP_IN_DECRYPTO = """
name = "wrong_llm"
[env]
id = "decrypto_v0"
[seats."*"]
kind = "llm_decrypto"
[seats."*".model]
model = "openai/test"
api_base = "http://127.0.0.1:9/v1"
[seats.interceptor]
kind = "llm_gossip"
[seats.interceptor.model]
model = "openai/test"
api_base = "http://127.0.0.1:9/v1"
"""


def test_an_llm_seat_that_does_not_fit_its_env_exits_2_before_anything_is_written(tmp_path):
    (tmp_path / "x.toml").write_text(LLM_GOSSIP_IN_DECRYPTO)
    run = cli.run("run", "x.toml", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == (
        "socialsim: error: seats.interceptor.kind: 'llm_gossip' cannot play seat interceptor "
        "of decrypto_v0: it plays gossip games, not decrypto games; kinds that fit: "
        "decrypto_constant_interceptor, decrypto_oracle_interceptor, decrypto_random_guesser, "
        "decrypto_random_word_interceptor, decrypto_realist_interceptor, "
        "decrypto_repeat_interceptor, glove_interceptor, llm_decrypto\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_glove_encoder_in_the_decoder_seat_is_refused_naming_the_decision(tmp_path):
    run = cli.run(
        "run", "decrypto_quickstart", "--set", "seats.decoder.kind=glove_encoder",
        "--out", str(tmp_path / "out"), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2
    assert (
        "seats.decoder.kind: 'glove_encoder' cannot play seat decoder of decrypto_v0: seat "
        "decoder makes 'guess' decisions and it makes only hints" in run.stderr
    )


def test_check_prints_the_plan_and_writes_nothing(tmp_path):
    run = cli.run("run", "align_quickstart", "--check", "--out", "out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "align_quickstart: checked; nothing written" in run.stderr
    assert "6 cells x 10 episodes = 60 episodes, 0 already logged in out, 60 to run" in run.stderr
    assert not (tmp_path / "out").exists()


def test_adding_grid_values_runs_only_the_new_cells_and_the_manifest_says_so(tmp_path):
    axis = "grid.seats.*.kind"
    first = cli.run(
        "run", "align_quickstart", "--set", "episodes=2", "--set", f'{axis}=["image_scoring"]',
        "--out", "out", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    grown = cli.run(
        "run", "align_quickstart", "--set", "episodes=2", "--quiet", "--out", "out",
        "--set", f'{axis}=["image_scoring", "stern_judging"]', "--set", "workers=2",
    cwd=tmp_path)  # fmt: skip
    assert grown.returncode == 0, grown.stderr
    assert "8 episodes, 4 already logged, 4 to run" in grown.stderr
    lines = (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()
    keys = [(json.dumps(json.loads(x)["cell"]), json.loads(x)["episode"]) for x in lines]
    assert len(keys) == len(set(keys)) == 8
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (growth,) = manifest["grown"]
    assert growth["cells"] == [2, 4] and growth["settings"] == {"workers": [None, 2]}
    dropped = cli.run(
        "run", "align_quickstart", "--set", "episodes=2", "--out", "out",
        "--set", f'{axis}=["stern_judging"]', cwd=tmp_path,
    )  # fmt: skip
    assert dropped.returncode == 2
    assert "grid values can only be added (the same axes, every old value kept)" in dropped.stderr


SHARED_CACHE = """
name = "shared_cache"
episodes = 1
[env]
id = "prisoners_v0"
[env.kwargs]
n_agents = 2
rounds = 1
gossip = false
[seats."*"]
kind = "llm_gossip"
[seats."*".model]
model = "openai/test"
api_base = "{api_base}"
transport = "openai_http"
max_retries = 0
"""


def test_two_directories_share_one_reply_cache(tmp_path, llm_server):
    llm_server.policy = GossipPolicy()
    (tmp_path / "x.toml").write_text(SHARED_CACHE.format(api_base=llm_server.url))
    cache = tmp_path / "replies.sqlite"
    for out in ("a", "b"):
        run = cli.run("run", "x.toml", "--out", out, "--cache", str(cache), "--quiet", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    assert cache.is_file()
    assert not (tmp_path / "a" / "llm_cache.sqlite").exists()
    calls = {
        out: [
            event["cached"]
            for record in read_records(tmp_path / out)
            for events in record.events.values()
            for event in events
            if event.get("type") == "llm_call"
        ]
        for out in ("a", "b")
    }
    assert calls["a"] and not any(calls["a"])
    assert len(calls["b"]) == len(calls["a"]) and all(calls["b"])  # every reply from the cache
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["config"]["cache"] == str(cache)
    assert [m["cache"] for m in manifest["llm"]] == [str(cache)]
