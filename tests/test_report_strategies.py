"""The transcripts page of an [evolution] run shows each generation's strategies: per cell and
replicate, each seat's kind, parent, line and the strategy text it posted, as escaped HTML (a
strategy text is model output); the culture protocol reads the texts from the bus log."""

from __future__ import annotations

from html.parser import HTMLParser

from socialsim.envs.culture.protocol import strategy_texts

import socialsim
from socialsim.analysis.transcript import render, strategies_block, strategy_rows
from socialsim.records import EpisodeRecord, read_records

SCRIPTED = {
    "name": "culture_scripted",
    "episodes": 1,
    "seed": 3,
    "env": {"id": "culture_v0", "kwargs": {"n_agents": 4, "rounds": 4}},
    "evolution": {"generations": 3},
    "seats": {
        "agent_0": {"kind": "culture_give", "fraction": 0.0},
        "agent_1": {"kind": "culture_give", "fraction": 1.0},
        "agent_2": {"kind": "culture_conditional", "fraction": 0.5, "threshold": 0.3},
        "agent_3": {"kind": "culture_give", "fraction": 0.2},
    },
}
TEXTS = {
    "agent_0": "Always give 0 of my resources, whoever the recipient is.",
    "agent_1": "Always give 1 of my resources, whoever the recipient is.",
    "agent_2": "Give 0.5 of my resources to recipients who last gave at least 0.3 of theirs "
    "(or have no record yet); give nothing to the others.",
    "agent_3": "Always give 0.2 of my resources, whoever the recipient is.",
}
HOSTILE = '</td></table><script>alert("x")</script><img src=x onerror=alert(1)> & "give"'


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def tags(page: str) -> list[str]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


def played(tmp_path) -> list[EpisodeRecord]:
    socialsim.run(SCRIPTED, tmp_path)
    return sorted(read_records(tmp_path), key=lambda r: r.cell["generation"])


def test_the_protocol_reads_each_donors_last_strategy_message():
    messages = [
        {"kind": "rules", "to": "*", "payload": {}},
        {"kind": "strategy", "to": ["agent_1"], "payload": {"text": "first"}},
        {"kind": "strategy", "to": ["agent_0"], "payload": {"text": "mine"}},
        {"kind": "strategy", "to": ["agent_1"], "payload": {"text": "second"}},
        {"kind": "strategy", "to": ["agent_0", "agent_1"], "payload": {"text": "not one seat's"}},
    ]
    assert strategy_texts(messages) == {"agent_1": "second", "agent_0": "mine"}


def test_each_generations_seats_lineage_and_strategy_texts(tmp_path):
    run = played(tmp_path)
    rows = strategy_rows(run)
    assert [g for g, _ in rows] == [0, 1, 2]
    assert rows[0][1] == [
        {
            "seat": seat,
            "kind": SCRIPTED["seats"][seat]["kind"],
            "parent": "generation 0",
            "line": seat,
            "strategy": TEXTS[seat],
        }
        for seat in ("agent_0", "agent_1", "agent_2", "agent_3")
    ]
    for (_, before), (_, after), record in zip(rows[:-1], rows[1:], run[1:], strict=True):
        founders = {row["seat"]: row["line"] for row in before}
        for row in after:
            parent = record.seats[row["seat"]]["parent"]
            assert row["parent"] == (
                "kept its place" if parent == row["seat"] else f"child of {parent}"
            )
            assert row["line"] == founders[parent]
            assert row["strategy"] == TEXTS[row["line"]]  # scripted children inherit whole
    # exact for seed 3: agent_0 (gives nothing) and agent_3 survive generation 0, the richest
    assert [(row["parent"], row["line"]) for row in rows[1][1]] == [
        ("kept its place", "agent_0"),
        ("child of agent_0", "agent_0"),
        ("child of agent_3", "agent_3"),
        ("kept its place", "agent_3"),
    ]
    assert [row["line"] for row in rows[2][1]] == ["agent_0"] * 4  # the giver of 0 took over
    block = strategies_block(run)
    assert block.count("<h3>Generation ") == 3
    assert block.count("Always give 0 of my resources") == 1 + 2 + 4  # agent_0's line


def test_a_hostile_strategy_text_is_shown_escaped_never_as_markup(tmp_path):
    run = played(tmp_path)
    data = run[0].to_json()
    for message in data["messages"]:
        if message["kind"] == "strategy" and message["to"] == ["agent_1"]:
            message["payload"]["text"] = HOSTILE
    run[0] = EpisodeRecord.from_json(data)
    block = strategies_block(run)
    assert (
        "&lt;/td&gt;&lt;/table&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img "
        "src=x onerror=alert(1)&gt; &amp; &quot;give&quot;"
    ) in block
    assert "<script" not in block and "<img" not in block
    page = render(run, "hostile")
    found = tags(page)
    assert found.count("script") == 2  # the page's own: the JSON data and the code
    assert "img" not in found
    assert found.count("table") == 3 + 3  # one a generation; the hints, bus log, replies


def test_a_run_without_generations_has_no_strategies_block(tmp_path):
    config = {**SCRIPTED, "evolution": None}
    del config["evolution"]
    socialsim.run(config, tmp_path)
    records = read_records(tmp_path)
    assert strategies_block(records) == ""
    assert "Strategies by generation" not in render(records, "plain")
