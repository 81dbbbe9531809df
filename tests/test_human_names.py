"""A person's gossip-game view names every agent as the LLM seats name them, beside the id of
the record, and shows the stocks as they are at the decision."""

from __future__ import annotations

from socialsim.agents.human import gossip as human_gossip
from socialsim.agents.llm.gossip_prompts import SeatPrompts
from socialsim.envs.gossip.notebook import Notebook
from socialsim.envs.gossip.protocol import GAMES, GOSSIP

from socialsim import registry


def donation_after_one_gift():
    """A 4-agent donation game with gossip after round 1's donor cooperated: (env, inboxes,
    infos, donor, recipient)."""
    env = registry.make_env("donation_v0", "parallel", n_agents=4, gossip=True)
    _, infos = env.reset(seed=0)
    bus = env.unwrapped.bus
    inboxes = {a: list(bus.read(a)) for a in env.possible_agents}
    donor = next(a for a in env.agents if infos[a].get("decision") == "donate")
    recipient = infos[donor]["counterpart"]
    before = human_gossip.view(recipient, inboxes[recipient], {**infos[recipient], "round": 1})
    cooperate = GAMES["donation"].action_index("donate", "cooperate")
    _, _, _, _, infos = env.step({donor: cooperate})
    for agent in env.possible_agents:
        inboxes[agent] += bus.read(agent)
    return env, inboxes, infos, donor, recipient, before


def test_a_recipient_decides_its_gossip_with_the_donation_just_received_in_its_stock():
    _, inboxes, infos, donor, recipient, before = donation_after_one_gift()
    assert infos[recipient]["decision"] == GOSSIP
    seen = human_gossip.view(recipient, inboxes[recipient], infos[recipient])
    notebook = Notebook(recipient)
    notebook.read(inboxes[recipient])
    benefit, cost = notebook.rule("benefit"), notebook.rule("cost")
    assert benefit > 0 and cost > 0
    assert seen["resources"] == before["resources"] + benefit
    assert seen["counterpart_resources"] == before["counterpart_resources"] - cost
    assert seen["received"] == {"move": "cooperate"}


def test_the_view_names_each_agent_as_the_llm_prompts_do():
    _, inboxes, infos, donor, recipient, _ = donation_after_one_gift()
    seen = human_gossip.view(recipient, inboxes[recipient], infos[recipient])
    notebook = Notebook(recipient)
    notebook.read(inboxes[recipient])
    prompts = SeatPrompts(notebook=notebook, reasons={})
    assert seen["names"] == {f"agent_{i}": prompts.name(f"agent_{i}") for i in range(4)}
    assert seen["names"]["agent_0"] == "John"
    title = human_gossip.request(recipient, inboxes[recipient], infos[recipient]).title
    assert title.startswith(f"Gossip about {prompts.name(donor)} ({donor})")


def test_both_players_gossip_with_the_round_of_the_dilemma_counted_in_their_stocks():
    env = registry.make_env("prisoners_v0", "parallel", n_agents=4, gossip=True)
    _, infos = env.reset(seed=0)
    bus = env.unwrapped.bus
    inboxes = {a: list(bus.read(a)) for a in env.possible_agents}
    player = next(a for a in env.agents if infos[a].get("decision") == "play")
    other = infos[player]["counterpart"]
    played = dict(infos[player])
    start = human_gossip.view(player, inboxes[player], played)
    game = GAMES["prisoners"]
    _, _, _, _, infos = env.step(
        {player: game.action_index("play", "C"), other: game.action_index("play", "D")}
    )
    inboxes[player] += bus.read(player)
    assert infos[player]["decision"] == GOSSIP
    # the seat's own move is on no inbox: the person's answers tell the view
    seen = human_gossip.view(player, inboxes[player], infos[player], [(played, {"action": "C"})])
    notebook = Notebook(player)
    notebook.read(inboxes[player])
    cost, benefit = notebook.rule("cost"), notebook.rule("benefit")
    assert seen["resources"] == start["resources"] - cost  # paid for C, got nothing for D
    assert seen["counterpart_resources"] == start["counterpart_resources"] + benefit
