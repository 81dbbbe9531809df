"""The Ray backend against a real cluster, as a lab runs one: `ray start --head` on 127.0.0.1
(two CPUs, no dashboard), started by this module and stopped after it."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from socialsim.cli import main
from socialsim.records import read_failures, read_records

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

PENNIES = """\
name = "cluster"
episodes = 3
[env]
id = "matching_pennies_v0"
kwargs = {{ rounds = 5 }}
[seats.matcher]
kind = "{matcher}"
[seats.mismatcher]
kind = "pennies_copycat"
"""

#: a lab's own agents, in a folder the cluster's nodes know nothing of
LAB_AGENTS = '''\
import os

from socialsim.agent import Agent


class Saint(Agent):
    """Always heads: plays the same on the driver and on any worker."""

    def act(self, observation, messages, info):
        return 0


class DiesOnAWorker(Agent):
    """Heads on the driver (the check episode); kills the Ray worker that plays it."""

    def act(self, observation, messages, info):
        import ray

        if ray.is_initialized() and ray.get_runtime_context().worker.mode == ray.WORKER_MODE:
            os._exit(3)
        return 0
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen) -> None:
    for _ in range(240):  # a head on two busy cores can take a minute to listen
        if process.poll() is not None:
            raise RuntimeError(f"ray start exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"no Ray head listening on port {port}")


@pytest.fixture(scope="module")
def cluster():
    """``(gcs address, client address, its RAY_TMPDIR)`` of a head started here; its processes are ended with
    it (``--block``: ending the head's own process group stops what it started, and no other
    Ray on this machine)."""
    gcs, client, agent = free_port(), free_port(), free_port()
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must fit
    # RAY_TMPDIR, not --temp-dir: ray.init() of a process given the same finds this cluster
    # as the machine's own, and no other Ray of the machine sees it
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": temp}
    env.pop("RAY_ADDRESS", None)
    head = subprocess.Popen(
        [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start", "--head"]
        + [f"--port={gcs}", f"--ray-client-server-port={client}", "--num-cpus=2"]
        + ["--include-dashboard=false", "--node-ip-address=127.0.0.1"]
        # a port of its own for the runtime-env agent: the client server is told it at its
        # start (with a port chosen later, a busy head told it port 0 and no client joined)
        + [f"--runtime-env-agent-port={agent}"]
        + ["--disable-usage-stats", "--block"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(gcs, head)
        wait_for(client, head)
        yield f"127.0.0.1:{gcs}", f"ray://127.0.0.1:{client}", temp
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # the head's own group, by its id
        try:
            head.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        try:  # what outlived the head (its GCS server can): the same group
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def experiment(tmp_path, monkeypatch):
    """Writes a pennies experiment whose matcher is ``matcher``; the lab's agents module is
    importable through the driver's path only."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_ADDRESS", "")  # set by --ray-address; monkeypatch restores it
    # a client connection starts a server process of its own: slow on two busy cores
    monkeypatch.setenv("SOCIALSIM_RAY_TIMEOUT", "180")
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "labagents_32.py").write_text(LAB_AGENTS)
    monkeypatch.syspath_prepend(str(lab))

    def write(matcher: str):
        path = tmp_path / f"{matcher.replace(':', '_')}.toml"
        path.write_text(PENNIES.format(matcher=matcher))
        return path

    return write


def contents(directory):
    return [record.content() for record in read_records(directory)]


def run(path, out, address):
    try:
        return main(["run", str(path), "--out", str(out), "--ray-address", address, "--quiet"])
    finally:
        # --ray-address sets RAY_ADDRESS in this process: a test's next run, the one-process
        # run its records are compared with, must not join the cluster too
        os.environ["RAY_ADDRESS"] = ""


def test_the_cluster_gives_the_records_of_one_process(cluster, experiment, tmp_path, capsys):
    path = experiment("pennies_random")
    assert run(path, tmp_path / "cluster", cluster[0]) == 0
    assert f"Ray: the cluster at {cluster[0]} (RAY_ADDRESS), 2 CPUs" in capsys.readouterr().err
    assert main(["run", str(path), "--out", str(tmp_path / "one"), "--quiet"]) == 0
    assert contents(tmp_path / "cluster") == contents(tmp_path / "one")
    assert len(contents(tmp_path / "one")) == 3


def test_a_labs_own_agent_from_outside_the_package_plays_on_the_cluster(
    cluster, experiment, tmp_path, capsys
):
    path = experiment("labagents_32:Saint")
    assert run(path, tmp_path / "out", cluster[0]) == 0
    assert "shipping labagents_32.py" in capsys.readouterr().err
    records = read_records(tmp_path / "out")
    assert len(records) == 3
    # always heads, every round of every episode
    assert {s["actions"]["matcher"] for r in records for s in r.steps} == {0}


def test_backend_ray_without_an_address_starts_a_ray_of_its_own_beside_the_cluster(
    cluster, experiment, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("RAY_TMPDIR", cluster[2])  # where ray.init() finds the machine's cluster
    path = experiment("pennies_random")
    own = ["--set", "backend='ray'", "--quiet"]
    assert main(["run", str(path), "--out", str(tmp_path / "own"), *own]) == 0
    assert "Ray: a local Ray of this run with 1 CPUs" in capsys.readouterr().err
    assert main(["run", str(path), "--out", str(tmp_path / "one"), "--quiet"]) == 0
    assert contents(tmp_path / "own") == contents(tmp_path / "one")


def test_a_ray_client_address_plays_on_the_cluster(cluster, experiment, tmp_path):
    path = experiment("pennies_random")
    assert run(path, tmp_path / "client", cluster[1]) == 0
    assert main(["run", str(path), "--out", str(tmp_path / "one"), "--quiet"]) == 0
    assert contents(tmp_path / "client") == contents(tmp_path / "one")


def test_an_address_where_no_cluster_answers_exits_2_naming_it(experiment, tmp_path, capsys):
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    out = tmp_path / "out"
    assert run(experiment("pennies_random"), out, address) == 2
    err = capsys.readouterr().err
    assert f"RAY_ADDRESS (--ray-address) {address}: no Ray cluster answers there" in err
    assert "Traceback" not in err
    assert not out.exists()  # refused before anything was written


def test_a_task_whose_worker_dies_is_a_failed_episode_with_its_reason(
    cluster, experiment, tmp_path, capsys
):
    out = tmp_path / "out"
    assert run(experiment("labagents_32:DiesOnAWorker"), out, cluster[0]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(read_records(out)) == 1  # the check episode, played by the driver
    failed = read_failures(out)
    assert [r.episode for r in failed] == [1, 2]
    assert all(r.error.startswith("Ray task failed: ") for r in failed)
    assert "Ray task failed" in err  # the failure summary


def test_an_address_that_listens_but_never_answers_exits_2_after_the_wait(experiment, tmp_path):
    """A port that accepts connections and says nothing (ray.init would retry for minutes):
    refused once SOCIALSIM_RAY_TIMEOUT has passed. In a process of its own, as the abandoned
    connection attempt is left behind in the process that gives up."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    address = f"127.0.0.1:{silent.getsockname()[1]}"
    out = tmp_path / "out"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "socialsim", "run", str(experiment("pennies_random"))]
            + ["--out", str(out), "--ray-address", address, "--quiet"],
            env={**os.environ, "SOCIALSIM_RAY_TIMEOUT": "5", "PYTHONPATH": ""},
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        silent.close()
    assert done.returncode == 2, done.stderr
    assert f"{address}: no Ray cluster answered within 5 s" in done.stderr
    assert not out.exists()
