"""A person can take a seat of every game that ``socialsim play`` offers: each decision of each
gossip game (donate, play, invest, return, buy, sell, gossip) and of Decrypto reaches the
console as a request whose fields the game's rules check, a refused answer is asked again with
the reason, and the game is logged like any run."""

from __future__ import annotations

import asyncio

import pytest

from socialsim import records
from socialsim.play import session

#: a valid answer per field name when the field offers no choices
VALID = {"amount": "0", "message": "fine", "code": "1-2-3"}
#: an answer each field's rules refuse
INVALID = {"amount": "-1", "message": "x" * 300, "code": "1-1-1"}


class ScriptedPerson:
    """Answers every request: first with a refused value, then with a valid one."""

    def __init__(self):
        self.asked: list[str] = []
        self.refusals: list[str] = []

    async def ask(self, seat, view, request, error):
        if error is not None:
            self.refusals.append(error)
        self.asked.append(request.decision)
        values = {}
        for field in request.fields:
            if field.choices:
                values[field.name] = field.choices[0]
            else:
                values[field.name] = VALID[field.name] if error else INVALID[field.name]
        if error is None and all(f.choices for f in request.fields):
            values[request.fields[0].name] = "nonsense"  # not one of the choices
        return values


@pytest.mark.parametrize(
    ("game", "seats", "decisions"),
    [
        ("donation", ["agent_0", "agent_1"], {"donate", "gossip"}),
        ("prisoners", ["agent_0", "agent_1"], {"play", "gossip"}),
        ("trust", ["agent_0", "agent_1"], {"invest", "return", "gossip"}),
        ("market", ["agent_0", "agent_6"], {"buy", "sell", "gossip"}),  # a seller, a buyer
        ("decrypto", ["decoder", "interceptor"], {"guess"}),
    ],
)
def test_a_person_plays_every_decision_of_every_game(tmp_path, game, seats, decisions):
    overrides = [] if game == "decrypto" else ["env.kwargs.rounds=4"]
    experiment = session.human_experiment(game, seats, (), overrides, seed=0)
    out = tmp_path / game
    spec = session.prepare(experiment, out)
    people = {seat: ScriptedPerson() for seat in seats}
    record = asyncio.run(session.play_game(experiment, spec, out, people))
    assert record.status == "done", record.error
    asked = set().union(*(set(p.asked) for p in people.values()))
    assert decisions <= asked, asked
    assert all(p.refusals for p in people.values())  # every seat was asked again once refused
    (logged,) = records.read_records(out)
    assert logged.seats[seats[0]]["kind"] == "human"
    assert logged.counters[seats[0]]["invalid_inputs"] >= 1
