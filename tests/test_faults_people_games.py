"""Games with people are bounded too: a bot that never decides fails the game naming its seat,
even where no alarm can ring (a browser game plays in a thread of its own), while a person's
seat is paced by its front end's idle timeout, never by ``decision_timeout``."""

from __future__ import annotations

import asyncio
import threading
import time

from faultlab import Dies

from socialsim.agent import Agent
from socialsim.episode import Episode, EpisodeSpec
from socialsim.play.session import BOT_DECISION_TIMEOUT, human_experiment
from socialsim.seeding import agent_seed

SEED = 3


class SlowPerson(Agent):
    """A stand-in for a person: answers heads after 0.6 s, past the bots' bound."""

    paced_by_person = True

    async def aact(self, observation, messages, info):
        await asyncio.sleep(0.6)
        return 0


def play_in_a_thread(matcher: Agent, timeout: float) -> tuple[str, str | None, float]:
    """Play a game of matching pennies through the asynchronous driver in a thread that is not
    the main one (as serve's games are); its status, error and wall time."""
    spec = EpisodeSpec(
        "matching_pennies_v0",
        SEED,
        {"matcher": {"kind": "x"}, "mismatcher": {"kind": "pennies_copycat"}},
        {"rounds": 2},
        decision_timeout=timeout,
    )
    from socialsim import registry

    agents = {"matcher": matcher, "mismatcher": registry.build_agent({"kind": "pennies_copycat"})}
    for seat, agent in agents.items():  # as build_agents resets the agents it builds
        agent.reset(seat, seat, agent_seed(SEED, seat))
    outcome: dict = {}

    def play() -> None:
        episode = Episode(spec, agents)
        start = time.monotonic()
        try:
            asyncio.run(episode.aplay())
            outcome["status"], outcome["error"] = "done", None
        except Exception as error:  # noqa: BLE001 - the seat's failure, as the session records it
            outcome["status"], outcome["error"] = "failed", str(error)
        outcome["wall"] = time.monotonic() - start

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "the game was held by its hanging bot"
    return outcome["status"], outcome["error"], outcome["wall"]


def test_a_hanging_bot_off_the_main_thread_fails_the_game_at_its_decision_timeout():
    bot = Dies("hang", at=[agent_seed(SEED, "matcher")])
    status, error, wall = play_in_a_thread(bot, 0.5)
    assert status == "failed"
    assert "seat matcher" in error and "no decision within 0.5 s (decision_timeout)" in error
    assert wall < 10


def test_a_persons_seat_is_not_bounded_by_the_decision_timeout():
    status, error, _ = play_in_a_thread(SlowPerson(), 0.2)
    assert (status, error) == ("done", None)


def test_games_with_people_bound_their_bots_unless_the_file_says_otherwise():
    experiment = human_experiment("donation", ["agent_0"])
    spec = experiment.specs()[0]
    assert spec.decision_timeout == BOT_DECISION_TIMEOUT == 300.0
    again = human_experiment("donation", ["agent_0"], overrides=["decision_timeout=5"])
    assert again.specs()[0].decision_timeout == 5.0
