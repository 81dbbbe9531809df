"""The vocabulary of Decrypto, written once.

Everything that crosses a wall is here: the seats and teams, the decision of each phase, the
code table (action index <-> code <-> ``"X-Y-Z"`` text), the default hint limits and the
fallback hint, the endings, the theory-of-mind probes and their side-question kinds, the typed
bus payloads (``rules``, ``keywords``, ``code``, ``hints``, ``reveal``, ``game_over``) and the
validated options. The core, the env adapter, every agent family and the ToM analysis import
it; nothing restates it. Pure data and functions: no bus, no I/O.

| seat          | team           | decision (phase) | action                                  |
|---------------|----------------|------------------|-----------------------------------------|
| `encoder`     | `encoders`     | `hints`          | three hints, one per code digit         |
| `decoder`     | `encoders`     | `guess`          | a code (index into :data:`CODES`)       |
| `interceptor` | `interceptors` | `guess`          | a code (none on turn 1 under the board game's first-round rule) |
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

GAME = "decrypto"

# -- seats, teams, decisions ----------------------------------------------------------------------

SEATS: tuple[str, ...] = ("encoder", "decoder", "interceptor")
#: bus team name -> its seats (the keywords go to ``team:encoders``)
TEAMS: Mapping[str, tuple[str, ...]] = {
    "encoders": ("encoder", "decoder"),
    "interceptors": ("interceptor",),
}
GUESSERS: tuple[str, ...] = ("decoder", "interceptor")
HINTS = "hints"
GUESS = "guess"
#: the phases of a turn, in order: the encoder hints, then both guessers guess
PHASES: tuple[str, ...] = (HINTS, GUESS)
#: the decision each seat makes, in the phase of that name
DECISION_OF: Mapping[str, str] = {"encoder": HINTS, "decoder": GUESS, "interceptor": GUESS}

# -- codes ----------------------------------------------------------------------------------------

#: action index ``i`` of a guess means ``CODES[i]``: 0 is 1-2-3, 23 is 4-3-2
CODES: list[tuple[int, int, int]] = list(itertools.permutations((1, 2, 3, 4), 3))
CODE_INDEX: dict[tuple[int, int, int], int] = {code: i for i, code in enumerate(CODES)}
_CODE_OF = {code: code for code in CODES}  # each code by value, to tell CODES' own tuples

_CODE_TEXT = re.compile(r"^\s*([1-4])\s*-\s*([1-4])\s*-\s*([1-4])\s*$")


def render_code(code: Sequence[int] | None) -> str:
    """``(3, 1, 4)`` -> ``"3-1-4"``; ``None`` -> ``"none"``."""
    return "none" if code is None else "-".join(str(int(d)) for d in code)


def _is_int(value: Any) -> bool:
    return type(value) is int or (
        isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    )


def parse_code(value: Any) -> tuple[int, int, int]:
    """A code from an action index (0-23), a sequence of three digits or a ``"X-Y-Z"`` string.

    Raises ``ValueError`` for anything else, including repeated digits and digits outside 1-4.
    """
    if type(value) is tuple and _CODE_OF.get(value) is value:
        return value  # one of CODES itself (a tuple equal to one, of bools say, is checked below)
    allowed = "an index 0-23, three distinct digits 1-4 such as [3, 1, 4], or a string '3-1-4'"
    if _is_int(value):
        if 0 <= int(value) < len(CODES):
            return CODES[int(value)]
        raise ValueError(f"guess: index {value!r} is out of range; expected {allowed}")
    if isinstance(value, str):
        match = _CODE_TEXT.match(value)
        if match is None:
            raise ValueError(f"guess: {value!r} is not a code; expected {allowed}")
        digits = tuple(int(d) for d in match.groups())
    elif isinstance(value, (list, tuple, np.ndarray)) and len(value) == 3:
        if not all(_is_int(d) for d in value):
            raise ValueError(f"guess: {value!r} is not a code; expected {allowed}")
        digits = tuple(int(d) for d in value)
    else:
        raise ValueError(f"guess: {value!r} is not a code; expected {allowed}")
    if digits not in CODE_INDEX:
        raise ValueError(
            f"guess: {value!r} is not a code (digits must be distinct, each 1-4); expected {allowed}"
        )
    return digits  # type: ignore[return-value]


# -- limits, fallbacks, endings -------------------------------------------------------------------

TOKENS_TO_LOSE = 2
MAX_TURNS = 8
MAX_HINT_WORDS = 2
MAX_HINT_CHARS = 32
#: what a rule-breaking hint becomes before anyone sees it
FALLBACK_HINT = "no_hint"
#: the hint rules (the ``hint_rules`` option): the reference's, where a hint may not be a
#: keyword, and the board game's, where it may not contain one as a word (plurals too) nor
#: repeat another hint of the same turn
REFERENCE_HINTS = "reference"
BOARD_GAME_HINTS = "board_game"
HINT_RULES: tuple[str, ...] = (REFERENCE_HINTS, BOARD_GAME_HINTS)
#: how a game ends; the first three are the interceptor's wins
ENDINGS: tuple[str, ...] = ("intercept", "miscomm", "both", "survived")

#: Cyrillic and Greek letters that look like Latin ones (capitals and small letters apart, as
#: they look), so that a hint cannot spell a keyword with them; our own short table, the
#: letters that pass for Latin in common fonts
LOOK_ALIKES: Mapping[int, str] = str.maketrans(
    "АВЕКМНОРСТХУЅІЈԚԜҮҺаеорсухѕіјԁԛԝһӏүкΑΒΕΖΗΙΚΜΝΟΡΤΥΧαορικνυχϲϳı",
    "ABEKMHOPCTXYSIJQWYHaeopcyxsijdqwhlykABEZHIKMNOPTYXaopikvuxcji",
)
#: characters that show nothing beside the format characters (Unicode category Cf: zero-width
#: space and joiners, the soft hyphen, the word joiner): variation selectors, the combining
#: grapheme joiner, the Hangul fillers
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u3164\uffa0\u180b-\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]"
)


def fold(text: str) -> str:
    """A hint or a keyword as the hint rules compare them: NFKC (fullwidth, mathematical and
    other compatibility letters to their plain forms), characters that show nothing removed,
    Cyrillic and Greek look-alikes to their Latin letters (:data:`LOOK_ALIKES`), case-folded,
    stripped. ``"ｓｗｏｒｄ"``, ``"sw\u00adord"`` and ``"ѕwоrd"`` (Cyrillic ѕ and о) fold to
    ``"sword"``; a plain word folds to itself case-folded."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = _INVISIBLE.sub("", text).translate(LOOK_ALIKES).casefold()
    return unicodedata.normalize("NFKC", text).strip()


# -- theory-of-mind probes ------------------------------------------------------------------------

PIAGET = "piaget"
GOPNIK = "gopnik"
#: the Piaget probe's question to the encoder
PREDICT_INTERCEPTOR_GUESS = "predict_interceptor_guess"
#: the Gopnik probe's three questions to the interceptor, in the order they are recorded
KEYWORD_QUESTIONS: tuple[str, ...] = (
    "keywords_now",
    "keywords_before_reveal",
    "keywords_other_interceptor",
)
#: the Gopnik probe's fourth question (not the paper's): what a second interceptor who was told
#: the keywords of two numbers (``told``, drawn per turn) will think the four keywords are
KEYWORDS_TOLD_INTERCEPTOR = "keywords_told_interceptor"
#: the side questions each seat is asked
SIDE_QUESTIONS: Mapping[str, tuple[str, ...]] = {
    "encoder": (PREDICT_INTERCEPTOR_GUESS,),
    "decoder": (),
    "interceptor": (*KEYWORD_QUESTIONS, KEYWORDS_TOLD_INTERCEPTOR),
}
#: an answer word for a keyword the interceptor cannot guess (ignored by the Gopnik scoring)
UNKNOWN = "unknown"
#: the constant answers of the ToM tricks: four lists of four words that are no keyword of the
#: bundled list, one per keyword question
CONSTANT_KEYWORD_LISTS: tuple[tuple[str, str, str, str], ...] = (
    ("alpha", "bravo", "charlie", "delta"),
    ("kilo", "lima", "mike", "november"),
    ("papa", "quebec", "romeo", "sierra"),
    ("uniform", "victor", "whiskey", "xray"),
)


# -- options --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """The settings of a game, checked on construction (``ValueError`` naming the field)."""

    max_turns: int = MAX_TURNS
    first_round_interception: bool = True
    max_hint_words: int = MAX_HINT_WORDS
    max_hint_chars: int = MAX_HINT_CHARS
    hint_rules: str = REFERENCE_HINTS

    def __post_init__(self) -> None:
        turns = self.max_turns
        if not _is_int(turns) or not 1 <= turns <= len(CODES):
            raise ValueError(f"max_turns: must be an integer from 1 to {len(CODES)}, got {turns!r}")
        if not isinstance(self.first_round_interception, bool):
            raise ValueError(
                "first_round_interception: must be true or false, got "
                f"{self.first_round_interception!r}"
            )
        for name in ("max_hint_words", "max_hint_chars"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise ValueError(f"{name}: must be an integer >= 1, got {value!r}")
        if self.hint_rules not in HINT_RULES:
            raise ValueError(
                f"hint_rules: must be one of {', '.join(HINT_RULES)}, got {self.hint_rules!r}"
            )


# -- a game given, not drawn (replays of recorded games) ------------------------------------------


def given_keywords(value: Any, field: str = "keywords") -> tuple[str, str, str, str]:
    """The team's four keywords, digit 1 first, checked: four distinct non-empty strings
    (distinct ignoring case), each stripped. ``ValueError`` naming ``field`` otherwise."""
    expected = "a list of 4 distinct non-empty strings, the keyword of digit 1 first"
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 4:
        raise ValueError(f"{field}: expected {expected}, got {value!r}")
    if not all(isinstance(k, str) and k.strip() for k in value):
        raise ValueError(f"{field}: expected {expected}, got {value!r}")
    words = tuple(k.strip() for k in value)
    if len({k.casefold() for k in words}) != 4:
        raise ValueError(f"{field}: {list(words)!r} repeats a keyword; expected {expected}")
    return words  # type: ignore[return-value]


def given_codes(
    value: Any, max_turns: int, field: str = "codes"
) -> tuple[tuple[int, int, int], ...]:
    """The code of each turn, turn 1 first, checked: at least ``max_turns`` codes, each a
    ``"X-Y-Z"`` string or three distinct digits 1-4 (never an action index, so ``314`` is not
    mistaken for one), none repeated. ``ValueError`` naming ``field`` (and the turn) otherwise."""
    allowed = "a code such as '3-1-4' or [3, 1, 4], distinct digits 1-4"
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(
            f"{field}: expected a list of codes, one per turn ({allowed}), got {value!r}"
        )
    codes: list[tuple[int, int, int]] = []
    for turn, code in enumerate(value, 1):
        if _is_int(code):
            raise ValueError(
                f"{field}: turn {turn}'s code {code!r} is a number; expected {allowed}"
            )
        try:
            parsed = parse_code(code)
        except ValueError:
            raise ValueError(f"{field}: turn {turn}'s code {code!r} is not {allowed}") from None
        if parsed in codes:
            raise ValueError(
                f"{field}: {render_code(parsed)} is given for turns {codes.index(parsed) + 1} and "
                f"{turn}; codes never repeat within a game"
            )
        codes.append(parsed)
    if len(codes) < max_turns:
        raise ValueError(
            f"{field}: {len(codes)} codes given for max_turns {max_turns}; give one code for each "
            "turn the game may last (or lower max_turns)"
        )
    return tuple(codes)


# -- bus payloads ---------------------------------------------------------------------------------


class Payload:
    """A typed bus payload: ``to_payload()`` gives the JSON dict the env publishes (fields in
    declaration order), ``from_payload(mapping)`` reads one back (``ValueError`` naming a
    missing field) with lists for arrays. The env builds the payloads after ``rules`` of JSON
    scalars and tuples, so that a read-only view of ``to_payload()`` is a frozen message; each
    is made for one message, which keeps that view, so they are plain dataclasses, cheap to
    build (the rules, built once, stay frozen)."""

    kind: str = ""

    def to_payload(self) -> dict[str, Any]:
        """The fields as a new dict; list and dict values are the payload's own (the bus
        publishes a frozen copy)."""
        # a frozen dataclass's __init__ sets exactly its fields, in declaration order
        return dict(vars(self))

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]):
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        missing = [name for name in names if name not in payload]
        if missing:
            raise ValueError(f"{cls.kind} message: the payload lacks {', '.join(missing)}")
        return cls(**{name: _thaw(payload[name]) for name in names})


def _thaw(value: Any) -> Any:
    """Bus payloads are frozen (tuples, mapping proxies); agents get plain lists and dicts."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Rules(Payload):
    """``rules``: public, to everyone, the first message of an episode (turn 1): the settings in
    force and who sits where. Nothing secret (no keyword, no code)."""

    kind = "rules"
    game: str
    max_turns: int
    first_round_interception: bool
    max_hint_words: int
    max_hint_chars: int
    seats: list[str]
    teams: dict[str, list[str]]
    #: stated only when not the reference's, so the reference's messages stay as they were
    hint_rules: str = REFERENCE_HINTS

    @classmethod
    def of(cls, options: Options) -> Rules:
        return cls(
            game=GAME,
            max_turns=options.max_turns,
            first_round_interception=options.first_round_interception,
            max_hint_words=options.max_hint_words,
            max_hint_chars=options.max_hint_chars,
            seats=list(SEATS),
            teams={name: list(seats) for name, seats in TEAMS.items()},
            hint_rules=options.hint_rules,
        )

    def to_payload(self) -> dict[str, Any]:
        payload = super().to_payload()
        if self.hint_rules == REFERENCE_HINTS:
            del payload["hint_rules"]
        return payload

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> Rules:
        if "hint_rules" in payload:
            return super().from_payload(payload)
        return super().from_payload({**payload, "hint_rules": REFERENCE_HINTS})

    @property
    def options(self) -> Options:
        """The game's checked options (``ValueError`` if the message states impossible ones)."""
        return Options(
            self.max_turns,
            self.first_round_interception,
            self.max_hint_words,
            self.max_hint_chars,
            self.hint_rules,
        )

    @classmethod
    def from_messages(cls, messages: Sequence[Any]) -> Rules | None:
        """The rules of the first ``rules`` message among bus ``messages``, or ``None``."""
        for message in messages:
            if message.kind == cls.kind:
                return cls.from_payload(message.payload)
        return None


@dataclass
class Keywords(Payload):
    """``keywords``: to ``team:encoders`` at reset."""

    kind = "keywords"
    keywords: Sequence[str]


@dataclass
class Code(Payload):
    """``code``: private, to the encoder, at the start of each turn."""

    kind = "code"
    turn: int
    code: Sequence[int]


@dataclass
class Hints(Payload):
    """``hints``: public, the hints played this turn (after any fallback), in code order."""

    kind = "hints"
    turn: int
    hints: Sequence[str]


@dataclass
class Reveal(Payload):
    """``reveal``: public, after the guesses: the turn's result and both counters."""

    kind = "reveal"
    turn: int
    code: Sequence[int]
    hints: Sequence[str]
    decoder_guess: Sequence[int]
    interceptor_guess: Sequence[int] | None  # None: no guess (first-round rule)
    miscommunication: bool
    interception: bool
    miscommunications: int
    interceptions: int


@dataclass
class GameOver(Payload):
    """``game_over``: public, after the last reveal: the ending and the turns played (never the
    keywords)."""

    kind = "game_over"
    ending: str
    turns: int
