"""Who meets whom in the gossip games: pure functions of the agent count and a numpy Generator.

A schedule is a list of rounds, each a list of ``(first, second)`` agent-index pairs (donor and
recipient, investor and responder, seller and buyer, or two players).
"""

from __future__ import annotations

import math
from functools import cache
from itertools import combinations
from typing import Any

import numpy as np
from socialsim.envs.gossip.options import default_random_rounds

Pair = tuple[int, int]
Schedule = list[list[Pair]]


@cache
def _align_pairs(n: int) -> tuple[Pair, ...]:
    """The reference's donor->recipient order; see :func:`align_schedule`.

    The depth-first search runs on an explicit stack (N(N-1)/2 levels would pass Python's
    recursion limit from N = 46).
    """
    pairs = list(combinations(range(n), 2))
    quota = math.ceil((n - 1) / 2)
    donor_count = [0] * n
    recipient_count = [0] * n
    last = [""] * n  # "D", "R" or "" (not played yet)
    used = [False] * len(pairs)

    def next_move(start: int, turn: int) -> tuple[int, int] | None:
        # Every level scans all pairs from the first one: the reference's search does, and
        # the order it finds depends on it. ``turn`` 0 is (a, b), 1 is (b, a).
        for index in range(start, len(pairs)):
            if used[index]:
                continue
            a, b = pairs[index]
            for orientation in range(turn if index == start else 0, 2):
                donor, recipient = (a, b) if orientation == 0 else (b, a)
                if donor_count[donor] >= quota or recipient_count[recipient] >= quota:
                    continue
                if last[donor] == "D" or last[recipient] == "R":
                    continue
                return index, orientation
        return None

    stack: list[tuple[int, int, str, str]] = []  # (pair index, orientation, saved last roles)
    start, turn = 0, 0
    while len(stack) < len(pairs):
        move = next_move(start, turn)
        if move is None:
            if not stack:  # pragma: no cover - the search succeeds for every n the tests reach
                raise ValueError(f"n_agents: no alternating schedule exists for {n} agents")
            index, orientation, saved_donor, saved_recipient = stack.pop()
            a, b = pairs[index]
            donor, recipient = (a, b) if orientation == 0 else (b, a)
            used[index] = False
            donor_count[donor] -= 1
            recipient_count[recipient] -= 1
            last[donor], last[recipient] = saved_donor, saved_recipient
            start, turn = index, orientation + 1
            continue
        index, orientation = move
        a, b = pairs[index]
        donor, recipient = (a, b) if orientation == 0 else (b, a)
        stack.append((index, orientation, last[donor], last[recipient]))
        used[index] = True
        donor_count[donor] += 1
        recipient_count[recipient] += 1
        last[donor], last[recipient] = "D", "R"
        start, turn = 0, 0
    return tuple(
        (a, b) if o == 0 else (b, a) for a, b, o in ((*pairs[i], o) for i, o, _, _ in stack)
    )


def align_schedule(n: int) -> Schedule:
    """The reference (ALIGN) schedule of the donation and trust games: one pair per round.

    Every unordered pair meets exactly once; each agent's appearances alternate between the
    first role (donor, investor) and the second; nobody takes a role more than
    ``ceil((n - 1) / 2)`` times. The order is the first one a depth-first search finds that
    scans the pairs in ``itertools.combinations`` order and tries ``(a, b)`` before ``(b, a)``.
    """
    return [[pair] for pair in _align_pairs(n)]


def circle_schedule(n: int) -> Schedule:
    """Round-robin by the circle method (the reference's prisoner's dilemma order).

    A bye is added for odd ``n``. Each of the ``m - 1`` circle rounds pairs position ``i`` with
    position ``-(i + 1)``, then everyone but the first rotates one place; the circle rounds are
    flattened to one match per round.
    """
    players: list[int | None] = list(range(n))
    if n % 2:
        players.append(None)
    m = len(players)
    order: Schedule = []
    for _ in range(m - 1):
        for i in range(m // 2):
            a, b = players[i], players[-(i + 1)]
            if a is not None and b is not None:
                order.append([(a, b)])
        players = [players[0], players[-1], *players[1:-1]]
    return order


def isolated_entrant_schedule(n: int) -> Schedule:
    """The reference's entrant schedule: the entrant (the last index) meets each other agent
    once, in index order, taking the first role (donor) in its 1st, 3rd... match and the second
    role in the others; the other agents never meet each other."""
    entrant = n - 1
    return [[(entrant, i) if i % 2 == 0 else (i, entrant)] for i in range(n - 1)]


def random_schedule(
    n: int,
    rounds: int,
    rng: np.random.Generator,
    pairs_per_round: int | None = None,
    entrant_round: int | None = None,
) -> Schedule:
    """Seeded random matching: each round a uniformly random set of disjoint ordered pairs.

    ``pairs_per_round`` defaults to as many as fit. With ``entrant_round`` the last agent sits
    out of rounds ``1 .. entrant_round - 1`` and is matched like everyone else from then on.
    """
    # One shuffle a round, of n - 1 agents before the entry and of n after: ``permuted`` along
    # the rows of a block draws exactly what one ``permutation`` a round would, in one call.
    entry = 1 if entrant_round is None else min(max(entrant_round, 1), rounds + 1)
    order: Schedule = []
    for width, count in ((n - 1, entry - 1), (n, rounds + 1 - entry)):
        if count <= 0:
            continue
        fit = width // 2
        pairs = fit if pairs_per_round is None else min(pairs_per_round, fit)
        rows = np.arange(width)[np.newaxis].repeat(count, axis=0)
        drawn = iter(rng.permuted(rows, axis=1)[:, : 2 * pairs].ravel().tolist())
        if pairs == 0:  # nobody meets (one agent alone before the entry), the shuffles drawn
            order += [[] for _ in range(count)]
            continue
        matches = zip(drawn, drawn, strict=True)  # the agents drawn pair up, first and second
        order += map(list, zip(*[matches] * pairs, strict=True))  # each ``pairs`` make a round
    return order


def market_schedule(n_sellers: int, n_buyers: int, rng: np.random.Generator) -> Schedule:
    """Every seller meets every buyer once, one pair per round, in a seeded shuffled order.

    Sellers are indices ``0 .. n_sellers - 1`` and buyers the rest (the reference shuffles with
    an unseeded generator; here the episode seed fixes the order).
    """
    pairs = [(s, n_sellers + b) for s in range(n_sellers) for b in range(n_buyers)]
    return [[pairs[int(i)]] for i in rng.permutation(len(pairs))]


def random_market_schedule(
    n_sellers: int, n_buyers: int, rounds: int, rng: np.random.Generator
) -> Schedule:
    """Each round every seller meets a distinct random buyer (as many pairs as fit)."""
    order: Schedule = []
    count = min(n_sellers, n_buyers)
    for _ in range(rounds):
        sellers = rng.permutation(n_sellers)[:count]
        buyers = rng.permutation(n_buyers)[:count]
        order.append([(int(s), n_sellers + int(b)) for s, b in zip(sellers, buyers, strict=True)])
    return order


def pairwise_schedule(game: Any, rng: np.random.Generator, reference) -> Schedule:
    """The schedule of a game among ``n`` peers (donation, prisoners, trust), by its options."""
    n = game.n
    if game.entrant == "isolated":
        order = isolated_entrant_schedule(n)
    elif game.schedule_name == "random":
        rounds = game.rounds if game.rounds is not None else default_random_rounds(n)
        entry = game.entrant_round if game.entrant == "joins" else None
        return random_schedule(n, rounds, rng, game.pairs_per_round, entry)
    else:
        order = reference(n)
    return order[: game.rounds] if game.rounds is not None else order
