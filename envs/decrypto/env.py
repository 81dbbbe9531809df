"""Decrypto's PettingZoo adapter: spaces, masks, observations, rendering and the bus messages.

The rules are :mod:`socialsim.envs.decrypto.core`, the vocabulary
:mod:`socialsim.envs.decrypto.protocol`; the documentation page (spaces, observation layout,
actions, rewards) is the docstring of :mod:`socialsim.envs.decrypto_v0`. :class:`DecryptoEnv`
is the Parallel env, a :class:`~socialsim.envs.aec.DecisionEnv`, so its one AEC form is
:class:`~socialsim.envs.aec.DecisionAEC`. The numeric observation is a
:class:`~socialsim.envs.decrypto.board.Board` (named parts of the vector, written where the game
moves, read through each seat's view); the decisions by phase and the text render are
:mod:`socialsim.envs.decrypto.views`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.envs.aec import DecisionEnv, idle_mask
from socialsim.envs.decrypto import protocol, shaping, words
from socialsim.envs.decrypto.board import Board
from socialsim.envs.decrypto.core import DecryptoGame
from socialsim.envs.decrypto.protocol import (
    CODES,
    GUESS,
    GUESSERS,
    HINTS,
    SEATS,
    TEAMS,
    Options,
    Rules,
)
from socialsim.envs.decrypto.views import DECISIONS, FrozenMapping, read_only, render_text

from socialsim.bus import EVERYONE, MessageBus, json_copy, team

RENDER_MODES = ("ansi", "human")
#: the kinds whose payloads hold only scalars and tuples of them, which the bus shows as they
#: are behind a read-only mapping (see ``MessageBus``); ``rules`` is inspected
_VIEWS = dict.fromkeys(("keywords", "code", "hints", "reveal", "game_over"), MappingProxyType)

_ANY_CODE = np.ones(len(CODES), dtype=np.int8)  # a guesser's mask (copied for each observation)
#: a seat without a decision may play only the no-op, its space's first action (ignored)
_NO_CODE = idle_mask(len(CODES))


class DecryptoEnv(DecisionEnv):
    """Decrypto, Parallel form (see :mod:`socialsim.envs.decrypto_v0` for the whole page)."""

    metadata = {
        "name": "decrypto_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": True,
    }

    def __init__(
        self,
        max_turns: int = protocol.MAX_TURNS,
        wordlist: str | os.PathLike | None = None,
        first_round_interception: bool = True,
        max_hint_words: int = protocol.MAX_HINT_WORDS,
        max_hint_chars: int = protocol.MAX_HINT_CHARS,
        hint_vocabulary: str | os.PathLike | None = None,
        render_mode: str | None = None,
        keywords: Sequence[str] | None = None,
        codes: Sequence[Any] | None = None,
        hint_rules: str = protocol.REFERENCE_HINTS,
        turn_rewards: float = 0.0,
    ):
        #: the shaped reward of each reveal (0: none, the game's own rewards only)
        self.turn_rewards = shaping.checked_weight(turn_rewards)
        self.settings = Options(
            max_turns, first_round_interception, max_hint_words, max_hint_chars, hint_rules
        )
        #: the board game's hint rules: hints the masks cannot rule out are checked in full
        self._board_game_hints = hint_rules == protocol.BOARD_GAME_HINTS
        # a given game (replays): every reset plays these keywords and codes instead of the seed's
        self.given = {
            "keywords": None if keywords is None else protocol.given_keywords(keywords),
            "codes": None if codes is None else protocol.given_codes(codes, max_turns),
        }
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode: must be one of {', '.join(RENDER_MODES)} or None, got {render_mode!r}"
            )
        self.render_mode = render_mode
        # the lists and their tables, made once per process for these settings (read-only)
        lexicon = words.lexicon(wordlist, hint_vocabulary, max_hint_words, max_hint_chars)
        self.words, self.hint_vocabulary = lexicon.words, lexicon.hint_vocabulary
        self.max_turns = max_turns
        #: every vocabulary index of a word, ignoring case (a keyword's are all masked)
        self._spellings = lexicon.spellings
        # the vocabulary words the hint limits allow; the keywords are taken out at each reset
        self._hint_fits = lexicon.hint_fits
        #: the encoder's masks, one per hint position, of a game none of whose keywords is in
        #: the vocabulary (the bundled lists' every game), and with no decision
        self._fit_allowed = self._hint_fits.tobytes()
        self._no_hint = read_only(idle_mask(len(self._hint_fits)))
        #: this game's mask of one hint (made at reset), and the hints check_action allows, as
        #: bytes
        self._hint_mask, self._hint_allowed = self._hint_fits, self._fit_allowed
        #: the hints chosen so far this turn one at a time (an element of the Discrete space
        #: each), as the words the game will play
        self._slots: list[str] = []
        # the settings never change, so neither does the message: made plain once
        self._rules = json_copy(self.rules().to_payload())
        #: the reference stream, re-seeded by each game (building one costs more than a turn)
        self._stream = np.random.RandomState(0)  # noqa: NPY002 - paper compatibility
        #: the observation vector with nothing hidden, written where the game moves; each
        #: observation is this board read through its seat's view
        self._board = Board(max_turns, lexicon)
        #: the info of a seat without a decision until the next reveal; each seat's info is a
        #: copy with its own entries, and what they share is immutable
        self._info: dict[str, Any] = {}
        self._keywords: tuple[str, ...] = ()
        self._code: tuple[int, int, int] | None = None
        self.possible_agents = list(SEATS)
        self.agents: list[str] = []
        self.bus = MessageBus(SEATS, TEAMS, views=_VIEWS)
        self.game: DecryptoGame | None = None
        self.phase: str | None = None  # "hints" | "guess" | None (over)
        self._decisions: Mapping[str, str | None] = DECISIONS[None, True]  # by seat, this phase
        self.hints: list[str] | None = None  # the current turn's hints, once given
        self._last_seed: int | None = None
        self._seed_source: np.random.Generator | None = None

    # -- PettingZoo API -----------------------------------------------------------------------

    @functools.cached_property
    def _spaces(self) -> tuple[dict[str, spaces.Dict], dict[str, spaces.Space], spaces.Box]:
        """The observation and action spaces by seat and the state's, made when first asked for
        (an env played by language or scripted seats never is)."""
        V = len(self.hint_vocabulary)
        high = self._board.layout.high(len(self.words), V)
        vector = spaces.Box(low=np.zeros_like(high), high=high, dtype=np.int64)
        guess_mask = spaces.Box(0, 1, shape=(len(CODES),), dtype=np.int8)
        # the encoder's three-slot choice, offered flat: one hint per step, three steps a turn
        hint_mask = spaces.Box(0, 1, shape=(V,), dtype=np.int8)
        observation = {
            "encoder": spaces.Dict({"observation": vector, "action_mask": hint_mask}),
            "decoder": spaces.Dict({"observation": vector, "action_mask": guess_mask}),
            "interceptor": spaces.Dict({"observation": vector, "action_mask": guess_mask}),
        }
        action = {
            "encoder": spaces.Discrete(V),
            "decoder": spaces.Discrete(len(CODES)),
            "interceptor": spaces.Discrete(len(CODES)),
        }
        return observation, action, vector

    def observation_space(self, agent: str):
        return self._spaces[0][agent]

    def action_space(self, agent: str):
        return self._spaces[1][agent]

    @property
    def state_space(self) -> spaces.Box:
        """The global state of :meth:`state`: the observation vector with nothing hidden."""
        return self._spaces[2]

    @property
    def turn(self) -> int:
        return 0 if self.game is None else self.game.turn

    def rules(self) -> Rules:
        """The payload of the ``rules`` message: the settings in force, nothing secret."""
        return Rules.of(self.settings)

    def begin(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        if seed is not None:
            # the source of unseeded resets is made from this seed when one needs it
            self._last_seed, self._seed_source = seed, None
        else:
            # an unseeded reset continues from the last seed given, as Gymnasium envs do
            if self._seed_source is None:
                self._seed_source = np.random.default_rng(self._last_seed)
            seed = int(self._seed_source.integers(2**31 - 1))
        given = {**self.given, **options} if options else self.given
        self.game = game = DecryptoGame(
            self.words,
            seed,
            self.settings,
            keywords=given["keywords"],
            codes=given["codes"],
            stream=self._stream,
        )
        # a keyword is never a hint: its spellings in the vocabulary are masked
        spellings = self._spellings
        masked = [i for k in game.keywords for i in spellings.get(k.strip().casefold(), ())]
        if masked:
            mask = self._hint_fits.copy()
            mask[masked] = 0
            self._hint_mask, self._hint_allowed = read_only(mask), mask.tobytes()
        else:
            self._hint_mask, self._hint_allowed = self._hint_fits, self._fit_allowed
        self._slots = []
        self._keywords = game.keywords
        self.agents = list(SEATS)
        self.bus = MessageBus(SEATS, TEAMS, views=_VIEWS)
        self._enter_phase(HINTS)
        self.hints = None
        self._board.start(game)
        self._share()
        self.bus.post(1, EVERYONE, "public", Rules.kind, self._rules)
        self._publish(team("encoders"), "team", protocol.Keywords(game.keywords))
        self._publish_code()
        return self._infos()

    def close(self) -> None:
        pass

    # -- the DecisionEnv methods ----------------------------------------------------------------

    def deciding(self) -> list[str]:
        """The agents that have a decision now."""
        decisions = self._decisions
        return [a for a in self.agents if decisions[a]]

    def check_action(self, agent: str, action: Any) -> tuple[Any, dict[str, Any] | None]:
        if agent == "encoder":
            if _is_index(action):
                return self._check_slot(int(action))
            if self._slots:
                raise self._expected_hints(action)
            indices = self._hint_indices(action)
            allowed = self._hint_allowed
            if (
                indices is not None
                and all([allowed[i] for i in indices])
                and not (self._board_game_hints and self._board_game_breaks(indices))
            ):
                # the mask allows exactly the vocabulary words that keep the hint rules
                vocabulary = self.hint_vocabulary
                return [vocabulary[i] for i in indices], None
            hints = self._hint_words(action) if indices is None else self.read_hints(action)
            played, reasons = self.game.apply_hint_fallback(hints)
            # the flag's own tuple: the encoder's info must not hold the hints the game plays
            flag = {"reason": "; ".join(reasons), "fallback": tuple(played)} if reasons else None
            return played, flag
        return self.read_guess(agent, action), None

    def apply(
        self, choices: Mapping[str, Any], flags: Mapping[str, dict[str, Any]]
    ) -> tuple[dict[str, float], bool, bool, dict[str, dict[str, Any]]]:
        game = self.game
        assert game is not None
        rewards = dict.fromkeys(self.agents, 0)
        if self.phase == HINTS:
            hints = choices["encoder"]
            if isinstance(hints, str):  # one hint of three: the turn waits for the others
                self._slots.append(hints)
                return rewards, False, False, self._infos()
            self.hints, self._slots = hints, []
            self._enter_phase(GUESS)
            self._board.hint(self.hints)
            self._publish(EVERYONE, "public", protocol.Hints(game.turn, tuple(self.hints)))
        else:
            turn = game.turn
            result = game.play_turn(self.hints, choices["decoder"], choices.get("interceptor"))
            played = result._asdict()  # the turn's fields (tuples), for the reveal and the infos
            reveal = protocol.Reveal(
                **played, miscommunications=game.miscommunications, interceptions=game.interceptions
            )
            self._publish(EVERYONE, "public", reveal, turn=turn)
            self.hints = None
            self._board.reveal(game, result)
            self._share(FrozenMapping(played))
            if game.done:
                self._enter_phase(None)
                rewards = game.rewards()
                over = protocol.GameOver(game.ending, len(game.turn_log))
                self._publish(EVERYONE, "public", over, turn=turn)
            else:
                self._enter_phase(HINTS)
                self._publish_code()
            if self.turn_rewards:
                rewards = shaping.shaped(rewards, result, self.turn_rewards)
        return rewards, game.done, False, self._infos()

    def observe(self, agent: str) -> dict[str, Any]:
        decision = self._decisions[agent]
        vector = self._board.show(agent, decision)  # a new array
        if agent == "encoder":
            mask = self._hint_mask if decision else self._no_hint
            if self._slots and decision:  # the hints it has chosen this turn, to itself only
                index, outside = self._board._vocab_index, len(self.hint_vocabulary)
                chosen = [index.get(word.casefold(), outside) for word in self._slots]
                start = self._board.layout.hints.start
                vector[start : start + len(chosen)] = chosen
        else:
            mask = (_ANY_CODE if decision else _NO_CODE).copy()  # its own: RL views pass it on
        return {"observation": vector, "action_mask": mask}

    # -- reading actions ------------------------------------------------------------------------

    def read_hints(self, action: Any) -> list[str]:
        """The encoder's three hints from its action; ``ValueError`` if it is malformed."""
        indices = self._hint_indices(action)
        if indices is None:
            return self._hint_words(action)
        return [self.hint_vocabulary[i] for i in indices]

    def _check_slot(self, index: int) -> tuple[Any, dict[str, Any] | None]:
        """One hint of three, a vocabulary index: the word alone, or the three words when it
        is the last; a hint the mask forbids is replaced by the fallback and flagged at once."""
        V = len(self.hint_vocabulary)
        if not 0 <= index < V:
            raise self._expected_hints(index)
        word, slots = self.hint_vocabulary[index], self._slots
        flag = None
        if not self._hint_allowed[index] or self._board_game_hints:
            # checked in its place after the hints kept so far (the board game's repeat rule)
            played, reasons = self.game.apply_hint_fallback([*slots, word])
            word = played[-1]
            if reasons:
                flag = {"reason": "; ".join(reasons), "fallback": word}
        return ([*slots, word] if len(slots) == 2 else word), flag

    def _expected_hints(self, action: Any) -> ValueError:
        V = len(self.hint_vocabulary)
        if self._slots:
            expected = f"hint {len(self._slots) + 1} of 3, an element of Discrete({V})"
        else:
            expected = (
                f"an element of Discrete({V}) (one hint-vocabulary index: the first of three "
                "hints), three indices or {'hints': [str, str, str]}"
            )
        return ValueError(f"encoder: expected {expected}, got {action!r}")

    def _board_game_breaks(self, indices: list[int]) -> bool:
        """Whether vocabulary hints the masks allow break the board game's rules (a repeat, or
        a keyword inside a hint: the masks hold one position each and a keyword's spellings)."""
        vocabulary = self.hint_vocabulary
        return bool(self.game.validate_hints([vocabulary[i] for i in indices]))

    def _hint_indices(self, action: Any) -> list[int] | None:
        """The vocabulary indices of an RL hint action, ``None`` for a dict of text hints;
        ``ValueError`` if it is neither."""
        if isinstance(action, np.ndarray):
            values = action.tolist() if action.shape == (3,) else None
        elif isinstance(action, (list, tuple)):
            values = list(action) if len(action) == 3 else None
        elif isinstance(action, Mapping):
            return None
        else:
            values = None
        V = len(self.hint_vocabulary)
        if values is not None and all([type(v) is int and 0 <= v < V for v in values]):
            return values  # a new list of Python ints (an RL policy's usual action)
        if values is not None and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, np.bool_ | bool) and 0 <= v < V
            for v in values
        ):
            return [int(v) for v in values]
        raise self._expected_hints(action)

    def _hint_words(self, action: Mapping[str, Any]) -> list[str]:
        hints = action.get("hints")
        if (
            isinstance(hints, (list, tuple))
            and len(hints) == 3
            and all(isinstance(h, str) for h in hints)
        ):
            return list(hints)
        raise self._expected_hints(action)

    def read_guess(self, agent: str, action: Any) -> tuple[int, int, int]:
        """A guesser's code from its action; ``ValueError`` if it is not a code."""
        if type(action) is int and 0 <= action < len(CODES):  # the RL view's usual action
            return CODES[action]
        expected = "an action in Discrete(24) or {'guess': [d1, d2, d3] | 'X-Y-Z'} with distinct digits 1-4"
        value = action.get("guess") if isinstance(action, Mapping) else action
        if not isinstance(action, Mapping) and not isinstance(action, (int, np.integer)):
            raise ValueError(f"{agent}: expected {expected}, got {action!r}")
        try:
            return protocol.parse_code(value)
        except ValueError as error:
            raise ValueError(f"{agent}: expected {expected}, got {action!r} ({error})") from None

    # -- what agents see --------------------------------------------------------------------------

    def _enter_phase(self, phase: str | None) -> None:
        """Move to ``phase`` (``None``: the game is over) and settle who decides in it."""
        game = self.game
        assert game is not None
        self.phase = phase
        self._decisions = DECISIONS[phase, game.interceptor_guesses]

    def _publish(
        self, to: Any, channel: str, payload: protocol.Payload, turn: int | None = None
    ) -> None:
        """Publish a payload of the protocol, of its kind, on this turn unless ``turn`` is given.
        The payloads after ``rules`` are built of JSON scalars and tuples, the form the bus
        keeps."""
        self.bus.post(
            self.game.turn if turn is None else turn,
            to,
            channel,
            payload.kind,
            payload.to_payload(),
        )

    def _publish_code(self) -> None:
        assert self.game is not None and self.game.code is not None
        self._publish(("encoder",), "private", protocol.Code(self.game.turn, self.game.code))

    def _share(self, last_turn: Mapping[str, Any] | None = None) -> None:
        """Snapshot what the seats' infos hold until the next reveal, the info of a seat without
        a decision; ``last_turn`` is the turn just revealed. Every seat's info is its own dict,
        and what they share is immutable (tuples, read-only mappings), so no seat can change
        what another seat or a later step is handed."""
        game = self.game
        assert game is not None
        self._info = {
            "decision": None,
            "turn": game.turn,
            "miscommunications": game.miscommunications,
            "interceptions": game.interceptions,
            "hint_history": tuple([tuple(h) for h in game.hint_history]),
            "code_history": tuple(game.code_history),
            "last_turn": last_turn,
        }
        self._code = game.code

    def _infos(self) -> dict[str, dict[str, Any]]:
        base, decisions = self._info, self._decisions
        hints = None if self.hints is None else tuple(self.hints)
        infos = {}
        for agent in self.agents:
            decision = decisions[agent]
            infos[agent] = info = base.copy()
            if decision is not None:
                info["decision"] = decision
            if agent != "interceptor":
                info["keywords"] = self._keywords
            if agent == "encoder" and decision == HINTS:
                info["code"] = self._code
            if agent != "encoder" and decision == GUESS:
                info["hints"] = hints
        return infos

    # -- global views -------------------------------------------------------------------------

    def state(self) -> np.ndarray:
        """The global state, for centralised critics: the observation vector's layout with
        nothing hidden (the keywords, the current code while one is in play) and index 1 the
        phase (0 over, 1 hints, 2 guess)."""
        if self.game is None:
            raise ValueError("state: no game yet; call reset() first")
        return self._board.show(None, self.phase)

    def render(self) -> str | None:
        """The public state in a few lines (never a keyword or an unrevealed code)."""
        if self.render_mode is None:
            return None
        text = render_text(self)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def summary(self) -> dict[str, Any]:
        """Keywords, ending, turns, counters and the turn log (see ``core.DecryptoGame.summary``)."""
        if self.game is None:
            raise ValueError("summary: no game yet; call reset() first")
        if self.turn_rewards:  # recorded only when on, so the default records are as they were
            return {**self.game.summary(), "turn_rewards": self.turn_rewards}
        return self.game.summary()


def _is_index(action: Any) -> bool:
    """Whether ``action`` is one index (an int, a numpy integer or a 0-d integer array)."""
    if isinstance(action, np.ndarray):
        return action.shape == () and np.issubdtype(action.dtype, np.integer)
    return isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))


__all__ = ["GUESSERS", "RENDER_MODES", "TEAMS", "DecryptoEnv", "render_text"]
