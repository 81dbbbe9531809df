import numpy as np
import pytest

from socialsim.agent import Agent
from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode

SEATS = {"matcher": {"kind": "pennies_random"}, "mismatcher": {"kind": "pennies_copycat"}}


def spec(seed: int, form: str, rounds: int = 6) -> EpisodeSpec:
    return EpisodeSpec(
        env_id="matching_pennies_v0",
        seed=seed,
        seats=SEATS,
        env_kwargs={"rounds": rounds},
        form=form,
    )


@pytest.mark.parametrize("form", ["parallel", "aec"])
def test_same_seed_gives_byte_identical_records(form):
    first, second = play_episode(spec(7, form)), play_episode(spec(7, form))
    assert first.status == "done"
    assert first.content() == second.content()


@pytest.mark.parametrize("form", ["parallel", "aec"])
def test_different_seed_gives_different_records(form):
    assert play_episode(spec(7, form)).content() != play_episode(spec(8, form)).content()


def test_both_forms_play_the_same_game():
    parallel, aec = play_episode(spec(3, "parallel")), play_episode(spec(3, "aec"))
    assert parallel.returns == aec.returns
    assert [m["payload"] for m in parallel.messages] == [m["payload"] for m in aec.messages]


def test_record_holds_messages_actions_rewards_and_returns():
    record = play_episode(spec(11, "parallel", rounds=3))
    assert record.env_id == "matching_pennies_v0" and record.seed == 11
    assert len(record.steps) == 3
    reveals = [m for m in record.messages if m["kind"] == "reveal"]
    assert len(reveals) == 3
    for step, reveal in zip(record.steps, reveals, strict=True):
        assert step["actions"] == {
            "matcher": reveal["payload"]["matcher"],
            "mismatcher": reveal["payload"]["mismatcher"],
        }
        winner = reveal["payload"]["winner"]
        assert step["rewards"][winner] == 1.0
    assert sum(record.returns.values()) == 0.0
    assert record.returns["matcher"] == record.summary["score"]["matcher"]
    # the copycat shows what the random player showed the round before: it reads only the bus
    faces = [s["actions"]["matcher"] for s in record.steps]
    assert [s["actions"]["mismatcher"] for s in record.steps] == [0, *faces[:-1]]
    # private lucky-face messages reach only their addressee
    for m in record.messages:
        if m["kind"] == "lucky_face":
            assert len(m["to"]) == 1


class Breaks(Agent):
    def act(self, observation, messages, info):
        raise ConnectionError("provider gave up after 5 attempts")


def test_an_agent_error_fails_the_episode_with_the_error_logged():
    s = spec(1, "parallel")
    agents = {"matcher": Breaks(), "mismatcher": Breaks()}
    for agent_id, agent in agents.items():
        agent.reset(agent_id, agent_id, 0)
    record = play_episode(s, agents=agents)
    assert record.status == "failed"
    assert (
        record.error == "seat matcher (Breaks): ConnectionError: provider gave up after 5 attempts"
    )


class Illegal(Agent):
    def act(self, observation, messages, info):
        return 5


def test_malformed_action_fails_episode_and_names_the_agent():
    agents = {"matcher": Illegal(), "mismatcher": Illegal()}
    for agent_id, agent in agents.items():
        agent.reset(agent_id, agent_id, 0)
    record = play_episode(spec(1, "parallel"), agents=agents)
    assert record.status == "failed"
    assert "matcher: expected an action in Discrete(2)" in record.error


def test_unknown_seat_kind_is_a_config_error():
    bad = EpisodeSpec(
        env_id="matching_pennies_v0",
        seed=0,
        seats={"matcher": {"kind": "nope"}, "mismatcher": {"kind": "nope"}},
    )
    with pytest.raises(ValueError, match="kind: unknown agent kind 'nope'; allowed: "):
        play_episode(bad)


class SlowCaller(Agent):
    """Stands for an LLM agent: waits on its 'model', then logs the call."""

    async def aact(self, observation, messages, info):
        import asyncio

        await asyncio.sleep(0.05)
        self.events.append({"type": "llm_call", "reply": "heads"})
        return 0


def test_a_failing_agent_s_siblings_are_awaited_and_their_calls_recorded():
    agents = {"matcher": Breaks(), "mismatcher": SlowCaller()}
    for agent_id, agent in agents.items():
        agent.reset(agent_id, agent_id, 0)
    record = play_episode(spec(1, "parallel"), agents=agents)
    assert record.status == "failed"
    assert record.error.startswith("seat matcher (Breaks): ConnectionError")
    assert record.events == {"mismatcher": [{"type": "llm_call", "reply": "heads"}]}


@pytest.mark.parametrize(
    "experiment",
    ["matching_pennies", "align_quickstart", "align_trust", "align_market", "decrypto_quickstart"],
)
def test_the_line_encoded_from_the_played_episode_is_the_records_line(experiment):
    # Episode.line reads the bus's frozen payloads as they are; the record thaws them first
    from socialsim.config import load
    from socialsim.episode import Episode

    spec = load(experiment, ["episodes=1"]).specs()[0]
    episode = Episode(spec)
    episode.play()
    line = episode.line("done", None, "2026-12-01T00:00:00+00:00", 0.5)
    record = episode.record("done", None, "2026-12-01T00:00:00+00:00", 0.5)
    assert record.messages and line == record.line()


@pytest.mark.parametrize(
    "summary",
    [
        {"n": np.int64(3), "x": np.float32(0.5), "t": (1, 2), "s": {"b", "a"}},  # orjson's text
        {"n": np.int64(3), 7: "a key jsonable writes as the string '7'"},
        {"small": 2.5e-07, "flag": True},  # the standard encoder writes 2.5e-07
        {"undefined": float("nan")},
    ],
)
def test_the_line_of_a_summary_not_plain_is_the_records_line(summary):
    # Episode.line encodes the env's summary as it is; the record makes it plain first
    from socialsim.config import load
    from socialsim.episode import Episode

    episode = Episode(load("align_quickstart", ["episodes=1"]).specs()[0])
    episode.play()
    episode.unwrapped.summary = lambda: summary
    line = episode.line("done", None, "2026-12-01T00:00:00+00:00", 0.5)
    assert line == episode.record("done", None, "2026-12-01T00:00:00+00:00", 0.5).line()
    assert '"summary":{' in line


def test_a_frozen_payload_is_encoded_as_its_thawed_copy():
    from socialsim.bus import freeze, thaw
    from socialsim.plain_json import canonical_json

    payload = freeze({"b": [1, {"z": (2.5, None)}], "a": {"y": "é", "x": [True]}})
    assert canonical_json({"p": payload}) == canonical_json({"p": thaw(payload)})
    assert canonical_json(payload) == '{"a":{"x":[true],"y":"é"},"b":[1,{"z":[2.5,null]}]}'
