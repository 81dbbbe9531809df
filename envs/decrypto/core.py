"""Decrypto, the rules: pure state and transitions, no I/O, no bus, no text beyond code strings.

The vocabulary (seats, the code table, limits, endings, options) is in
:mod:`socialsim.envs.decrypto.protocol`; this file is the game.

The game (the single-team variant of the Decrypto benchmark)
-----------------------------------------------------------
* Three seats: ``encoder`` and ``decoder`` are a team and share four secret **keywords**; the
  ``interceptor`` never sees them. Keyword ``i`` goes with digit ``i`` (1-based).
* Each turn the encoder gets a **code**: an ordered triple of distinct digits from 1-4
  (:data:`CODES`, 24 of them). Codes never repeat within a game. The encoder gives three
  **hints**, one per digit, in code order. Then the decoder and the interceptor each guess an
  ordered code, independently (neither sees the other's guess).
* **Reveal.** Hint ``j`` is appended to the hint history of keyword ``code[j]``; the code joins
  the code history. A decoder guess that differs from the code is a **miscommunication**; an
  interceptor guess equal to the code is an **interception**. Both counters persist.
* **Terminal check, in this order, after the reveal:**

  1. ``miscommunications == 2`` or ``interceptions == 2``: the interceptor wins (rewards
     encoder -1, decoder -1, interceptor +1). The ending is ``"both"`` when both counters reach
     2 on the same turn, else ``"miscomm"`` or ``"intercept"``.
  2. otherwise, if this was turn ``max_turns`` (8): the team wins (+1, +1, -1), ending
     ``"survived"``. So a second token on the last turn is still a loss.
  3. otherwise every reward is 0 and the next turn begins.

  A game lasts 2 to ``max_turns`` turns.
* **First round.** As in the reference implementation, the interceptor guesses from turn 1
  and a correct turn-1 guess counts (``first_round_interception=True``, the default).
  ``first_round_interception=False`` switches on the board game's first-round rule instead: the
  interceptor makes no guess on turn 1 (its guess there is ``None``), so no interception can
  happen on turn 1. That rule is off by default.
* **Hints.** :func:`validate_hints` is the rule: each hint is non-empty, has at most
  ``max_words`` words and ``max_chars`` characters, and is not one of the keywords, compared
  as :func:`~socialsim.envs.decrypto.protocol.fold` folds them (case, surrounding whitespace,
  invisible characters, fullwidth forms and Cyrillic or Greek look-alike letters ignored: a
  keyword in disguise is the keyword). Agents call it before submitting. The
  game itself only accepts valid hints; :func:`apply_hint_fallback` replaces each
  rule-breaking hint by :data:`FALLBACK_HINT` (``"no_hint"``), which is what the env does with a
  hint that still breaks the rules when it arrives (flagged and counted there).
* **Hint rules** (the option ``hint_rules``). ``"reference"``, the default, is the rule above,
  the Decrypto benchmark's: only a hint *equal* to a keyword is refused, so ``"corner kick"``
  passes for the keyword ``corner`` and a turn may give the same hint twice. ``"board_game"``
  is the rule as the board game states it: besides the above, a hint may not contain a keyword
  as a word (words are runs of letters and digits, compared folded, a plural or
  singular of the keyword too: ``corners`` for ``corner``, ``cities`` for ``city``) nor repeat
  another hint of the same turn (the blank :data:`FALLBACK_HINT` excepted, as it is the game's,
  not a hint).
* **Guesses** are codes: a repeated digit or a digit outside 1-4 is not a guess at all
  (:func:`parse_code` raises ``ValueError``), so there is no "wasted guess" as in the reference.

Randomness (identical to the reference for a 680-word list)
-----------------------------------------------------------
One ``numpy.random.RandomState`` seeded with the game's seed draws, in order: the keywords,
``choice(words, 4, replace=False)``; the first code, ``choice(arange(1, 5), 3, replace=False)``;
then at the end of every turn the game goes on past, the next code the same way, redrawn while
it is already in the code history. (Those ``choice`` calls are ``permutation(n)[:k]``, that is
``shuffle(arange(n))`` cut to ``k``; the game shuffles an ``arange`` of the word list and a
list ``[0, 1, 2, 3]`` itself, the same draws without the checks. An env passes its one
``RandomState`` to be re-seeded by each game, as building one costs more than a whole turn.) (The reference also draws one more code after the final turn;
nothing ever reads it, so the codes played are the same.) Nothing else uses this stream, so a
seed's code sequence never depends on what the agents do, and depends on the word list only
through its length. Seed 0 with 680 words plays 3-1-4, 3-4-1, 1-4-2, 3-4-2, 4-1-3, 1-2-4,
2-1-4, 2-1-3.

A replay gives the game instead: ``keywords=`` replaces the drawn keywords (they are still drawn,
so the codes stay the seed's) and ``codes=`` gives turn ``t`` the code ``codes[t - 1]`` (at least
``max_turns`` of them, none repeated; the stream then draws no code). Both are checked by
:func:`~socialsim.envs.decrypto.protocol.given_keywords` and ``given_codes``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from socialsim.envs.decrypto.protocol import (
    BOARD_GAME_HINTS,
    FALLBACK_HINT,
    MAX_HINT_CHARS,
    MAX_HINT_WORDS,
    REFERENCE_HINTS,
    SEATS,
    TOKENS_TO_LOSE,
    Options,
    fold,
    given_codes,
    given_keywords,
    parse_code,
)

__all__ = ["DecryptoGame", "TurnResult", "apply_hint_fallback", "validate_hints"]


# -- hints ----------------------------------------------------------------------------------------


def validate_hints(
    hints: Any,
    keywords: Sequence[str],
    max_words: int = MAX_HINT_WORDS,
    max_chars: int = MAX_HINT_CHARS,
    hint_rules: str = REFERENCE_HINTS,
) -> list[str]:
    """Why ``hints`` break the rules, one reason per problem; an empty list if they are valid.

    Valid hints are a list of exactly three strings, each non-empty after stripping, with at
    most ``max_words`` whitespace-separated words and ``max_chars`` characters, and none equal
    to one of ``keywords`` once both are :func:`~.protocol.fold`'ed; under the board game's
    ``hint_rules``, none containing a keyword as a word (plurals too) nor repeating another.
    """
    if isinstance(hints, str) or not isinstance(hints, Sequence):
        return [f"hints must be a list of 3 strings, got {type(hints).__name__} {hints!r}"]
    problems = _hint_problems(hints, _secret(keywords), max_words, max_chars)
    if hint_rules == BOARD_GAME_HINTS and len(hints) == 3:
        problems += _board_game_problems(hints, keywords)
    return problems


_WORD = re.compile(r"[^\W_]+")


def _forms(word: str) -> set[str]:
    """A word and the singulars it may be the plural of: ``cities`` -> ``city``, ``boxes`` ->
    ``box``, ``cats`` -> ``cat``."""
    forms = {word}
    if len(word) > 3 and word.endswith("ies"):
        forms.add(word[:-3] + "y")
    if len(word) > 2 and word.endswith("es"):
        forms.add(word[:-2])
    if len(word) > 1 and word.endswith("s"):
        forms.add(word[:-1])
    return forms


def _board_game_problems(hints: Sequence[Any], keywords: Sequence[str]) -> list[str]:
    """The board game's hint rules: no keyword as a word of a hint (a plural or singular of it
    too), no hint repeating another of the same turn (the blank fallback hint excepted)."""
    stems = [(k, _forms(fold(k))) for k in keywords]
    reasons, seen = [], {}
    for position, hint in enumerate(hints, 1):
        if not isinstance(hint, str) or not hint.strip():
            continue  # reported by _hint_problems
        text = hint.strip()
        folded = fold(text)
        for word in _WORD.findall(folded):
            keyword = next((k for k, forms in stems if _forms(word) & forms), None)
            if keyword is not None and folded != fold(keyword):
                reasons.append(
                    f"hint {position} {text!r} contains the keyword {keyword!r}; a hint may not "
                    "contain a keyword"
                )
                break
        if folded in seen and folded != FALLBACK_HINT:
            reasons.append(
                f"hint {position} {text!r} repeats hint {seen[folded]}; the three hints must differ"
            )
        seen.setdefault(folded, position)
    return reasons


def _secret(keywords: Sequence[str]) -> frozenset[str]:
    """The keywords as a hint is compared with them: :func:`~.protocol.fold`'ed."""
    return frozenset(fold(k) for k in keywords)


def _hint_problems(
    hints: Sequence[Any], secret: frozenset[str], max_words: int, max_chars: int
) -> list[str]:
    """:func:`validate_hints` for a sequence, against keywords already :func:`_secret`."""
    if len(hints) != 3:
        return [f"hints must be 3 strings, one per code digit; got {len(hints)}"]
    reasons = []
    for position, hint in enumerate(hints, 1):
        if not isinstance(hint, str):
            reasons.append(f"hint {position} must be a string, got {type(hint).__name__} {hint!r}")
            continue
        text = hint.strip()
        if not text:
            reasons.append(f"hint {position} is empty")
            continue
        words = len(text.split())
        if words > max_words:
            reasons.append(
                f"hint {position} {text!r} has {words} words; at most {max_words} allowed"
            )
        if len(text) > max_chars:
            reasons.append(
                f"hint {position} {text!r} has {len(text)} characters; at most {max_chars} allowed"
            )
        if fold(text) in secret:
            reasons.append(
                f"hint {position} {text!r} is one of the keywords; a hint may not be a keyword"
            )
    return reasons


def apply_hint_fallback(
    hints: Sequence[str],
    keywords: Sequence[str],
    max_words: int = MAX_HINT_WORDS,
    max_chars: int = MAX_HINT_CHARS,
    hint_rules: str = REFERENCE_HINTS,
) -> tuple[list[str], list[str]]:
    """Three strings -> (the hints the game plays, the reasons any were replaced).

    Each hint is stripped; each one that breaks a rule becomes :data:`FALLBACK_HINT` (under
    the board game's rules, a hint repeating an earlier one of the turn too).
    """
    played, reasons = [], []
    for position, hint in enumerate(hints):
        # validate one hint at a time, in its position, so each reason names it
        probe = [FALLBACK_HINT] * 3
        probe[position] = hint
        if hint_rules == BOARD_GAME_HINTS and isinstance(hint, str):
            probe[:position] = played  # the hints kept so far, for the repeat rule
        problems = validate_hints(probe, keywords, max_words, max_chars, hint_rules)
        played.append(FALLBACK_HINT if problems else hint.strip())
        reasons.extend(problems)
    return played, reasons


_DEFAULTS = Options()  # the reference's settings


# -- the game -------------------------------------------------------------------------------------


class TurnResult(NamedTuple):
    """What everyone learns at the reveal of one turn (immutable, a named tuple)."""

    turn: int
    code: tuple[int, int, int]
    hints: tuple[str, str, str]
    decoder_guess: tuple[int, int, int]
    interceptor_guess: tuple[int, int, int] | None  # None: no guess (first-round rule)
    miscommunication: bool
    interception: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "code": list(self.code),
            "hints": list(self.hints),
            "decoder_guess": list(self.decoder_guess),
            "interceptor_guess": None
            if self.interceptor_guess is None
            else list(self.interceptor_guess),
            "miscommunication": self.miscommunication,
            "interception": self.interception,
        }


class DecryptoGame:
    """One game from its seed to its ending. Read its attributes; change it only by :meth:`play_turn`.

    Attributes: ``keywords`` (4 words), ``code`` (the current code; ``None`` once the game is
    over), ``turn`` (1-based; the last turn played once over), ``miscommunications``,
    ``interceptions``, ``hint_history`` (4 lists, one per keyword), ``code_history`` (codes of
    the turns played), ``turn_log`` (:class:`TurnResult` per turn), ``ending`` (one of
    :data:`ENDINGS`, or ``None`` while playing), ``options`` (the settings, an
    :class:`~socialsim.envs.decrypto.protocol.Options`, checked when it was made; the
    reference's by default).
    """

    def __init__(
        self,
        words: Sequence[str],
        seed: int,
        options: Options = _DEFAULTS,
        *,
        keywords: Sequence[str] | None = None,
        codes: Sequence[Any] | None = None,
        stream: np.random.RandomState | None = None,
    ):
        if len(words) < 4:
            raise ValueError(f"words: at least 4 keywords are needed, got {len(words)}")
        self.options = options  # checked when it was made
        self.max_turns = options.max_turns
        self.first_round_interception = options.first_round_interception
        self.max_hint_words = options.max_hint_words
        self.max_hint_chars = options.max_hint_chars
        self.hint_rules = options.hint_rules
        # The reference implementation's stream (see the module docstring); ``stream`` is an
        # env's own, re-seeded here, as the env plays one game at a time.
        if stream is None:
            stream = np.random.RandomState(seed)  # noqa: NPY002 - paper compatibility
        else:
            stream.seed(seed)
        self._rng = stream
        order = np.arange(len(words))
        stream.shuffle(order)
        drawn = tuple([str(words[i]) for i in order[:4].tolist()])
        if keywords is not None:
            # A replay fixes the keywords; they are drawn anyway so the codes stay the seed's.
            drawn = given_keywords(keywords)
        self.keywords: tuple[str, ...] = drawn
        self._secret = _secret(drawn)  # what no hint may be, checked at every turn
        # A replay may fix the codes too: turn t plays codes[t - 1] and the seed draws none.
        self._given_codes = None if codes is None else given_codes(codes, options.max_turns)
        self.code_history: list[tuple[int, int, int]] = []
        self.code: tuple[int, int, int] | None = self._draw_code()
        self.turn = 1
        self.miscommunications = 0
        self.interceptions = 0
        self.hint_history: list[list[str]] = [[], [], [], []]
        self.turn_log: list[TurnResult] = []
        self.ending: str | None = None

    def _draw_code(self) -> tuple[int, int, int]:
        if self._given_codes is not None:
            return self._given_codes[len(self.code_history)]
        while True:
            digits = [1, 2, 3, 4]  # shuffled as permutation(4) + 1 would be
            self._rng.shuffle(digits)
            code = (digits[0], digits[1], digits[2])
            if code not in self.code_history:
                return code  # type: ignore[return-value]

    @property
    def done(self) -> bool:
        return self.ending is not None

    @property
    def interceptor_guesses(self) -> bool:
        """Whether the interceptor guesses this turn (not on turn 1 under the first-round rule)."""
        return self.first_round_interception or self.turn != 1

    def validate_hints(self, hints: Any) -> list[str]:
        """:func:`validate_hints` with this game's keywords, limits and hint rules."""
        if type(hints) is not list and type(hints) is not tuple:
            return validate_hints(
                hints, self.keywords, self.max_hint_words, self.max_hint_chars, self.hint_rules
            )
        problems = _hint_problems(hints, self._secret, self.max_hint_words, self.max_hint_chars)
        if self.hint_rules == BOARD_GAME_HINTS and len(hints) == 3:
            problems += _board_game_problems(hints, self.keywords)
        return problems

    def apply_hint_fallback(self, hints: Sequence[str]) -> tuple[list[str], list[str]]:
        """:func:`apply_hint_fallback` with this game's keywords, limits and hint rules."""
        return apply_hint_fallback(
            hints, self.keywords, self.max_hint_words, self.max_hint_chars, self.hint_rules
        )

    def play_turn(
        self,
        hints: Sequence[str],
        decoder_guess: Sequence[int],
        interceptor_guess: Sequence[int] | None,
    ) -> TurnResult:
        """Play the current turn: reveal, update the counters, check the ending, draw the next code.

        Raises ``ValueError`` (and changes nothing) if the game is over, the hints break a rule,
        a guess is not a code, or the interceptor's guess is given when it may not guess (or
        missing when it must).
        """
        if self.done:
            raise ValueError(
                f"play_turn: the game is over (ending {self.ending!r}); start a new game"
            )
        reasons = self.validate_hints(hints if type(hints) is tuple else list(hints))
        if reasons:
            raise ValueError("hints: " + "; ".join(reasons))
        decoder = parse_code(decoder_guess)
        if self.interceptor_guesses:
            if interceptor_guess is None:
                raise ValueError(
                    f"interceptor_guess: the interceptor guesses on turn {self.turn}; got None"
                )
            interceptor = parse_code(interceptor_guess)
        else:
            if interceptor_guess is not None:
                raise ValueError(
                    f"interceptor_guess: no interception on turn 1 under the first-round rule; got {interceptor_guess!r}"
                )
            interceptor = None
        code = self.code
        assert code is not None
        played = tuple([h.strip() for h in hints])
        for digit, hint in zip(code, played, strict=True):
            self.hint_history[digit - 1].append(hint)
        self.code_history.append(code)
        result = TurnResult(
            turn=self.turn,
            code=code,
            hints=played,  # type: ignore[arg-type]
            decoder_guess=decoder,
            interceptor_guess=interceptor,
            miscommunication=decoder != code,
            interception=interceptor == code,
        )
        self.miscommunications += result.miscommunication
        self.interceptions += result.interception
        self.turn_log.append(result)
        lost_by_miscomm = self.miscommunications >= TOKENS_TO_LOSE
        lost_by_intercept = self.interceptions >= TOKENS_TO_LOSE
        if lost_by_miscomm and lost_by_intercept:
            self.ending = "both"
        elif lost_by_miscomm:
            self.ending = "miscomm"
        elif lost_by_intercept:
            self.ending = "intercept"
        elif self.turn == self.max_turns:
            self.ending = "survived"
        if self.done:
            self.code = None
        else:
            self.code = self._draw_code()
            self.turn += 1
        return result

    def rewards(self) -> dict[str, int]:
        """Each seat's reward for the state reached: +-1 once the game is over, else 0."""
        if self.ending is None:
            return {seat: 0 for seat in SEATS}
        team = 1 if self.ending == "survived" else -1
        return {"encoder": team, "decoder": team, "interceptor": -team}

    def summary(self) -> dict[str, Any]:
        """The episode's outcome as plain JSON (the shape of ``env.unwrapped.summary()``)."""
        return {
            "keywords": list(self.keywords),
            "ending": self.ending,
            "turns": len(self.turn_log),
            "miscommunications": self.miscommunications,
            "interceptions": self.interceptions,
            "turn_log": [t.to_json() for t in self.turn_log],
        }
