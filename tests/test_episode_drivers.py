"""Every way of playing a game drives the one Episode machine, so every driver gives the same
record (without its timing) for the same spec and actions: the synchronous and asynchronous
drivers, the RL seat view fed the recorded actions, and SharedSeats fed them too."""

import asyncio

import numpy as np
import pytest

from socialsim.episode import Episode, EpisodeSpec
from socialsim.runner import play_episode, play_episode_async

SEATS = {
    "agent_0": {"kind": "stern_judging"},
    "agent_1": {"kind": "image_scoring"},
    "agent_2": {"kind": "always_defect"},
    "agent_3": {"kind": "stern_judging"},
}
KWARGS = {"n_agents": 4, "schedule": "random", "rounds": 3}
LEARNER = "agent_0"


def spec(seed: int, form: str = "parallel", **kwargs) -> EpisodeSpec:
    return EpisodeSpec("donation_v0", seed, SEATS, {**KWARGS, **kwargs}, form=form)


def learner_actions(record) -> list:
    """The learner seat's actions, in the order it took them."""
    return [step["actions"][LEARNER] for step in record.steps if LEARNER in step["actions"]]


@pytest.mark.parametrize("form", ["parallel", "aec"])
def test_the_synchronous_and_asynchronous_drivers_give_one_record(form):
    plain = play_episode(spec(5, form))
    looped = asyncio.run(play_episode_async(spec(5, form)))
    assert plain.status == looped.status == "done"
    assert plain.content() == looped.content()


def test_the_seat_view_fed_the_recorded_actions_gives_the_runner_s_record():
    pytest.importorskip("gymnasium")
    from socialsim.rl.view import SeatView

    record = play_episode(spec(5))
    others = {a: s for a, s in SEATS.items() if a != LEARNER}
    view = SeatView("donation_v0", LEARNER, others, learner=SEATS[LEARNER], **KWARGS)
    view.reset(seed=5)
    done = False
    for action in learner_actions(record):
        assert not done
        _, _, terminated, truncated, _ = view.step(action)
        done = terminated or truncated
    assert done
    assert view.record.content() == record.content()


def test_shared_seats_fed_the_recorded_actions_give_the_runner_s_record():
    pytest.importorskip("stable_baselines3")
    from socialsim.rl.seats import SharedSeats

    others = {a: s for a, s in SEATS.items() if a != LEARNER}
    kwargs = {**KWARGS, "gossip": False}  # a slot's action is an index: no gossip text
    seats = SharedSeats(
        "donation_v0", 1, learners=[LEARNER], others=others, learner=SEATS[LEARNER], **kwargs
    )
    seats.reset()
    seed = seats._games[0].episode.spec.seed  # drawn from the game's own generator
    record = play_episode(spec(seed, gossip=False))
    actions = learner_actions(record)
    while True:
        deciding = bool(seats._games[0].infos[LEARNER]["decision"])
        _, _, dones, _ = seats.step(np.array([actions.pop(0) if deciding else 0]))
        if dones[0]:
            break
    assert actions == []
    (played,) = seats.records()
    assert played.content() == record.content()


def test_the_asynchronous_driver_tells_its_hook_who_is_deciding_as_they_answer():
    heard: list[list[str]] = []

    async def on_deciding(agent_ids: list[str]) -> None:
        heard.append(agent_ids)

    episode = Episode(spec(5))
    asyncio.run(episode.aplay(on_deciding))
    assert episode.steps
    told = iter(heard)
    for step in episode.steps:
        deciding = list(step["actions"])
        assert next(told) == deciding  # all of them, before any is asked
        for answered in range(1, len(deciding) + 1):  # then fewer as each answers
            assert len(next(told)) == len(deciding) - answered
    assert next(told, None) is None
