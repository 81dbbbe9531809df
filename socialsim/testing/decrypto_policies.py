"""Scripted Decrypto players for the test chat server (:mod:`socialsim.testing.llm_server`):
each reads the prompts the LLM agents send, as a model would, and replies with a legal move.

:class:`DecryptoPolicy` is a ``policy(messages, request) -> reply text``:

* **encoder** — reads the keywords and the code from its turn prompt and hints each keyword by
  a word of the env's RL hint vocabulary chosen from the keyword's CRC-32: the same hint for a
  keyword every turn (``link=True``), or a new one each time the keyword is hinted
  (``link=False``; the uses are counted in the prompt's hint history). The words are chosen
  keyword by keyword, skipping a word another keyword took and one that holds a keyword, so
  its hints keep the board game's hint rules too (:func:`hint_table`);
* **decoder** — inverts that mapping with the keywords it is shown, so it never miscommunicates
  (unless two keywords share a hint, which none of the seeds the tests use does);
* **interceptor** — links each hint to a keyword number whose hint history holds the same hint,
  and fills the rest with the first code (in ``CODES`` order) that agrees, is not in the code
  history and repeats no digit. With ``link=True`` it intercepts once the code's numbers have
  all been hinted before.
* side questions — ``predict_interceptor_guess``: the true code (an interception, as models
  mostly predict); keyword questions: ``"unknown"`` four times, or the revealed keywords for the
  two questions that reveal them when ``recall_revealed=True``.

Misbehaviour on request: ``decoder_hints_first=True`` makes the decoder answer with hints to
every turn prompt, and properly after the game master's correction.

A chat is read as the agents send it (:func:`socialsim.agents.llm.base.conversation`): the
system text may head the first user message, and a turn that ended with the fallback leaves
its prompt and the game master's note in the user turn of the next prompt, so the policy reads
the text after the last note. A request that asks for structured output (in any form) gets the
JSON alone.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from typing import Any

from socialsim.envs.decrypto.core import validate_hints
from socialsim.envs.decrypto.protocol import BOARD_GAME_HINTS, CODES, render_code
from socialsim.envs.decrypto.words import hint_vocabulary
from socialsim.testing.chat_requests import request_format

GAME_MASTER = "[GAME MASTER]"
#: the game master's note after a fallback (what the agents' base class writes)
FALLBACK_NOTE = f"{GAME_MASTER} No valid answer; the game used a fallback."
WORDS = hint_vocabulary()

_TURN = re.compile(r"Turn (\d+): you are the (Encoder|Decoder|Interceptor)\.")
_KEYWORDS = re.compile(r"^Keywords: \{(.*)\}$", re.M)
_CODE = re.compile(r"Your code is ([1-4]-[1-4]-[1-4])")
_HINTS = re.compile(r"^Hints: \{(.*)\}$", re.M)
_HISTORY_LINE = re.compile(r"^    Keyword ([1-4]):(.*)$", re.M)
_CODE_HISTORY = re.compile(r"^Code history: (.*)$", re.M)
_QUESTION_HINTS = re.compile(r"you gave the hints \{(.*)\} for the code ([1-4]-[1-4]-[1-4])")
_REVEALED = re.compile(r"revealed to you: \{(.*)\}\.")


def hint_for(keyword: str, use: int = 0) -> str:
    """The scripted encoder's first choice of hint for ``keyword`` the ``use``-th time it is
    hinted (0-based)."""
    return WORDS[(zlib.crc32(keyword.encode()) + 7 * use) % len(WORDS)]


def hint_table(keywords: Sequence[str], uses: Sequence[int]) -> list[str]:
    """The hint of each keyword (``uses[i]``: how often keyword ``i + 1`` was hinted), keyword
    1 first: its first choice, or the next word of the vocabulary, until one that no earlier
    keyword took and that keeps the board game's rules for these keywords."""
    table: list[str] = []
    for keyword, use in zip(keywords, uses, strict=True):
        start = (zlib.crc32(keyword.encode()) + 7 * use) % len(WORDS)
        for step in range(len(WORDS)):
            word = WORDS[(start + step) % len(WORDS)]
            probe = [word, "no_hint", "no_hint"]
            if word not in table and not validate_hints(
                probe, keywords, hint_rules=BOARD_GAME_HINTS
            ):
                break
        table.append(word)
    return table


def _pairs(text: str) -> list[str]:
    """``"1: a, 2: b"`` or ``"a: x, b: y"`` -> the values in order."""
    return [part.split(": ", 1)[1] for part in text.split(", ")]


def _history(text: str) -> list[list[str]]:
    lines = {int(d): rest.strip() for d, rest in _HISTORY_LINE.findall(text)}
    return [[h for h in lines.get(i, "").split(", ") if h] for i in range(1, 5)]


def _code_history(text: str) -> list[tuple[int, ...]]:
    match = _CODE_HISTORY.search(text)
    if match is None or match.group(1) == "none":
        return []
    return [tuple(int(d) for d in code.split("-")) for code in match.group(1).split(", ")]


def answer(payload: dict[str, Any], reasoning: str, request: dict[str, Any]) -> str:
    """The reply text: JSON alone when the request asks for structured output."""
    if request_format(request) is not None:
        return json.dumps({"reasoning": reasoning, **payload})
    return f"{reasoning}\nANSWER: {json.dumps(payload)}"


def latest(text: str) -> str:
    """A user turn's text after the last fallback note (the prompt being answered)."""
    return text.rsplit(FALLBACK_NOTE, 1)[-1]


class DecryptoPolicy:
    """A legal scripted player for all three seats (see the module docstring)."""

    def __init__(
        self, link: bool = True, decoder_hints_first: bool = False, recall_revealed: bool = False
    ) -> None:
        self.link = link
        self.decoder_hints_first = decoder_hints_first
        self.recall_revealed = recall_revealed

    def __call__(self, messages: list[dict[str, Any]], request: dict[str, Any]) -> str:
        users = [latest(m["content"]).strip() for m in messages if m["role"] == "user"]
        last = users[-1]
        corrected = last.startswith(GAME_MASTER)
        prompt = next(u for u in reversed(users) if not u.startswith(GAME_MASTER))
        if prompt.startswith("Side question"):
            return self.side_question(prompt, users, request)
        match = _TURN.search(prompt)
        if match is None:
            return "I do not know which seat I am in."
        role = match.group(2).lower()
        if role == "encoder":
            return self.encode(prompt, request)
        if role == "decoder":
            if self.decoder_hints_first and not corrected:
                return answer({"hints": ["one", "two", "three"]}, "Hints, I think.", request)
            return self.decode(prompt, request)
        return self.intercept(prompt, request)

    def _table(self, prompt: str, keywords: Sequence[str]) -> list[str]:
        history = _history(prompt)
        uses = [0 if self.link else len(history[d]) for d in range(4)]
        return hint_table(keywords, uses)

    def encode(self, prompt: str, request: dict[str, Any]) -> str:
        keywords = _pairs(_KEYWORDS.search(prompt).group(1))
        code = [int(d) for d in _CODE.search(prompt).group(1).split("-")]
        table = self._table(prompt, keywords)
        hints = [table[d - 1] for d in code]
        return answer({"hints": hints}, "One fixed word per keyword.", request)

    def decode(self, prompt: str, request: dict[str, Any]) -> str:
        keywords = _pairs(_KEYWORDS.search(prompt).group(1))
        hints = _pairs(_HINTS.search(prompt).group(1))
        table = self._table(prompt, keywords)
        guess: list[int | None] = []
        for hint in hints:
            digit = next((d for d in range(1, 5) if d not in guess and hint == table[d - 1]), None)
            guess.append(digit)
        code = self._complete(guess, [])
        return answer({"guess": render_code(code)}, "Each hint is its keyword's word.", request)

    def intercept(self, prompt: str, request: dict[str, Any]) -> str:
        hints = _pairs(_HINTS.search(prompt).group(1))
        history = _history(prompt)
        linked: list[int | None] = []
        for hint in hints:
            digit = next(
                (d for d in range(1, 5) if d not in linked and hint in history[d - 1]), None
            )
            linked.append(digit)
        code = self._complete(linked, _code_history(prompt))
        return answer({"guess": render_code(code)}, "Matched against the history.", request)

    @staticmethod
    def _complete(known: Sequence[int | None], played: Sequence[Sequence[int]]) -> tuple:
        """The first code agreeing with ``known`` (None = any) that was not played yet."""
        fits = [
            c for c in CODES if all(k is None or c[i] == k for i, k in enumerate(known))
        ] or list(CODES)
        fresh = [c for c in fits if c not in {tuple(p) for p in played}]
        return (fresh or fits)[0]

    def side_question(self, prompt: str, users: Sequence[str], request: dict[str, Any]) -> str:
        match = _QUESTION_HINTS.search(prompt)
        if match is not None:
            return answer({"guess": match.group(2)}, "It will read my hints right.", request)
        revealed = _REVEALED.search(prompt)
        if revealed is not None and self.recall_revealed:
            words = _pairs(revealed.group(1))
        else:
            words = ["unknown"] * 4
        return answer({"keywords": words}, "From the history.", request)
