"""A Gymnasium vector env whose envs run in a few worker processes, several envs per worker.

``ProcessVectorEnv([make_view] * 8, workers=2)`` is a ``gymnasium.vector.VectorEnv`` of eight
envs in two processes; each worker steps its four in a ``gymnasium.vector.SyncVectorEnv``
(next-step autoreset, as Gymnasium's vector envs do), so a vector step costs one pipe round trip
per *worker*, where ``AsyncVectorEnv`` pays one per env.

Why: a seat view's step is short (under a millisecond in a gossip game), and
``AsyncVectorEnv``'s work per env and step (a pipe round trip carrying a pickled numpy integer,
the observation written to shared memory, the info merged key by key, a process woken) costs a
large share of it; see ``experiments/bench/seat_view_bench.py`` for the figures. Batching the envs per worker
divides that cost by the envs per worker. The observations and infos come back pickled (a seat
view's are small), batched per worker as ``SyncVectorEnv`` batches them, and are joined in env
order.

``reset(seed=s)`` seeds env ``i`` with ``s + i`` (or takes a list of seeds), as Gymnasium's
vector envs do. The env functions must be picklable under the multiprocessing ``context``
(any callable with the default ``fork`` on Linux).
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space


def _worker(pipe, env_fns: Sequence[Callable[[], gymnasium.Env]]) -> None:
    envs = None
    try:
        envs = SyncVectorEnv(list(env_fns), autoreset_mode=AutoresetMode.NEXT_STEP)
        pipe.send(("ok", None))
        while True:
            command, data = pipe.recv()
            if command == "step":
                pipe.send(("ok", envs.step(data)))
            elif command == "reset":
                seeds, options = data
                pipe.send(("ok", envs.reset(seed=seeds, options=options)))
            elif command == "close":
                break
    except (KeyboardInterrupt, EOFError):
        pass
    except Exception:  # noqa: BLE001 - the main process raises it with the worker's traceback
        pipe.send(("error", traceback.format_exc()))
    finally:
        if envs is not None:
            envs.close()
        pipe.close()


def _join(parts: Sequence[Any]) -> Any:
    """Batches of the workers (arrays, or dicts and tuples of them) joined along the first axis."""
    first = parts[0]
    if isinstance(first, dict):
        return {key: _join([part[key] for part in parts]) for key in first}
    if isinstance(first, tuple):
        return tuple(_join([part[i] for part in parts]) for i in range(len(first)))
    return np.concatenate(parts)


def _join_infos(parts: Sequence[dict[str, Any]], sizes: Sequence[int]) -> dict[str, Any]:
    """Merged infos of the workers joined; a key some worker lacks is masked off there."""
    keys = [key for key in dict.fromkeys(k for part in parts for k in part) if key[:1] != "_"]
    out: dict[str, Any] = {}
    for key in keys:
        values = [part.get(key) for part in parts]
        masks = [
            part[f"_{key}"] if key in part else np.zeros(size, dtype=bool)
            for part, size in zip(parts, sizes, strict=True)
        ]
        if any(isinstance(v, dict) for v in values):
            out[key] = _join_infos([v if isinstance(v, dict) else {} for v in values], sizes)
        else:
            arrays = [
                np.asarray(v) if v is not None else np.full(size, None, dtype=object)
                for v, size in zip(values, sizes, strict=True)
            ]
            if len({a.dtype for a in arrays}) > 1:
                arrays = [a.astype(object) for a in arrays]
            out[key] = np.concatenate(arrays)
        out[f"_{key}"] = np.concatenate(masks)
    return out


class ProcessVectorEnv(VectorEnv):
    """The envs of ``env_fns`` in ``workers`` processes (see the module docstring)."""

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        workers: int = 2,
        context: str | None = None,
    ):
        if not env_fns:
            raise ValueError("env_fns: give at least one env function")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers: must be an integer >= 1, got {workers!r}")
        probe = env_fns[0]()
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        self.metadata = {
            **getattr(probe, "metadata", {}),
            "autoreset_mode": AutoresetMode.NEXT_STEP,
        }
        self.render_mode = probe.render_mode
        probe.close()
        self.num_envs = len(env_fns)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._chunks = [c for c in np.array_split(np.arange(self.num_envs), workers) if len(c)]
        self._sizes = [len(c) for c in self._chunks]
        ctx = multiprocessing.get_context(context)
        self._pipes, self._processes = [], []
        for chunk in self._chunks:
            parent, child = ctx.Pipe()
            process = ctx.Process(
                target=_worker, args=(child, [env_fns[i] for i in chunk]), daemon=True
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
        self._receive()

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options=None):
        if seed is None or isinstance(seed, (int, np.integer)):
            seeds = [None if seed is None else int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: expected {self.num_envs} seeds, got {len(seeds)}")
        for pipe, chunk in zip(self._pipes, self._chunks, strict=True):
            pipe.send(("reset", ([seeds[i] for i in chunk], options)))
        results = self._receive()
        return _join([r[0] for r in results]), _join_infos([r[1] for r in results], self._sizes)

    def step(self, actions):
        actions = np.asarray(actions)
        for pipe, chunk in zip(self._pipes, self._chunks, strict=True):
            pipe.send(("step", actions[chunk]))
        results = self._receive()
        observations = _join([r[0] for r in results])
        rewards, terminations, truncations = (
            np.concatenate([r[k] for r in results]) for k in (1, 2, 3)
        )
        infos = _join_infos([r[4] for r in results], self._sizes)
        return observations, rewards, terminations, truncations, infos

    def close_extras(self, **kwargs: Any) -> None:
        for pipe in self._pipes:
            try:
                pipe.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
        for pipe in self._pipes:
            pipe.close()
        self._pipes, self._processes = [], []

    def _receive(self) -> list[Any]:
        replies = [pipe.recv() for pipe in self._pipes]
        errors = [payload for status, payload in replies if status == "error"]
        if errors:
            raise RuntimeError(f"a ProcessVectorEnv worker failed:\n{errors[0]}")
        return [payload for _, payload in replies]
