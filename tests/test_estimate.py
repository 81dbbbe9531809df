"""``socialsim run FILE --check`` prints what the LLM seats will spend before a grid runs."""

from socialsim.cli import main


def test_check_prints_the_calls_tokens_and_cost_bound_of_each_llm_cell(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")  # --check sends no request
    out = tmp_path / "gopnik"
    assert main(["run", "llm_decrypto_gopnik", "--check", "--out", str(out)]) == 0
    text = capsys.readouterr().err  # the plan goes where the progress goes
    # one stand-in episode (seed 0): 24 decisions and questions of the three LLM seats (12
    # decisions, and 3 turns of the gopnik probe's 4 questions)
    assert "cell (no grid): 96 episodes, 2,304 calls, 2,304,000 completion tokens" in text
    assert "completion at most max_tokens (1000) per call; prompt tokens unknown" in text
    assert "total: 2,304 calls" in text
    assert not out.exists()


def test_check_prints_no_estimate_for_an_experiment_without_llm_seats(tmp_path, capsys):
    assert main(["run", "matching_pennies", "--check", "--out", str(tmp_path / "p")]) == 0
    assert "LLM estimate" not in capsys.readouterr().err
