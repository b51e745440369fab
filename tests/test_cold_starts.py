"""The cold-start launcher of notebooks 07 and 07d, without a GPU."""

from helpers import cold_starts


def test_a_failing_start_is_a_row_with_its_error():
    row = cold_starts.start_row("nonsense", "nonsense", "-", ("roberta-base", 1, 8))
    assert row["path"] == "nonsense"
    assert row["error"].startswith("nonsense failed: ")
    assert set(row) == {"path", "error"}


def test_the_table_leaves_phases_to_their_own_lines():
    starts = [
        {"path": "eager", "to_first_output_s": 12.954},
        {
            "path": "rebuild",
            "to_first_output_s": 29.4,
            "compile_s": 13.1,
            "compile_phases": "a 60 %",
        },
    ]
    table = cold_starts.starts_table(starts)
    assert list(table.index) == ["eager", "rebuild"]
    assert "compile_phases" not in table.columns
    assert table.loc["eager", "to_first_output_s"] == 12.95
    assert cold_starts.phase_lines(starts) == "rebuild: a 60 %"
