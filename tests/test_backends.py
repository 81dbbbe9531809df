"""Every backend plays the same episodes: in-process, a process pool, and a local Ray."""

import os

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
    toml = tmp_path / "pennies.toml"
    toml.write_text(
        'name = "backends"\nepisodes = 3\n[env]\nid = "matching_pennies_v0"\n'
        '[seats.matcher]\nkind = "pennies_random"\n[seats.mismatcher]\nkind = "pennies_copycat"\n'
    )
    address = "ray://head.example:10001"
    out = tmp_path / "out"
    assert main(["run", str(toml), "--out", str(out), "--ray-address", address, "--check"]) == 0
    printed = capsys.readouterr()
    assert "backend ray" in printed.out + printed.err
    assert os.environ["RAY_ADDRESS"] == address  # what ray.init reads; monkeypatch restores it
    assert not out.exists()  # --check writes nothing
