"""``socialsim play`` driven through a pseudo-terminal, as a person would play it: a full
Decrypto game as the decoder and a donation game as a player, with invalid answers first, then
the results directory and ``socialsim report`` on it."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from socialsim.envs.decrypto.protocol import render_code

SOCIALSIM = [sys.executable, "-m", "socialsim.cli"]
# seed 0 plays these codes (envs/decrypto/core.py); the decoder's right guess is the code
SEED_0_CODES = ["3-1-4", "3-4-1", "1-4-2", "3-4-2", "4-1-3", "1-2-4", "2-1-4", "2-1-3"]


class Pty:
    """A child process on a pseudo-terminal, read until a pattern shows up (a tiny pexpect)."""

    def __init__(self, argv: list[str], cwd: Path):
        master, slave = pty.openpty()
        env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True
        )
        os.close(slave)
        self.master = master
        self.text = ""

    def expect(self, patterns: list[str], timeout: float = 60.0) -> int:
        """Index of the first pattern found in the output since the last match."""
        deadline = time.monotonic() + timeout
        while True:
            for i, pattern in enumerate(patterns):
                match = re.search(pattern, self.text)
                if match:
                    self.seen = self.text[: match.end()]
                    self.text = self.text[match.end() :]
                    return i
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"none of {patterns} in {self.text[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    if any(re.search(p, self.text) for p in patterns):
                        continue
                    raise EOFError(f"the program ended; last output {self.text[-2000:]!r}")
                self.text += chunk.decode("utf-8", "replace")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


def test_a_person_plays_a_full_decrypto_game_as_the_decoder(tmp_path):
    out = tmp_path / "decoder_game"
    argv = SOCIALSIM + ["play", "decrypto", "--as", "decoder", "--seed", "0", "--out", str(out)]
    argv += ["--with", "encoder=glove_encoder", "--with", "interceptor=decrypto_random_guesser"]
    child = Pty(argv, tmp_path)
    child.expect([r"You are the decoder"])
    typed = []
    turn = 0
    while True:
        if child.expect([r"Your guess \(like 3-1-4\): ", r"Logged to "]) == 1:
            break
        turn += 1
        view = child.seen
        assert "Keywords: 1 " in view  # the decoder sees the keywords...
        assert "Your code this turn" not in view  # ...but never the code
        if turn == 1:
            child.send("3-1")
            assert child.expect([r"is not a code"]) == 0
            child.expect([r"Your guess \(like 3-1-4\): "])
            child.send("1-1-2")
            assert child.expect([r"repeats a digit"]) == 0
            child.expect([r"Your guess \(like 3-1-4\): "])
        guess = "2 1 3" if turn == 2 else SEED_0_CODES[turn - 1]  # one wrong guess, typed loosely
        typed.append(guess)
        child.send(guess)
    assert child.close() == 0

    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "done"
    assert record["seats"]["decoder"] == {"kind": "human", "name": ""}
    summary = record["summary"]
    played = summary["turn_log"]
    assert [render_code(t["decoder_guess"]) for t in played] == [
        "-".join(g.split()) if " " in g else g for g in typed
    ]
    assert played[1]["miscommunication"] is True
    assert summary["turns"] == len(typed)
    assert record["counters"]["decoder"]["invalid_actions"] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["humans"] == ["decoder"] and manifest["config"]["seed"] == 0

    report = subprocess.run(
        SOCIALSIM + ["report", str(out), "--no-files"], capture_output=True, text=True
    )
    assert report.returncode == 0, report.stderr
    assert "episodes: 1 done" in report.stdout and "human" in report.stdout


def test_a_person_plays_a_donation_game_as_a_donor(tmp_path):
    out = tmp_path / "donation_game"
    argv = SOCIALSIM + ["play", "donation", "--as", "agent_3", "--seed", "2", "--out", str(out)]
    argv += ["--with", "*=image_scoring", "--set", "env.kwargs.n_agents=4"]
    argv += ["--set", "env.kwargs.rounds=6"]
    child = Pty(argv, tmp_path)
    child.expect([r"The donation game: 4 players, 6 rounds"])
    moves = tones = 0
    while True:
        found = child.expect([r"Move: ", r"Tone: ", r"Message: ", r"Logged to "])
        if found == 3:
            break
        if found == 0:
            if moves == 0:
                child.send("maybe")
                child.expect([r"'maybe' is not a move here: type one of defect, cooperate"])
                child.expect([r"Move: "])
            child.send("cooperate" if moves % 2 == 0 else "d")
            moves += 1
        elif found == 1:
            if tones == 0:
                child.send("loud")
                child.expect([r"is not a tone"])
                child.expect([r"Tone: "])
            child.send("praising" if tones % 2 == 0 else "5")
            tones += 1
        else:
            child.send("<script>alert(1)</script> was \x1b[31mkind")
    assert child.close() == 0
    assert moves >= 1 and tones >= 1

    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "done"
    donated = [i["action"] for i in record["summary"]["interactions"] if i["donor"] == "agent_3"]
    assert donated == ["cooperate" if k % 2 == 0 else "defect" for k in range(moves)]
    gossip = [
        m["payload"]
        for m in record["messages"]
        if m["kind"] == "gossip" and m["payload"]["author"] == "agent_3"
    ]
    assert [g["tone"] for g in gossip] == [
        "praising" if k % 2 == 0 else "criticism" for k in range(tones)
    ]
    assert all(g["message"].startswith("<script>") for g in gossip)  # logged as typed, never run
    report = subprocess.run(
        SOCIALSIM + ["report", str(out), "--no-files"], capture_output=True, text=True
    )
    assert report.returncode == 0, report.stderr
    assert "episodes: 1 done" in report.stdout


def test_ctrl_c_leaves_nothing_written(tmp_path):
    out = tmp_path / "abandoned"
    argv = SOCIALSIM + ["play", "decrypto", "--as", "interceptor", "--seed", "3"]
    argv += ["--out", str(out), "--with", "encoder=decrypto_random_encoder"]
    argv += ["--with", "decoder=decrypto_random_guesser"]
    child = Pty(argv, tmp_path)
    child.expect([r"Your guess \(like 3-1-4\): "])
    view = child.seen
    assert "Keywords:" not in view and "Your code" not in view  # the interceptor's view
    child.process.send_signal(2)  # Ctrl-C
    child.expect([r"Game abandoned; nothing was logged"])
    assert child.close() == 130
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["play", "chess", "--as", "x"], "GAME: unknown game 'chess'"),
        (["play", "decrypto", "--as", "pilot"], "--as: unknown seat 'pilot'"),
        (["play", "decrypto", "--as", "decoder", "--with", "encoder=nobody"], "unknown agent kind"),
    ],
)
def test_a_bad_play_command_names_what_is_wrong(tmp_path, argv, says):
    result = subprocess.run(SOCIALSIM + argv, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert says in result.stderr


def test_hot_seat_clears_the_screen_between_the_encoder_and_the_decoder(tmp_path):
    out = tmp_path / "hot_seat"
    argv = SOCIALSIM + ["play", "decrypto", "--as", "encoder", "--as", "decoder", "--seed", "0"]
    argv += ["--out", str(out), "--with", "interceptor=decrypto_random_guesser"]
    argv += ["--set", "env.kwargs.max_turns=2"]
    child = Pty(argv, tmp_path)
    for turn, code in enumerate(SEED_0_CODES[:2], 1):
        child.expect([r"Pass the keyboard to encoder\. encoder, press Enter when ready\. "])
        child.send("")
        child.expect([r"Hint 1 for digit \d \(\w+\): "])
        assert f"Your code this turn: {code}" in child.seen
        child.send(f"alpha{turn}")
        child.expect([r"Hint 2 for digit"])
        child.send(f"beta{turn}")
        child.expect([r"Hint 3 for digit"])
        child.send(f"gamma{turn}")
        child.expect([r"Pass the keyboard to decoder"])
        assert "\x1b[2J\x1b[3J" in child.seen  # the encoder's screen and scrollback go first
        child.send("")
        child.expect([r"Your guess \(like 3-1-4\): "])
        assert "\x1b[2J" in child.seen and "Your code this turn" not in child.seen
        child.send(code)
    child.expect([r"Logged to "])
    assert child.close() == 0
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["summary"]["ending"] in ("survived", "intercept")
    assert record["summary"]["turn_log"][0]["hints"] == ["alpha1", "beta1", "gamma1"]
