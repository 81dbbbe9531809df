"""The public link's arrival limit: at most ``arrivals_per_minute`` arrivals from one client
address in any 60 seconds, past it 429 with the seconds to wait; other addresses unaffected."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from socialsim import study as study_module
from socialsim.config import ConfigError

EXAMPLE = Path(__file__).parent.parent / "experiments" / "study_donation"


def limited_study(tmp_path: Path, line: str) -> Path:
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "study.toml"
    text = path.read_text(encoding="utf-8").replace('"game_llm.toml"', '"game_scripted.toml"')
    path.write_text(text.replace("games = 1\n", f"games = 1\n{line}\n"), encoding="utf-8")
    return path


def test_the_limit_is_twenty_a_minute_unless_the_study_says_otherwise(tmp_path):
    assert study_module.load(EXAMPLE / "study.toml").arrivals_per_minute == 20
    path = limited_study(tmp_path, "arrivals_per_minute = 0")
    assert study_module.load(path).arrivals_per_minute == 0


def test_a_negative_limit_is_one_line_naming_the_field(tmp_path):
    with pytest.raises(ConfigError, match=r"^arrivals_per_minute: .*>= 0 \(0: no limit\), got -1$"):
        study_module.load(limited_study(tmp_path, "arrivals_per_minute = -1"))


def test_the_limit_counts_one_address_over_a_sliding_minute():
    pytest.importorskip("starlette")
    from socialsim.web.study_routes import ArrivalLimit

    now = [100.0]
    limit = ArrivalLimit(2, clock=lambda: now[0])
    assert limit.wait("a") == 0
    now[0] = 110.0
    assert limit.wait("a") == 0
    now[0] = 130.0
    assert limit.wait("a") == 30.0  # the arrival at 100 leaves the window at 160
    assert limit.wait("b") == 0  # another address has its own count
    now[0] = 160.0
    assert limit.wait("a") == 0  # in: the arrivals at 110 and 160 are counted now
    assert limit.wait("a") == 10.0  # the one at 110 leaves at 170
    assert ArrivalLimit(0).wait("a") == 0  # no limit


def test_past_the_limit_the_link_answers_429_saying_how_long_to_wait(tmp_path):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from socialsim.web.app import create_app

    study = study_module.load(limited_study(tmp_path, "arrivals_per_minute = 2"))
    app = create_app(tmp_path / "results", "host", study=study, monitor_token="monitor")
    with TestClient(app, client=("203.0.113.7", 4000)) as one:
        for panel in ("p1", "p2"):
            assert one.post("/api/study/arrive", json={"panel_id": panel}).status_code == 200
        refused = one.post("/api/study/arrive", json={"panel_id": "p3"})
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert refused.json()["error"] == (
            "too many arrivals from your address (at most 2 a minute); try again in "
            f"{refused.headers['retry-after']} seconds"
        )
    with TestClient(app, client=("203.0.113.8", 4000)) as other:
        assert other.post("/api/study/arrive", json={"panel_id": "p3"}).status_code == 200
