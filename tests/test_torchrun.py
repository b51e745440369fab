"""The torchrun watcher's three endings, with stand-in commands on a CPU."""

import sys

import pytest

from helpers.torchrun import run_torchrun

DONE = "print('[rank 0, 1 s] done', flush=True)"


def command(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_finished_run_passes_and_shows_rank_0(tmp_path, capsys):
    out = tmp_path / "result.json"
    code = f"open({str(out)!r}, 'w').write('{{}}'); {DONE}"
    run_torchrun(command(code), processes=1, out=out, timeout_s=30, cpu=True)
    assert "[rank 0, 1 s] done" in capsys.readouterr().out


def test_a_run_past_its_time_names_the_last_stage(tmp_path):
    code = "import time; print('[rank 0, 0 s] model built', flush=True); time.sleep(30)"
    with pytest.raises(RuntimeError, match="stopped after 1 s; last stages: .*model built"):
        run_torchrun(command(code), processes=1, out=tmp_path / "x.json", timeout_s=1, cpu=True)


def test_a_failed_run_names_its_error_line(tmp_path):
    code = "import sys; print('ValueError: bad shape'); sys.exit(1)"
    with pytest.raises(RuntimeError, match="failed: ValueError: bad shape"):
        run_torchrun(command(code), processes=1, out=tmp_path / "x.json", timeout_s=30, cpu=True)


def test_results_written_before_a_failed_exit_are_kept(tmp_path, capsys):
    out = tmp_path / "result.json"
    code = f"import sys; open({str(out)!r}, 'w').write('{{}}'); {DONE}; sys.exit(1)"
    run_torchrun(command(code), processes=1, out=out, timeout_s=30, cpu=True)
    assert "results written, then leaving the process group hung" in capsys.readouterr().out
