"""Examples that cannot be copied into a score: no prompt file and no rendered prompt shows a
legal Decrypto code that the game did not put there, no example shows a keyword or a plausible
hint, and the instruction on how to answer matches the answer format in force."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from socialsim.agents.llm.base import is_placeholder
from socialsim.agents.llm.decrypto import STYLES
from socialsim.agents.llm.decrypto_answers import shown_placeholders
from socialsim.envs.decrypto.protocol import CODES, SEATS

from socialsim.runner import EpisodeSpec, play_episode
from socialsim.testing.decrypto_policies import DecryptoPolicy
from socialsim.testing.llm_server import ScriptedChatServer

PROMPTS = Path(__file__).resolve().parents[1] / "agents" / "llm" / "prompts"
#: a code written as X-Y-Z or as a list of three digits, its digits 1-4 (checked distinct below)
CODE_TEXT = re.compile(r"(?<![\d.])([1-4])\s*-\s*([1-4])\s*-\s*([1-4])(?![\d-])")
CODE_LIST = re.compile(r"\[\s*([1-4])\s*,\s*([1-4])\s*,\s*([1-4])\s*\]")
#: an example keyword map {1: w, 2: w, ...}, a hints list, a guess
KEYWORD_MAP = re.compile(r"\{1: ([^,}]+), 2: ([^,}]+), 3: ([^,}]+), 4: ([^,}]+)\}")
HINT_LIST = re.compile(r'"hints": \[([^\]]*)\]')
GUESS = re.compile(r'"guess": "([^"]*)"')


def legal_codes(text: str) -> set[tuple[int, int, int]]:
    found = {
        tuple(int(d) for d in match.groups())
        for pattern in (CODE_TEXT, CODE_LIST)
        for match in pattern.finditer(text)
    }
    return {code for code in found if code in CODES}


def prompt_files() -> list[Path]:
    return sorted(PROMPTS.rglob("*.txt"))


def test_the_scan_finds_codes_in_both_forms():
    assert legal_codes('ANSWER: {"guess": "3-1-4"} or [2, 4, 1], not 1-1-2 or 5-1-2') == {
        (3, 1, 4),
        (2, 4, 1),
    }


@pytest.mark.parametrize("path", prompt_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_prompt_file_shows_a_legal_code_a_keyword_or_a_hint(path):
    text = path.read_text(encoding="utf-8")
    assert legal_codes(text) == set()
    placeholders = shown_placeholders()
    for example in KEYWORD_MAP.finditer(text):
        assert all(is_placeholder(word, placeholders) for word in example.groups()), example[0]
    for example in HINT_LIST.finditer(text):
        hints = re.findall(r'"([^"]*)"', example.group(1))
        assert hints and all(is_placeholder(h, placeholders) for h in hints), example[0]
    for example in GUESS.finditer(text):
        assert example.group(1) == "X-Y-Z"


def test_there_are_prompt_files_of_every_family():
    names = {p.parent.name for p in prompt_files()}
    assert names == {"culture", "decrypto", "gossip"} and len(prompt_files()) == 60


def game_codes(summary: dict) -> set[tuple[int, int, int]]:
    """Every code the game itself dealt or that a guesser guessed."""
    codes = set()
    for turn in summary["turn_log"]:
        for key in ("code", "decoder_guess", "interceptor_guess"):
            if turn[key] is not None:
                codes.add(tuple(turn[key]))
    return codes


@pytest.mark.parametrize(("style", "structured"), list(itertools.product(STYLES, (False, True))))
def test_every_rendered_prompt_shows_only_the_games_own_codes(style, structured, fresh_models):
    """Every seat, every side question, seeds 0-2, both hint rules: a system message holds no
    code at all; a user message only codes this game dealt or guessed (its history)."""
    sent = 0
    for seed, hint_rules in zip(range(3), ("reference", "board_game", "reference"), strict=True):
        with ScriptedChatServer(DecryptoPolicy(link=seed != 1), alternating_roles=True) as server:
            seat = {
                "kind": "llm_decrypto",
                "prompt_style": style,
                "structured_output": structured,
                "model": {"model": "openai/test", "api_base": server.url, "cache": False},
            }
            spec = EpisodeSpec(
                env_id="decrypto_v0",
                seed=seed,
                seats={s: seat for s in SEATS},
                probes=({"name": "piaget"}, {"name": "gopnik"}),
                env_kwargs={"hint_rules": hint_rules},
            )
            record = play_episode(spec)
            assert record.status == "done", record.error
            allowed = game_codes(record.summary)
            for request in server.answered:
                for message in request["messages"]:
                    if message["role"] == "assistant":
                        continue
                    text = message["content"]
                    if message["role"] == "system":
                        assert legal_codes(text) == set(), text[:200]
                    else:
                        assert legal_codes(text) <= allowed, (seed, text[:300])
                    # the instruction matches the format: ANSWER: only where replies are free
                    assert ("ANSWER:" in text) == (not structured), text[-300:]
                    sent += 1
    assert sent > 100


def test_a_correction_asks_for_the_json_alone_under_constrained_output(fresh_models):
    with ScriptedChatServer(DecryptoPolicy(), schedule=["garbage"]) as server:
        seat = {
            "kind": "llm_decrypto",
            "structured_output": True,
            "model": {"model": "openai/test", "api_base": server.url, "cache": False},
        }
        record = play_episode(
            EpisodeSpec(env_id="decrypto_v0", seed=0, seats={s: seat for s in SEATS})
        )
        assert record.status == "done", record.error
        correction = server.answered[1]["messages"][-1]["content"]
    assert correction.startswith("[GAME MASTER] Error: ")
    assert "ANSWER:" not in correction
    assert '{"reasoning": "<your reasoning, in a sentence or two>", "hints": [' in correction
