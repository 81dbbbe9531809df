"""``socialsim fork RUN --episode N --at TURN [--set PATH=VALUE ...] --out DIR [--offline]``:
play a recorded episode again up to turn ``TURN`` from its record, then go on with a change.

The prefix (the turns before ``TURN``) is played by the record's own agents, their model replies
coming from the run's reply cache (``llm_cache.sqlite``, copied to ``DIR``; it is keyed on the
request, so the prefix's requests are the recorded ones and make no call), and every step must
equal the recorded one (else the fork stops, naming the step). The agents' states (histories,
counters, seeded streams) are then those of the original at ``TURN``. From ``TURN`` on the
episode goes on with the changes ``--set`` made: ``seats.ID={kind = ...}`` (another agent), ``seats.ID.KEY`` or ``seats.*.KEY`` (another
model or option: a seat changed in the prefix would not replay it) and
``interventions=[...]`` (one of a turn before ``TURN`` is refused: it would change the prefix).

``--offline``: no model request at all; a reply that is not in the cache is an error naming the
seat, the decision and the call. The fork's directory is an ordinary results directory:
``episodes.jsonl`` and ``manifest.json`` (the origin's, one episode, and under ``fork`` what it
was forked from and what changed), so ``socialsim report DIR``, ``socialsim report RUN DIR`` and
``socialsim.load(DIR)`` read it. ``--cell`` takes the cell as any JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import dataclasses
import json
import shutil
import time
from pathlib import Path

from socialsim import records, registry
from socialsim.agent import RunContext
from socialsim.config.overrides import parse_value
from socialsim.config.schema import ConfigError
from socialsim.episode import Episode, EpisodeSpec, SeatError
from socialsim.interventions import check as check_intervention
from socialsim.llm.offline import OfflineMiss, offline
from socialsim.seeding import agent_seed

CACHE_FILE = "llm_cache.sqlite"


def cell_arg(text: str | None) -> str | None:
    """``--cell`` as the cell's id: any JSON of the cell (spaces after the colons, as
    ``json.dumps`` writes it, or none)."""
    if text is None:
        return None
    try:
        cell = json.loads(text)
    except ValueError:
        cell = None
    if not isinstance(cell, dict):
        raise ConfigError(
            f"--cell: expected the cell as a JSON object (as the record's 'cell'), got {text!r}"
        )
    return records.cell_id(cell)


def find_record(run: Path, episode: int, cell: str | None) -> records.EpisodeRecord:
    cell = cell_arg(cell)
    found = [
        r
        for r in records.read_records(run)
        if r.episode == episode and (cell is None or records.cell_id(r.cell) == cell)
    ]
    if not found and cell is not None:
        cells = ", ".join(sorted({records.cell_id(r.cell) for r in records.read_records(run)}))
        raise ConfigError(f"--cell {cell}: no done episode {episode} in it; the cells: {cells}")
    if not found:
        raise ConfigError(f"--episode: no done episode {episode} in {run}")
    if len(found) > 1:
        cells = ", ".join(records.cell_id(r.cell) for r in found)
        raise ConfigError(
            f"--episode {episode}: several cells hold it; name one with --cell ({cells})"
        )
    return found[0]


def fork_spec(
    record: records.EpisodeRecord, manifest: dict, sets: list[str], at: int
) -> EpisodeSpec:
    """The record's episode with the ``--set`` changes."""
    config = manifest.get("config", {})
    seats = copy.deepcopy(record.seats)
    interventions = list(record.cell.get("interventions", config.get("interventions", [])))
    for assignment in sets:
        path, sep, text = assignment.partition("=")
        keys = path.strip().split(".")
        value = parse_value(text.strip())
        if not sep or not keys[0]:
            raise ConfigError(f"--set: expected path.to.key=value, got {assignment!r}")
        if keys == ["interventions"]:
            if not isinstance(value, list):
                raise ConfigError(f"--set interventions: a list of tables, got {value!r}")
            for i, spec in enumerate(value):
                try:
                    check_intervention(i, spec, list(seats))
                except ValueError as error:
                    raise ConfigError(f"--set {error}") from None
                when = spec.get("round", spec.get("turn"))
                if when is not None and when < at:
                    raise ConfigError(
                        f"--set interventions[{i}].round: {when} is before --at {at}; it would "
                        "change the recorded prefix"
                    )
            interventions = value
        elif len(keys) == 2 and keys[0] == "seats" and isinstance(value, dict):
            if keys[1] not in seats or "kind" not in value:
                raise ConfigError(
                    f"--set {path}: a seat of {list(seats)} and a table with a 'kind', got {value!r}"
                )
            seats[keys[1]] = value
        elif len(keys) >= 3 and keys[0] == "seats":
            targets = list(seats) if keys[1] == "*" else [keys[1]]
            if keys[1] != "*" and keys[1] not in seats:
                raise ConfigError(f"--set {path}: no seat {keys[1]!r}; the seats are {list(seats)}")
            for seat in targets:
                table = seats[seat]
                for key in keys[2:-1]:
                    table = table.setdefault(key, {})
                table[keys[-1]] = value
        else:
            raise ConfigError(
                f"--set {path}: a fork changes seats.ID.KEY, seats.*.KEY or interventions"
            )
    return EpisodeSpec(
        env_id=record.env_id,
        seed=record.seed,
        seats=seats,
        env_kwargs=record.env_kwargs,
        form=record.form,
        episode=record.episode,
        cell=record.cell,
        experiment=record.experiment,
        probes=tuple(config.get("probes", ())),
        interventions=tuple(interventions),
    )


async def _play(episode: Episode, record: records.EpisodeRecord | None, at: int) -> int:
    """Let the agents decide until the episode ends or, with ``record``, until turn ``at``;
    then every prefix step must be the recorded one. Return the steps played."""
    count = 0
    while episode.deciding and (record is None or episode.turn() < at):
        deciding = list(episode.deciding)
        try:
            actions = await episode.achoose(deciding)
        except SeatError as error:
            if isinstance(error.error, OfflineMiss):
                info = episode.infos.get(error.seat) or {}
                raise ConfigError(
                    f"--offline: seat {error.seat} ({error.kind}), decision "
                    f"{info.get('decision')!r} at turn {episode.turn()}: {error.error}"
                ) from None
            raise
        episode.advance(actions)
        if record is not None:
            played = episode.steps[-1] if episode.steps else None
            recorded = record.steps[count] if count < len(record.steps) else None
            if played != recorded:
                raise ConfigError(
                    f"--at {at}: the record does not replay: step {count} (turn "
                    f"{(recorded or {}).get('turn')}) was {recorded}, the replay played {played}"
                )
        count += 1
    return count


def take_seats(episode: Episode, spec: EpisodeSpec, context: RunContext) -> None:
    """The seats ``spec`` changes take their new agents, each reading its whole inbox first."""
    changed = [a for a, seat in spec.seats.items() if episode.spec.seats.get(a) != seat]
    for agent_id in changed:
        agent = registry.build_agent(spec.seats[agent_id])
        agent.attach(context)
        agent.reset(agent_id, agent_id, agent_seed(spec.seed, agent_id))
        episode.agents[agent_id] = agent
        episode.bus.rewind(agent_id)
    episode.spec = spec


def fork(args: argparse.Namespace) -> int:
    run, out = Path(args.run), Path(args.out)
    record = find_record(run, args.episode, args.cell)
    manifest = records.read_manifest(run) or {}
    spec = fork_spec(record, manifest, args.set or [], args.at)
    # the prefix is played by the recorded seats; the changed ones take over at --at
    recorded = dataclasses.replace(spec, seats=record.seats)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--out: {out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):  # SQLite keeps recent writes beside the file
        if (run / f"{CACHE_FILE}{suffix}").exists():
            shutil.copyfile(run / f"{CACHE_FILE}{suffix}", out / f"{CACHE_FILE}{suffix}")
    started, t0 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.perf_counter()
    context = RunContext(directory=out)
    episode = Episode(recorded, run=context)

    async def play() -> int:
        episode.start()
        prefix = await _play(episode, record, args.at)  # the recorded steps, replies from cache
        take_seats(episode, spec, context)
        await _play(episode, None, args.at)
        return prefix

    with offline() if args.offline else contextlib.nullcontext():
        prefix = asyncio.run(play())
    line = episode.line("done", None, started, time.perf_counter() - t0)
    (out / records.EPISODES).write_text(line + "\n", encoding="utf-8")
    facts = {
        "run": str(run),
        "episode": args.episode,
        "cell": record.cell,
        "at": args.at,
        "set": args.set or [],
        "offline": args.offline,
        "prefix_steps": prefix,
    }
    # an ordinary results directory: the origin's manifest, one episode, what it was forked from
    records.write_manifest(out, {**manifest, "episodes_total": 1, "fork": facts})
    print(f"fork: {prefix} recorded steps replayed, then played from turn {args.at} -> {out}")
    return 0


def add_fork_command(sub) -> None:
    cmd = sub.add_parser(
        "fork", help="replay a recorded episode up to a turn, then go on with a change"
    )
    cmd.add_argument("run", help="a results directory")
    cmd.add_argument("--episode", type=int, required=True, help="the episode's index")
    cmd.add_argument("--cell", help="the cell's id (its JSON) when several cells hold the episode")
    cmd.add_argument("--at", type=int, required=True, help="the first turn the agents decide again")
    cmd.add_argument(
        "--set",
        action="append",
        metavar="PATH=VALUE",
        help="seats.ID={kind=...}, seats.ID.KEY, seats.*.KEY or interventions (repeatable; VALUE is TOML)",
    )
    cmd.add_argument("--out", required=True, help="the fork's results directory (new or empty)")
    cmd.add_argument(
        "--offline",
        action="store_true",
        help="no model request: a reply not in the cache is an error",
    )
    cmd.set_defaults(func=fork)
