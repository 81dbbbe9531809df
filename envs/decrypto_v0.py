"""Decrypto (the Decrypto benchmark's single-team variant): an encoder hints a secret code to its
decoder while an interceptor, who never sees the keywords, tries to read the hints too.

| | |
|---|---|
| Import | `from socialsim.envs import decrypto_v0` |
| Actions | encoder: three hints; decoder and interceptor: a code |
| Agents | `encoder`, `decoder`, `interceptor` (teams `encoders` = encoder + decoder, `interceptors`) |
| Parallel / AEC | `parallel_env()` (:class:`DecryptoEnv`) / `env()` (the one AEC form of `socialsim.envs.aec`: only agents with a decision are selected); `raw_env` is the AEC class |
| Action space | encoder `Discrete(V)`: one hint of the hint vocabulary a step, three steps a turn; guessers `Discrete(24)`: index `i` is `CODES[i]` (0 is 1-2-3, 23 is 4-3-2) |
| Observation space | `Dict({"observation": Box(int64, (14 + 9T,)), "action_mask": ...})`: guessers `Box(0, 1, (24,), int8)`; encoder `Box(0, 1, (V,), int8)` |

The rules are :mod:`socialsim.envs.decrypto.core` (the whole game in one file), the vocabulary
:mod:`socialsim.envs.decrypto.protocol`. Each turn has two steps. Step A: only the encoder has a
decision (``infos["encoder"]["decision"] == "hints"``) and gives three hints, one per digit of
its secret code: all three at once (``{"hints": [...]}``, or three vocabulary indices), or one
index of ``Discrete(V)`` per step, three steps in a row (the RL form: the turn waits, and
nothing is published, until the third). Step B: the decoder and the interceptor both have the decision ``"guess"`` and
act together, neither seeing the other's guess; then the reveal and the next turn's step A.
Actions of agents without a decision are ignored. The AEC form asks encoder; decoder,
interceptor; encoder... and moves the game when the last of a step has acted.

Arguments
---------
``decrypto_v0.env(max_turns=8, wordlist=None, first_round_interception=True, max_hint_words=2,
max_hint_chars=32, hint_vocabulary=None, render_mode=None, keywords=None, codes=None,
hint_rules="reference", turn_rewards=0)``

* ``max_turns`` — the team wins by surviving this many turns (1-24).
* ``wordlist`` — path of another keyword list (one word per line; at least 4). The code
  sequence of a seed depends only on the list's length; the bundled list has 680 words, the
  reference's length, so the codes match the reference's.
* ``first_round_interception`` — ``True``: the interceptor guesses, and can intercept, from turn
  1, as in the reference implementation. ``False``: the board game's first-round rule, no
  interceptor guess on turn 1 (its decision is ``None`` there).
* ``max_hint_words``, ``max_hint_chars`` — the hint limits of :func:`core.validate_hints`.
* ``hint_rules`` — ``"reference"`` (the default): the Decrypto benchmark's rule, only a hint
  equal to a keyword is refused. ``"board_game"``: the board game's, a hint may not contain a
  keyword as a word (case-insensitive, a plural or singular of it too) nor repeat another hint
  of the same turn (see :mod:`~socialsim.envs.decrypto.core`); the ``rules`` message then
  states ``hint_rules`` (under the reference's it does not, so its messages are unchanged).
  The encoder's masks rule out a keyword's spellings only; vocabulary hints that break the
  board game's rules otherwise get the fallback, flagged, as any rule-breaking hint.
* ``turn_rewards`` — w >= 0, a shaped reward at each reveal for learners (0, the default: none):
  the encoder and the decoder get +w when the decoder reads the code and -w on a
  miscommunication, the interceptor +w for an interception, on top of the end-of-game
  rewards. The rules and the outcome are unchanged; ``summary()`` records ``turn_rewards``
  when it is on (the episode record holds it with the env's arguments too).
* ``hint_vocabulary`` — path of the word list that indexes the encoder's ``Discrete``
  space; by default ``data/rl_hints.txt`` (328 common words, none of them a bundled keyword).
* ``render_mode`` — ``None``, ``"ansi"`` (``render()`` returns the public state as text) or
  ``"human"`` (it prints the same text).
* ``keywords`` — a given game's four keywords (digit 1 first; distinct ignoring case), played
  by every reset instead of the seed's; the codes are still the seed's unless ``codes`` is given.
* ``codes`` — a given game's code of each turn, turn 1 first (``"3-1-4"`` or ``[3, 1, 4]``; at
  least ``max_turns`` codes, none repeated), played instead of the seed's. With neither given
  the seed draws the game, exactly as without these arguments. Replays of recorded games (human
  games) use them; they are never published (the ``rules`` message does not change).
* ``reset(seed=..., options={"keywords": [...], "codes": [...]})`` gives the same for one game,
  over the constructor's.

Observation
-----------
What language agents read is on the bus (``env.unwrapped.bus``) and in ``infos[agent]``, as
plain JSON. Bus messages (payloads typed in :mod:`~socialsim.envs.decrypto.protocol`):
``rules`` (public, to everyone, the first message, turn 1: ``game``, ``max_turns``,
``first_round_interception``, ``max_hint_words``, ``max_hint_chars``, ``seats``, ``teams``; no
keyword), ``keywords`` (to ``team:encoders``, at reset), ``code`` (to the encoder, each turn),
``hints`` (to everyone, after step A), ``reveal`` (to everyone, after step B) and ``game_over``
(to everyone: ending and turns, never the keywords). ``infos[agent]``: ``decision``, ``turn``,
``miscommunications``, ``interceptions``, ``hint_history`` (4 lists, by keyword),
``code_history``, ``last_turn`` (the last reveal, or ``None``); ``keywords`` for the encoder and
the decoder only; ``code`` for the encoder at its ``"hints"`` decision; ``hints`` for the
guessers at their ``"guess"`` decision. Each seat's info is its own dict; the sequences in it
are tuples and ``last_turn`` a read-only mapping, so nothing one seat is handed can be changed
for another seat or a later step.

``observation`` is the same information as integers, for RL (``T = max_turns``, ``N`` words in
the keyword list, ``V`` words in the hint vocabulary):

| index | content | values |
|---|---|---|
| 0 | turn | 0..T |
| 1 | this agent's decision | 0 none, 1 hints, 2 guess |
| 2, 3 | miscommunications, interceptions | 0..2 |
| 4-7 | keywords as keyword-list indices | N = hidden (always, for the interceptor) |
| 8-10 | current code digits | 0 = hidden (all but the encoder at its decision) |
| 11-13 | current hints as vocabulary indices | V = a word outside the vocabulary, V+1 = none |
| 14 .. 14+4T | hint history, keyword k's slot s at 14 + k*T + s | as hints |
| next 3T | code history, turn t's digits | 0 = none |
| next 2T | decoder's and interceptor's guesses of turn t | code index, 24 = none |

``action_mask``: one flat vector for every seat. An agent without a decision may play only
the no-op, index 0, which is ignored. A guesser at its decision gets all ones (every code is a
legal guess). The encoder's mask is one ``(V,)`` array, the same for each of its three hint
steps: 1 marks a vocabulary word the rules allow as a hint in this game (within the hint limits
and not one of the keywords, ignoring case). While it gives its hints one a step, its
observation's current hints (indices 11-13) show the ones it has chosen this turn (to itself
only). The encoder's masks are read-only arrays that its observations share (a game's never
change; copy one to change it); a guesser's mask is its own.
``observation_space(agent)`` is the same object every call.

``state()`` is the global state for centralised critics (``state_space``, the observation
vector's ``Box``): the observation layout with nothing hidden (keywords, the current code) and
index 1 the phase (0 over, 1 hints, 2 guess).

Action
------
The encoder gives ``{"hints": [str, str, str]}`` or three hint-vocabulary indices at the first
of its hint steps, or one index of ``Discrete(V)`` per step (a hint the mask forbids becomes
``"no_hint"``, flagged at that step); a guesser a
``Discrete(24)`` index, ``{"guess": [d1, d2, d3]}`` or ``{"guess": "X-Y-Z"}``. A guess with a
repeated digit or a digit outside 1-4 is not a code and is a ``ValueError``, as is any malformed
action (wrong type, a number of hints other than 3, an index outside the space): the error names
the agent, the expected form and what it got, and nothing changes. A well-formed hint that
breaks a rule (empty, too many words or characters, equal to a keyword once folded) is
replaced by ``"no_hint"`` before anyone sees it, and ``infos["encoder"]["invalid_action"] =
{"reason": ..., "fallback": [the hints played]}``.

Rewards
-------
0 until the game ends (unless ``turn_rewards`` shapes each reveal, above); then encoder -1, decoder -1, interceptor +1 if the interceptor won (two
interceptions or two miscommunications, ending ``intercept``, ``miscomm`` or ``both``), and
+1, +1, -1 if the team survived ``max_turns`` turns (``survived``).

Version History
---------------
* v0: first version; rules and seeds as the Decrypto benchmark's reference implementation. A
  ``rules`` message opens every episode. Since added, with defaults that leave every game as
  it was: the ``hint_rules`` option; infos of immutable sequences (tuples where they were
  lists: a seat that changed its info changed every seat's); hints compared with the keywords
  after Unicode folding (``protocol.fold``: NFKC, invisible characters removed, Cyrillic and
  Greek look-alike letters read as Latin), under both hint rules. Still v0: a hint of ASCII
  characters folds exactly as it was compared before (case-folded, stripped), so only a hint
  with other characters can be judged differently, one that spelled a keyword (or, under the
  board game's rules, repeated a hint) in disguise; the bundled keyword and hint lists are
  ASCII, and every game whose hints are too replays unchanged. The encoder's RL action became
  one hint a step, ``Discrete(V)`` with a flat ``(V,)`` mask (it was ``MultiDiscrete([V, V, V])``
  with a tuple of three masks; three indices at once are still accepted), and a seat without a
  decision may play the no-op 0: the rules, the bus and every record of an agent giving its
  hints at once are unchanged. The ``turn_rewards`` option (off by default).
"""

from __future__ import annotations

from socialsim.envs.aec import entry_points
from socialsim.envs.decrypto.env import DecryptoEnv

raw_env, env, parallel_env = entry_points(DecryptoEnv)

__all__ = ["DecryptoEnv", "env", "parallel_env", "raw_env"]
