"""An experiment file with an ``[evolution]`` table (:mod:`socialsim.config.evolution`), played
generation by generation by ``socialsim run``: the generations of
:mod:`socialsim.society.episodes`, for every grid cell and replicate, with full records.

Replicate ``r`` of a cell is the run seeded ``s = seed + r`` (the file's ``episodes`` is the
number of replicates); its generation ``g`` is the episode with seed ``generation_seed(s, g)``,
as :func:`~socialsim.society.episodes.evolve_in_env` plays it. Generation 0's seats are the
file's. Generation ``g + 1``'s seats are a pure function of generation ``g``'s record and the
seed: the rule of the ``[evolution]`` table applied to each seat's strategy (its ``kind``) and
fitness (its final ``resources`` in the record's summary, or its ``returns``), drawing from
``update_generator(generation_seed(s, g))``. So a run killed anywhere recomputes every
population from the log and plays only the episodes the log lacks: nothing is lost or doubled.

Every record names its generation in its ``cell`` (``{**grid assignment, "generation": g}``;
``episode`` is the replicate) and each seat's lineage in its seat spec: ``"parent"``, the seat of
the generation before whose strategy it inherited (itself when it survived; ``None`` in
generation 0). A mutant names the parent it would have copied; its ``kind`` differs from it.
A seat of a kind that keeps its seat (``rl``, ``human``) plays every generation as the file
gives it, its own parent: the rule selects among the other seats only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from socialsim import log_index, record_checks
from socialsim.config import Experiment
from socialsim.config.evolution import evolution_rule, keeps_seat
from socialsim.envs.culture.protocol import STRATEGY as STRATEGY_KIND
from socialsim.envs.culture.protocol import strategy_texts
from socialsim.record_checks import Identities, not_its_spec
from socialsim.records import EPISODES, EpisodeRecord, LogScan, cell_id, warn_bad_lines
from socialsim.runner import EpisodeSpec
from socialsim.society.generations import generation_seed, update_generator
from socialsim.society.population import STRATEGIES

#: the seat-spec key naming a seat's parent (the registry builds agents without it)
PARENT = "parent"
GENERATION = "generation"

#: (grid assignment's cell id, replicate) -> seat -> seat spec
Populations = Mapping[tuple[str, int], Mapping[str, Mapping[str, Any]]]


@dataclass(frozen=True)
class GenerationExperiment(Experiment):
    """One generation of an evolution experiment: its specs are generation ``generation``'s,
    the seats of each cell and replicate taken from ``populations`` (none for generation 0:
    the file's seats); ``cells`` are those still evolving; ``episodes_total`` counts every
    generation's episodes (the manifest's)."""

    generation: int = 0
    populations: Populations | None = None
    episodes_total: int = 0

    @property
    def name(self) -> str:  # what a run's status lines call it
        return f"{self.config['name']}, generation {self.generation}"

    def specs(self) -> list[EpisodeSpec]:
        g, populations = self.generation, self.populations
        specs = []
        for spec in super().specs():
            if populations is None:
                seats = {seat: {**s, PARENT: None} for seat, s in spec.seats.items()}
            else:
                seats = populations[cell_id(dict(spec.cell)), spec.episode]
            specs.append(
                replace(
                    spec,
                    seed=generation_seed(spec.seed, g),
                    seats=seats,
                    cell={**spec.cell, GENERATION: g},
                )
            )
        return specs


def generations(experiment: Experiment) -> int:
    """How many generations the run plays: its cells' most (a grid may vary them)."""
    return max(config["evolution"]["generations"] for _, config in experiment.cells)


def play_generations(
    experiment: Experiment,
    out: Any,
    stage: Callable[[Experiment, LogScan, list[str]], Any],
    check_only: bool = False,
) -> list[Any]:
    """Play every generation of ``experiment`` into the directory ``out``: ``stage(generation,
    scan, written)`` runs one (``socialsim.results``' run of one experiment, reading the log
    as ``scan`` holds it and putting the lines it logs in ``written``) and returns its result
    (``.failed``: its failed records). The log is read once: each generation is born of the
    done records of the one before, as read or as just logged, so a rerun or a resume costs
    one read plus what is left to play: the records are read as :func:`head` keeps them, those
    the log's index vouches for taken from it (:mod:`socialsim.log_index`: its hash, not a
    parse), and the index written anew after each generation that logged. Stops after the
    first stage with failed episodes (or after the first, ``check_only``: the next one would be
    born of its records).

    A generation's specs are known only once the generation before is read, so its logged
    records are checked against them then (:func:`set_aside_strangers`): one that is not the
    record of its key's spec (another seed, experiment, env option or population) is put in
    ``scan.bad`` with its reason, as an ordinary run's read puts it, and its episode is played
    again; the next generation is born of the record played, never of the stranger."""
    results = []
    scan = log_index.read(out, head, HEAD)
    logged = by_generation(scan.records)
    for g in range(generations(experiment)):
        before = [
            EpisodeRecord.from_json(d) for d in logged.pop(g - 1, []) if d["status"] == "done"
        ]
        this = generation(experiment, g, before)
        mine = logged.setdefault(g, [])
        if mine:
            mine[:] = set_aside_strangers(this.specs(), mine, scan, out)
        written: list[str] = []
        result = stage(this, scan, written)
        results.append(result)
        if not check_only:  # what this generation logged; the log holds only records now
            scan.bad, scan.torn = [], b""
            for data in (head(orjson.loads(line)) for line in written):
                scan.records.append(data)
                if data["status"] == "done":
                    scan.done.add((cell_id(data["cell"]), data["episode"]))
                mine.append(data)
            log_index.write(out, scan, HEAD)
        if check_only or result.failed:
            break
    return results


#: the name of :func:`head` in the log's index (a new one when the head changes)
HEAD = "generations-1"


def head(data: Mapping[str, Any]) -> dict[str, Any]:
    """What a generation is born of, of a record's line: its identity, key, status and returns,
    of its summary the seats and their resources (the fitness), of its messages the strategy
    texts (:func:`next_seats` reads nothing else)."""
    kept = {
        k: data[k] for k in (*record_checks.REQUIRED, "status", "error", "returns") if k in data
    }
    summary = data.get("summary", {})
    kept["summary"] = {k: summary[k] for k in ("agents", "resources") if k in summary}
    kept["messages"] = [m for m in data.get("messages", []) if m.get("kind") == STRATEGY_KIND]
    return kept


def by_generation(lines: Sequence[Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]]:
    """The log's records (as read, plain dicts) by their generation: the one read of a run's
    log that every generation is born of (a line naming no generation is no generation's)."""
    logged: dict[int, list[Mapping[str, Any]]] = {}
    for data in lines:
        g = data["cell"].get(GENERATION)
        if isinstance(g, int):
            logged.setdefault(g, []).append(data)
    return logged


def set_aside_strangers(
    specs: Sequence[EpisodeSpec], logged: list[Mapping[str, Any]], scan: LogScan, out: Any
) -> list[Mapping[str, Any]]:
    """``logged`` (one generation's records) less those that are not the record of their key's
    spec among ``specs``, each put in ``scan.bad`` with its line and why
    (:func:`~socialsim.record_checks.not_its_spec`) and its key taken out of ``scan.done``: the
    stage's run then sets it aside as it does any bad line and plays its episode again. A key
    with no spec here (a cell no longer evolving) is not checked, as in an ordinary run."""
    expected = {spec.key: spec for spec in specs}
    identities = Identities()
    kept, strangers = [], []
    for data in logged:
        key = (cell_id(data["cell"]), data["episode"])
        spec = expected.get(key)
        why = None if spec is None else not_its_spec(data, spec, identities)
        if why is None:
            kept.append(data)
        else:
            strangers.append((data, why))
    if not strangers:
        return kept
    # the line as it is in the file now (an earlier generation's run may have set lines aside)
    found: dict[bytes, list[tuple[int, bytes]]] = {}
    path = Path(out) / EPISODES
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                break  # torn: the scan has it already
            try:
                parsed = orjson.loads(line)
            except ValueError:  # not JSON: the scan has it already
                continue
            if isinstance(parsed, dict):  # (other JSON is no record: the scan has it too)
                as_kept = orjson.dumps(head(parsed))  # as the scan holds it
                found.setdefault(as_kept, []).append((number, line[:-1]))
    done = {(cell_id(d["cell"]), d["episode"]) for d in kept if d["status"] == "done"}
    bad = []
    for data, why in strangers:
        if (
            data["status"] == "done"
            and (key := (cell_id(data["cell"]), data["episode"])) not in done
        ):
            scan.done.discard(key)
        bad += [(number, line, why) for number, line in found.pop(orjson.dumps(data), [])]
    bad.sort()
    scan.bad += bad
    if bad:
        warn_bad_lines(path, bad)
    return kept


def plan(experiment: Experiment, done: set[tuple[str, int]]) -> tuple[int, list[EpisodeSpec]]:
    """What ``socialsim run --check`` plans: every generation's episodes (the count is known
    before any is played; only the seats wait for the generation before) and, for each one
    ``done`` lacks, a stand-in for the estimate: its cell and replicate's spec as the file
    gives its seats."""
    total, left = 0, []
    base = Experiment(experiment.config, experiment.cells, experiment.notes)
    generations_of = {
        cell_id(dict(cell)): config["evolution"]["generations"] for cell, config in experiment.cells
    }
    for spec in base.specs():
        for g in range(generations_of[cell_id(dict(spec.cell))]):
            total += 1
            if (cell_id({**spec.cell, GENERATION: g}), spec.episode) not in done:
                left.append(spec)
    return total, left


def generation(
    experiment: Experiment, g: int, records: Sequence[EpisodeRecord] = ()
) -> GenerationExperiment:
    """Generation ``g`` of ``experiment``, from generation ``g - 1``'s done ``records`` (any
    others are passed over); a ``ValueError`` names a cell and replicate without one."""
    living = [
        (c, config) for c, config in experiment.cells if config["evolution"]["generations"] > g
    ]
    stage = GenerationExperiment(
        experiment.config,
        living,
        experiment.notes,
        generation=g,
        episodes_total=sum(
            config.get("episodes", 1) * config["evolution"]["generations"]
            for _, config in experiment.cells
        ),
    )
    if g == 0:
        return stage
    before = {r.key: r for r in records if r.status == "done" and r.cell.get(GENERATION) == g - 1}
    populations = {}
    for cell, config in living:
        rule = evolution_rule(config["evolution"])
        fitness = config["evolution"].get("fitness", "resources")
        for replicate in range(config.get("episodes", 1)):
            record = before.get((cell_id({**cell, GENERATION: g - 1}), replicate))
            if record is None:
                raise ValueError(
                    f"generation {g - 1} of cell {cell or '(the file)'}, replicate "
                    f"{replicate}: no done record; its next generation cannot be born"
                )
            populations[cell_id(dict(cell)), replicate] = next_seats(record, rule, fitness)
    return replace(stage, populations=populations)


def next_seats(record: EpisodeRecord, rule: Any, fitness: str) -> dict[str, dict[str, Any]]:
    """The seats of the generation after ``record``'s: ``rule`` (an ``Evolution``) applied to
    its evolving seats' strategies and fitness, drawing from the generation's update Generator.
    A seat whose kind keeps its seat (``rl``, ``human``: :func:`keeps_seat`) is passed over by
    the rule, so it is neither selected out nor anyone's parent; it keeps its spec and is its
    own parent. The rule sees the other seats only, in seat order, as if they were all."""
    seats = list(record.summary["agents"])
    kept = [seat for seat in seats if keeps_seat(record.seats[seat]["kind"])]
    evolving = [seat for seat in seats if seat not in kept]
    stock = record.summary["resources"] if fitness == "resources" else record.returns
    values = np.asarray([float(stock[seat]) for seat in evolving])
    if any(record.seats[seat]["kind"] not in STRATEGIES for seat in evolving):
        new = _inherited_whole(record, evolving, rule, values)
    else:
        codes = np.asarray([STRATEGIES.index(record.seats[seat]["kind"]) for seat in evolving])
        born = rule.update(codes, values, update_generator(record.seed))
        new = {
            seat: {"kind": STRATEGIES[code], PARENT: evolving[parent]}
            for seat, code, parent in zip(evolving, born.strategies, born.parents, strict=True)
        }
    for seat in kept:
        new[seat] = {**{k: v for k, v in record.seats[seat].items() if k != PARENT}, PARENT: seat}
    return {seat: new[seat] for seat in seats}


#: a seat spec's keys of the strategy texts: its own (a survivor's), and those it read at birth
STRATEGY, SURVIVORS = "strategy", "survivors"


def _inherited_whole(
    record: EpisodeRecord, seats: list[str], rule: Any, values: np.ndarray
) -> dict[str, dict]:
    """``seats``, of kinds inherited whole (the culture donors): ``rule`` decides only who is
    whose parent (the update's strategies are not read, so mutation changes nothing). A
    survivor keeps its spec; a newborn takes its parent's. A kind whose class
    ``reads_strategies`` (the LLM donors) is given texts: a survivor its own (``strategy``: it
    does not write anew), a newborn the survivors' (``survivors``, in seat order), read from
    the record's bus."""
    from socialsim.registry import agent_class

    born = rule.update(np.zeros(len(seats), dtype=np.intp), values, update_generator(record.seed))
    parents = [seats[k] for k in born.parents]
    texts = strategy_texts(record.messages)
    kept = [
        texts[s] for s, parent in zip(seats, parents, strict=True) if s == parent and s in texts
    ]
    new = {}
    for seat, parent in zip(seats, parents, strict=True):
        spec = {
            k: v for k, v in record.seats[parent].items() if k not in (PARENT, STRATEGY, SURVIVORS)
        }
        if getattr(agent_class(spec["kind"]), "reads_strategies", False):
            if seat == parent and seat in texts:
                spec[STRATEGY] = texts[seat]
            else:
                spec[SURVIVORS] = kept
        new[seat] = {**spec, PARENT: parent}
    return new
