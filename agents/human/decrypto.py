"""What a person in a Decrypto seat sees and answers, from the seat's inbox and info only.

The view is plain JSON (the browser gets it as is): the seat, the turn and the tokens, the
keywords for the encoder and the decoder, the code for the encoder while it hints, this turn's
hints for the guessers, the hint history by keyword, the code history and last turn's reveal.
The requests check an answer with the game's own rules: three hints under the ``rules``
message's limits and never a keyword (:func:`~socialsim.envs.decrypto.core.validate_hints`), a
guess that :func:`~socialsim.envs.decrypto.protocol.parse_code` accepts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.agents.human.request import Field, Request
from socialsim.agents.human.text import RULE, clean
from socialsim.envs.decrypto.core import validate_hints
from socialsim.envs.decrypto.protocol import (
    DECISION_OF,
    GAME,
    HINTS,
    TEAMS,
    TOKENS_TO_LOSE,
    Rules,
    parse_code,
    render_code,
)

from socialsim.bus import Message

__all__ = [
    "BOARD",
    "ENVS",
    "FIRST_WAIT",
    "GAME",
    "KEYWORD_SEATS",
    "OTHERS",
    "awaiting",
    "ending",
    "ending_text",
    "offered_seat",
    "request",
    "rules_text",
    "text",
    "view",
    "waiting_for",
]

TITLES = {"encoder": "Encoder", "decoder": "Decoder", "interceptor": "Interceptor"}
#: the game as the front ends name it -> the env they play (``socialsim play decrypto``)
ENVS: Mapping[str, str] = {GAME: "decrypto_v0"}
#: the other seats when the front end is told none
OTHERS: Mapping[str, Mapping[str, str]] = {
    "encoder": {"kind": "glove_encoder"},
    "decoder": {"kind": "glove_decoder"},
    "interceptor": {"kind": "glove_interceptor"},
}
#: its seat page's script, ``boards/decrypto.js`` (see :func:`.agent.board_scripts`)
BOARD = "decrypto"
#: what every seat waits for before the game's first decision
FIRST_WAIT = "the encoder's first hints"
#: the seats that see the keywords (the front ends hand them to these seats only)
KEYWORD_SEATS: tuple[str, ...] = TEAMS["encoders"]


def rules_text(seat: str, rules: Rules) -> list[str]:
    """The rules, told once, in the words of this seat."""
    lines = [
        "Decrypto: three players, two teams. The encoder and the decoder share four secret "
        "keywords, numbered 1 to 4; the interceptor never sees them.",
        "Each turn the encoder gets a code, three different digits from 1 to 4 such as 3-1-4, "
        "and gives three hints, one per digit, in code order. The decoder and the interceptor "
        "each guess the code.",
        f"A wrong decoder guess is a miscommunication; a right interceptor guess is an "
        f"interception. {TOKENS_TO_LOSE} of either and the interceptor wins; the team wins by "
        f"lasting {rules.max_turns} turns.",
        f"A hint has at most {rules.max_hint_words} words and {rules.max_hint_chars} characters "
        "and is never a keyword. The hint history shows every past hint under its keyword's digit.",
    ]
    if not rules.first_round_interception:
        lines.append("On turn 1 the interceptor makes no guess.")
    yours = {
        "encoder": "You are the encoder: make your hints clear to the decoder and opaque to the "
        "interceptor.",
        "decoder": "You are the decoder: you know the keywords; read the encoder's hints.",
        "interceptor": "You are the interceptor: you do not know the keywords; crack the code "
        "from the hint history.",
    }
    return [*lines, yours[seat]]


def _rules(messages: Sequence[Message]) -> Rules:
    rules = Rules.from_messages(messages)
    if rules is None:
        raise ValueError("human: no 'rules' message reached this seat")
    return rules


def view(
    seat: str,
    messages: Sequence[Message],
    info: Mapping[str, Any],
    moves: Sequence[tuple[Mapping[str, Any], Any]] = (),
) -> dict[str, Any]:
    """What ``seat`` may see now: read from its ``info`` and inbox, nothing else (``moves``, its
    own earlier answers, tell a Decrypto seat nothing its inbox does not)."""
    rules = _rules(messages)
    team = next(name for name, seats in TEAMS.items() if seat in seats)
    out: dict[str, Any] = {
        "game": GAME,
        "seat": seat,
        "title": TITLES[seat],
        "team": team,
        "rules": rules_text(seat, rules),
        "decision": info.get("decision"),
        "turn": int(info["turn"]),
        "max_turns": rules.max_turns,
        "tokens_to_lose": TOKENS_TO_LOSE,
        "miscommunications": int(info["miscommunications"]),
        "interceptions": int(info["interceptions"]),
        "hint_history": [list(h) for h in info.get("hint_history", [[], [], [], []])],
        "code_history": [render_code(c) for c in info.get("code_history", [])],
        "last_turn": _turn_json(info.get("last_turn")),
    }
    if "keywords" in info:
        out["keywords"] = list(info["keywords"])
    if "code" in info:
        out["code"] = render_code(info["code"])
    if "hints" in info:
        out["hints"] = list(info["hints"])
    return out


def _turn_json(turn: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not turn:
        return None
    guess = turn.get("interceptor_guess")
    return {
        "turn": turn["turn"],
        "code": render_code(turn["code"]),
        "hints": list(turn["hints"]),
        "decoder_guess": render_code(turn["decoder_guess"]),
        "interceptor_guess": None if guess is None else render_code(guess),
        "miscommunication": bool(turn["miscommunication"]),
        "interception": bool(turn["interception"]),
    }


_DIGITS = re.compile(r"^\s*([1-4])\s*[-,/ ]?\s*([1-4])\s*[-,/ ]?\s*([1-4])\s*$")


def read_code(text: str) -> str:
    """A code typed as ``3-1-4``, ``3 1 4`` or ``314``, as ``"3-1-4"`` (``ValueError`` with
    what a code is)."""
    match = _DIGITS.match(text)
    if match is None:
        raise ValueError(
            f"{text.strip()!r} is not a code: type three different digits from 1 to 4, like 3-1-4"
        )
    digits = [int(d) for d in match.groups()]
    try:
        parse_code(digits)
    except ValueError:
        raise ValueError(
            f"{text.strip()!r} repeats a digit: the three digits of a code are all different, "
            "like 3-1-4"
        ) from None
    return render_code(digits)


def _hint_check(keywords: Sequence[str], rules: Rules):
    def check(text: str) -> str:
        hint = text.strip()
        # the game's rule for three hints, asked of this one in every position
        reasons = validate_hints([hint] * 3, keywords, rules.max_hint_words, rules.max_hint_chars)
        mine = [r for r in reasons if r.startswith("hint 1 ")]
        if mine:
            raise ValueError(mine[0].replace("hint 1 ", "this hint ", 1))
        return hint

    return check


def request(seat: str, messages: Sequence[Message], info: Mapping[str, Any]) -> Request:
    """The decision due, as fields the person fills in."""
    rules = _rules(messages)
    if info.get("decision") == HINTS:
        keywords = list(info["keywords"])
        code = [int(d) for d in info["code"]]
        check = _hint_check(keywords, rules)
        fields = tuple(
            Field(
                name=f"hint_{i}",
                label=f"Hint {i} for digit {digit} ({keywords[digit - 1]})",
                check=check,
                placeholder=f"a clue to '{keywords[digit - 1]}'",
            )
            for i, digit in enumerate(code, 1)
        )
        return Request(
            decision=HINTS,
            title=f"Your code is {render_code(code)}: give three hints, in code order",
            fields=fields,
            build=lambda v: {"hints": [v["hint_1"], v["hint_2"], v["hint_3"]]},
            help=f"One hint per digit, at most {rules.max_hint_words} words each, never a keyword.",
        )
    return Request(
        decision=info.get("decision") or "guess",
        title="Guess the code: which keyword does each hint point to?",
        fields=(
            Field(
                name="code",
                label="Your guess (like 3-1-4)",
                check=read_code,
                placeholder="3-1-4",
            ),
        ),
        build=lambda v: {"guess": v["code"]},
        help="Three different digits from 1 to 4, in the order of the hints.",
    )


def ending(record: Mapping[str, Any], seat: str) -> dict[str, Any]:
    """What every seat is told when the game is over (from the episode record): the ending,
    the last reveal and, now that it is over, the keywords."""
    summary = record.get("summary") or {}
    turn_log = summary.get("turn_log") or []
    ending_name = summary.get("ending")
    won = (record.get("returns") or {}).get(seat, 0.0) > 0
    says = {
        "intercept": "The interceptor intercepted two codes.",
        "miscomm": "The team miscommunicated twice.",
        "both": "Two interceptions and two miscommunications on the same turn.",
        "survived": f"The team lasted all {summary.get('turns')} turns.",
    }
    return {
        "game": GAME,
        "seat": seat,
        "over": True,
        "status": record.get("status"),
        "ending": ending_name,
        "outcome": says.get(ending_name, "The game did not finish."),
        "won": won,
        "turns": summary.get("turns"),
        "miscommunications": summary.get("miscommunications"),
        "interceptions": summary.get("interceptions"),
        "keywords": list(summary.get("keywords") or []),
        "last_turn": _turn_json(turn_log[-1]) if turn_log else None,
    }


def waiting_for(view: Mapping[str, Any]) -> str:
    """What a seat waits for after its move (``view`` is the one it answered)."""
    if view.get("decision") == HINTS:
        return "the decoder and the interceptor to guess"
    return "the encoder's next hints (after the reveal)"


def awaiting(seat: str, who: str) -> str:
    """Another seat deciding now, as a waiting seat is told: ``who`` plays it."""
    verb = "to give the hints" if DECISION_OF[seat] == HINTS else "to guess"
    return f"the {seat} ({who}) {verb}"


def text(view: Mapping[str, Any]) -> str:
    """A seat's view as text (the terminal's screen)."""
    lines = [
        RULE,
        f"Turn {view['turn']} of {view['max_turns']} - you are the {view['title']}",
        f"Tokens: miscommunications {view['miscommunications']}/{view['tokens_to_lose']}, "
        f"interceptions {view['interceptions']}/{view['tokens_to_lose']}",
    ]
    keywords = view.get("keywords")
    if keywords:
        lines.append(
            "Keywords: " + "   ".join(f"{i} {clean(k)}" for i, k in enumerate(keywords, 1))
        )
    last = view.get("last_turn")
    if last:
        lines.append(
            f"Last turn ({last['turn']}): code {last['code']}, hints "
            + ", ".join(clean(h) for h in last["hints"])
            + f"; decoder guessed {last['decoder_guess']}, interceptor guessed "
            + f"{last['interceptor_guess'] or 'nothing'}"
            + (" - a miscommunication!" if last["miscommunication"] else "")
            + (" - intercepted!" if last["interception"] else "")
        )
    lines.append("Hint history by keyword:")
    for i, hints in enumerate(view["hint_history"], 1):
        name = f" {clean(keywords[i - 1])}" if keywords else ""
        lines.append(f"  {i}{name}: " + (", ".join(clean(h) for h in hints) or "-"))
    if view.get("code_history"):
        lines.append("Codes so far: " + ", ".join(view["code_history"]))
    if view.get("code"):
        lines.append(f"Your code this turn: {view['code']}")
    if view.get("hints"):
        lines.append(
            "This turn's hints: "
            + "   ".join(f"{chr(97 + i)}) {clean(h)}" for i, h in enumerate(view["hints"]))
        )
    return "\n".join(lines)


def ending_text(ending: Mapping[str, Any]) -> str:
    """What :func:`ending` tells a seat, as text."""
    lines = [
        RULE,
        "Game over. " + ending["outcome"],
        f"Miscommunications {ending['miscommunications']}, interceptions "
        f"{ending['interceptions']}, turns {ending['turns']}.",
    ]
    if ending.get("keywords"):
        lines.append(
            "The keywords were: "
            + "   ".join(f"{i} {clean(k)}" for i, k in enumerate(ending["keywords"], 1))
        )
    lines.append(f"{ending['seat']}: " + ("you win!" if ending["won"] else "you lose."))
    return "\n".join(lines)


def offered_seat(seats: Sequence[str]) -> str:
    """The seat the host page offers a person first: the interceptor, who plays against the team."""
    return "interceptor" if "interceptor" in seats else seats[0]
