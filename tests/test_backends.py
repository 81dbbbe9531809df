"""Every backend plays the same episodes: in-process, a process pool, and a local Ray."""

import os
import socket

import pytest

from socialsim.cli import main
from socialsim.config import ConfigError
from socialsim.records import read_records
from socialsim.results import run

GRID = {
    "name": "backends",
    "episodes": 3,
    "env": {"id": "matching_pennies_v0", "kwargs": {"rounds": 5}},
    "seats": {"matcher": {"kind": "pennies_random"}, "mismatcher": {"kind": "pennies_copycat"}},
    "grid": {"env.form": ["parallel", "aec"], "seats.matcher.p_heads": [0.2, 0.8]},
}


def contents(directory):
    return [record.content() for record in read_records(directory)]


def played(tmp_path, name, overrides):
    results = run(GRID, out=tmp_path / name, overrides=overrides)
    assert results.failed == [] and results.ran == 12
    return contents(tmp_path / name)


def test_one_process_and_a_pool_of_two_give_equal_records(tmp_path):
    assert played(tmp_path, "one", []) == played(tmp_path, "pool", ["workers=2"])


@pytest.mark.slow  # a local Ray starts in about 6 s
def test_a_local_ray_with_two_cpus_gives_the_records_of_one_process(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    ray = played(tmp_path, "ray", ["backend='ray'", "workers=2"])
    assert ray == played(tmp_path, "one", [])


def test_an_unknown_backend_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"backend: 'dask' is not allowed; allowed: local, ray"):
        run(GRID, out=tmp_path / "out", overrides=["backend='dask'"])


def test_ray_address_names_the_cluster_and_implies_the_ray_backend(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", "")  # recorded, so the flag's value is undone afterwards
    address = f"127.0.0.1:{unused_port()}"
    out = tmp_path / "out"
    assert main(["run", str(pennies(tmp_path)), "--out", str(out), "--ray-address", address]) == 2
    err = capsys.readouterr().err
    assert f"RAY_ADDRESS (--ray-address) {address}: no Ray cluster answers there" in err
    assert os.environ["RAY_ADDRESS"] == address  # what the backend reads; monkeypatch restores it
    assert not out.exists()  # refused before anything is written


def test_ray_address_alone_selects_the_ray_backend_and_is_checked_at_check(
    tmp_path, monkeypatch, capsys
):
    pytest.importorskip("ray")
    address = f"127.0.0.1:{unused_port()}"
    monkeypatch.setenv("RAY_ADDRESS", address)
    out = tmp_path / "out"
    assert main(["run", str(pennies(tmp_path)), "--out", str(out), "--check"]) == 2
    assert f"{address}: no Ray cluster answers there" in capsys.readouterr().err
    assert not out.exists()


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def pennies(tmp_path):
    toml = tmp_path / "pennies.toml"
    toml.write_text(
        'name = "backends"\nepisodes = 3\n[env]\nid = "matching_pennies_v0"\n'
        '[seats.matcher]\nkind = "pennies_random"\n[seats.mismatcher]\nkind = "pennies_copycat"\n'
    )
    return toml
