"""The Ray backend: episodes played as Ray tasks, on a Ray of its own or on a running cluster.

``backend = "ray"`` in an experiment (``pip install 'socialsim[ray]'``, which brings Ray's
client for ``ray://`` addresses too). Which Ray plays, said in one line before anything else:

* ``RAY_ADDRESS`` (``socialsim run --ray-address ADDRESS`` sets it) names a cluster: its GCS
  (``HOST:PORT``, as ``ray start --head`` prints), its client server (``ray://HOST:10001``) or
  ``auto``. The driver connects before anything is written, within :data:`CONNECT_TIMEOUT_S`
  seconds (``SOCIALSIM_RAY_TIMEOUT`` changes it); an address where no cluster answers is a
  :class:`~socialsim.config.ConfigError` naming it (exit status 2).
* Without it, a local Ray of its own with ``workers`` CPUs, even when a cluster runs on the
  machine (set ``RAY_AUTH_MODE=disabled`` for it).

The workers import what the driver imports: the modules of the user's agent kinds
(``mypkg.agents:Tit``) and envs (``mypkg.my_env_v0``) that are not installed packages are
shipped with the job (Ray's ``py_modules``), so a module found through the driver's
``PYTHONPATH`` plays on every node. Socialsim itself, and installed packages, must be installed
on the nodes.

Each task plays up to ``max_concurrent`` episodes at once in its own event loop (scripted ones
without one) and returns their records as the lines it encoded; the driver, the only writer of
the log, writes them as tasks finish, without decoding them again, so a killed run resumes as
on the other backends. A task that fails (its worker died, a module it could not import) is
not retried by Ray: each of its episodes is logged as failed with the reason, and the next run
plays them again. An LLM seat's reply cache lives in the results directory, which the
cluster's workers must then see (a shared file system) or the seat's ``model.cache`` names a
path they do.
"""

from __future__ import annotations

import os
import site
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from socialsim import registry
from socialsim.config.schema import ConfigError
from socialsim.episode import failed_record
from socialsim.records import EpisodeRecord

#: seconds the driver waits for a cluster to answer before it refuses the address
CONNECT_TIMEOUT_S = 60.0


class _Lines:
    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.lines: list[tuple[str, str]] = []

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        self.lines.append((status, line))


def _play_batch(specs: Sequence[Any], directory: str | None) -> list[tuple[str, str]]:
    from socialsim.runner import play_specs

    log = _Lines(directory)
    play_specs(specs, log, max_concurrent=len(specs))
    return log.lines


def cluster_address() -> str | None:
    """The cluster ``RAY_ADDRESS`` names, ``None`` when it is unset or empty."""
    return (os.environ.get("RAY_ADDRESS") or "").strip() or None


def _timeout() -> float:
    text = os.environ.get("SOCIALSIM_RAY_TIMEOUT", "")
    try:
        return float(text) if text else CONNECT_TIMEOUT_S
    except ValueError:
        raise ConfigError(f"SOCIALSIM_RAY_TIMEOUT: seconds, got {text!r}") from None


def shipped_modules(specs: Sequence[Any]) -> list[str]:
    """The files and package folders of the user's agent and env modules that ``specs`` use and
    that no installed package holds: what the workers of a cluster cannot import otherwise."""
    names = set()
    for spec in specs:
        names.add(registry.env_module(spec.env_id).__name__)
        names.update(registry.agent_class(s["kind"]).__module__ for s in spec.seats.values())
    installed = [Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages())]
    paths = set()
    for top in {name.split(".")[0] for name in names} - {"socialsim"}:
        module = sys.modules.get(top)
        origin = getattr(module, "__file__", None)
        if origin is None:
            continue
        path = Path(origin).resolve()
        path = path.parent if hasattr(module, "__path__") else path  # a package: its folder
        if not any(path.is_relative_to(p) for p in installed):
            paths.add(str(path))
    return sorted(paths)


def _probe(address: str, timeout: float) -> None:
    """Refuse ``address`` at once when nothing listens there (``ray.init`` would retry for
    minutes)."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", or a form Ray resolves itself: ray.init's bounded wait decides
    try:
        socket.create_connection((host, int(port)), timeout=min(timeout, 5.0)).close()
    except OSError as error:
        raise ConfigError(
            f"RAY_ADDRESS (--ray-address) {address}: no Ray cluster answers there ({error}); "
            "start one (ray start --head) or name the address `ray start` printed"
        ) from None


def _bounded(init: Callable[[], Any], address: str, timeout: float) -> None:
    """``init()`` in a thread the driver waits for at most ``timeout`` seconds."""
    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            init()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the driver's thread
            outcome.append(error)

    thread = threading.Thread(target=connect, name="ray-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        raise ConfigError(
            f"RAY_ADDRESS (--ray-address) {address}: no Ray cluster answered within {timeout:g} s "
            "(SOCIALSIM_RAY_TIMEOUT sets the wait)"
        )
    if outcome[0] is not None:
        reason = str(outcome[0]).strip().splitlines()[0] if str(outcome[0]).strip() else ""
        raise ConfigError(
            f"RAY_ADDRESS (--ray-address) {address}: could not join the cluster: "
            f"{type(outcome[0]).__name__}: {reason}"
        )


def connect(specs: Sequence[Any], workers: int, say: Callable[[str], None]) -> bool:
    """Join the cluster ``RAY_ADDRESS`` names or start a local Ray, say which, and return
    whether this call did (and so must shut it down)."""
    import ray

    if ray.is_initialized():
        say("Ray: playing on the Ray this process has already joined")
        return False
    modules = shipped_modules(specs)
    runtime_env = {"py_modules": modules} if modules else None
    address = cluster_address()
    if address is None:
        cpus = max(1, workers)
        # address="local": a Ray of its own, never a cluster that runs on this machine
        ray.init(
            address="local",
            num_cpus=cpus,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env=runtime_env,
        )
        say(f"Ray: a local Ray of this run with {cpus} CPUs (RAY_ADDRESS names no cluster)")
        return True
    timeout = _timeout()
    _probe(address, timeout)
    options: dict[str, Any] = {"runtime_env": runtime_env}
    if not address.startswith("ray://"):  # Ray's client takes no driver options
        options["log_to_driver"] = False

    _bounded(lambda: ray.init(address=address, **options), address, timeout)
    cpus = int(ray.cluster_resources().get("CPU", 0))
    shipped = f", shipping {', '.join(Path(m).name for m in modules)}" if modules else ""
    say(f"Ray: the cluster at {address} (RAY_ADDRESS), {cpus} CPUs{shipped}")
    return True


@contextmanager
def ray_play(
    specs: Sequence[Any],
    max_concurrent: int = 1,
    workers: int = 1,
    say: Callable[[str], None] | None = None,
) -> Iterator[Callable[..., None]]:
    """A Ray joined (or started) on entering, before anything is written, and left on exit;
    yields ``play(specs, log, on_done=None)`` (see :func:`run_on_ray`)."""
    try:
        import ray
    except ModuleNotFoundError:
        raise ConfigError("backend: 'ray' needs Ray: pip install 'socialsim[ray]'") from None
    started = connect(specs, workers, say or (lambda line: print(line, file=sys.stderr)))
    try:
        yield lambda some, log, on_done=None: run_on_ray(some, log, max_concurrent, on_done)
    finally:
        if started:
            ray.shutdown()


def _task_failure(error: Exception) -> str:
    cause = getattr(error, "cause", None)  # a RayTaskError holds what the task raised
    shown = cause if isinstance(cause, BaseException) else error
    first = (str(shown).strip().splitlines() or [""])[0]
    return f"Ray task failed: {type(shown).__name__}: {first}"


def run_on_ray(specs: Sequence[Any], log: Any, max_concurrent: int = 1, on_done=None) -> None:
    """Play ``specs`` as Ray tasks of ``max_concurrent`` episodes each, appending to ``log``
    (on the Ray :func:`ray_play` joined)."""
    import ray

    # max_retries=0: a task whose worker died is a failed episode, retried by the next run
    task = ray.remote(num_cpus=1, max_retries=0)(_play_batch)
    size = max(1, max_concurrent)
    directory = str(log.directory) if log.directory is not None else None
    batches = {}
    for i in range(0, len(specs), size):
        batch = list(specs[i : i + size])
        batches[task.remote(batch, directory)] = batch
    refs = list(batches)
    try:
        while refs:
            done, refs = ray.wait(refs, num_returns=1)
            try:
                lines = ray.get(done[0])
            except ray.exceptions.RayError as error:
                reason = _task_failure(error)
                lines = [("failed", failed_record(s, reason).line()) for s in batches[done[0]]]
            for status, line in lines:
                log.write(line, status)
                if on_done is not None:
                    failed = None if status == "done" else EpisodeRecord.from_line(line)
                    on_done(status, failed)
    finally:  # on Ctrl-C too: nothing keeps playing for a log nobody writes
        for ref in refs:
            ray.cancel(ref, force=True)
