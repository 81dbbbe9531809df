"""The front ends find a game's words through its view module (``view_module``), so that the
browser and the terminal name no game: each module says which games it shows and with which
env, and how a waiting seat is told whom it waits for."""

from __future__ import annotations

import pytest
from socialsim.agents.human import culture, decrypto, gossip
from socialsim.agents.human.agent import board_scripts, view_module, view_modules

from socialsim.play import session

#: what the terminal asks of every view module
TERMINAL = ("ENVS", "OTHERS", "view", "request", "ending", "text", "ending_text")
#: and what the browser asks besides, of the modules it shows
BROWSER = ("BOARD", "FIRST_WAIT", "KEYWORD_SEATS", "waiting_for", "awaiting", "offered_seat")


def test_each_game_has_its_view_module():
    assert view_module("decrypto") is decrypto
    assert [view_module(g) for g in ("donation", "prisoners", "trust", "market")] == [gossip] * 4
    # the culture donor game's rules message names it culture_donor; people call it culture
    assert view_module("culture") is culture and view_module("culture_donor") is culture
    with pytest.raises(ValueError, match="no view for the game 'chess'"):
        view_module("chess")


def _name(module) -> str:
    return module.__name__.rsplit(".", 1)[-1]


@pytest.mark.parametrize("module", view_modules(), ids=_name)
def test_every_view_module_offers_what_the_front_ends_use(module):
    assert [name for name in TERMINAL if not hasattr(module, name)] == []
    if module in view_modules(browser=True):
        assert [name for name in BROWSER if not hasattr(module, name)] == []


def test_the_browser_shows_every_game_but_the_terminal_only_ones():
    assert [_name(m) for m in view_modules()] == ["decrypto", "gossip", "culture"]
    assert [_name(m) for m in view_modules(browser=True)] == ["decrypto", "gossip"]
    assert session.TERMINAL_GAMES == {"culture": "culture_v0"}
    assert session.DEFAULT_SEATS["culture"] == {"*": {"kind": "culture_conditional"}}
    assert session.game_of("culture_v0") == "culture"


def test_the_games_people_play_come_from_the_view_modules():
    assert session.GAME_ENVS == {
        "decrypto": "decrypto_v0",
        "donation": "donation_v0",
        "prisoners": "prisoners_v0",
        "trust": "trust_v0",
        "market": "market_v0",
    }
    assert session.DEFAULT_SEATS["decrypto"]["interceptor"] == {"kind": "glove_interceptor"}
    assert session.DEFAULT_SEATS["trust"] == {"*": {"kind": "image_scoring"}}
    assert session.game_of("market_v0") == "market"


def test_a_waiting_seat_is_told_whom_it_waits_for_in_the_games_words():
    assert decrypto.awaiting("encoder", "a person") == "the encoder (a person) to give the hints"
    assert decrypto.awaiting("interceptor", "glove") == "the interceptor (glove) to guess"
    assert decrypto.waiting_for({"decision": "hints"}) == "the decoder and the interceptor to guess"
    assert gossip.awaiting("agent_3", "a person") == "agent_3 (a person) to decide"
    assert gossip.waiting_for({}) == "the other players"
    assert decrypto.KEYWORD_SEATS == ("encoder", "decoder") and gossip.KEYWORD_SEATS == ()


def test_the_seat_pages_get_each_games_board_from_its_view_module():
    scripts = board_scripts()
    for module in view_modules(browser=True):
        assert scripts.count(f'registerBoard("{module.BOARD}", {{') == 1
    assert decrypto.offered_seat(["encoder", "decoder", "interceptor"]) == "interceptor"
    assert gossip.offered_seat(["agent_0", "agent_1", "agent_2"]) == "agent_1"
