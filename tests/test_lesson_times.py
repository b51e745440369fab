"""The lessons' time table: the T4 estimate's arithmetic and what each row shows."""

import pytest

from helpers.tools import lesson_times as lt


def entry(seconds, busy=None, peak=None, **parameters):
    return dict(
        status="ok",
        seconds=seconds,
        parameters=parameters,
        gpu_busy_share=busy,
        peak_gpu_gib=peak,
    )


def test_the_estimate_scales_busy_time_by_the_gpu_factor_and_the_rest_by_the_host_factor():
    assert lt.t4_estimate_s(100.0, 0.0) == pytest.approx(100 * lt.HOST_FACTOR)
    assert lt.t4_estimate_s(100.0, 1.0) == pytest.approx(100 * lt.GPU_FACTOR)
    assert lt.t4_estimate_s(100.0, 0.5) == pytest.approx(50 * lt.GPU_FACTOR + 50 * lt.HOST_FACTOR)


def test_rows_use_default_runs_and_mark_lessons_over_ten_minutes():
    published = {
        "08_llm_decoding_Llama-3.2-1B_b1_s256": entry(484.0),
        "08_llm_decoding_Llama-3.1-8B_b1_s256": entry(675.0, model_name="meta-llama/8B"),
        "06_quantization_all-MiniLM-L6-v2_b16_s32": entry(265.0),
    }
    emulated = {
        "08_llm_decoding_Llama-3.2-1B_b1_s256": entry(
            396.0, busy=0.07, peak=11.7, output_dir="results/t4-emulation"
        ),
        "10_tensor_parallel_Llama-3.1-8B_b1_s128": entry(225.0, busy=0.0, peak=0.0),
    }
    table = lt.times_table(published, emulated, {"08": "H200"}, {"08": "H100"})
    assert "| 08 | 484 s (H200) | 396 s (H100) | 7 % | 11.7 | 19.2 min (over 10 min) |" in table
    assert "| 06 | 265 s | not run yet |" in table
    assert "| 10 | not run | 225 s | none: CPU processes | 0.0 | 8 min |" in table


def test_the_table_goes_between_the_markers_and_a_readme_without_them_is_refused(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{lt.MARKERS[0]}\nold\n{lt.MARKERS[1]}\nrest\n")
    lt.write_table(readme, "| new |")
    assert readme.read_text() == f"intro\n{lt.MARKERS[0]}\n| new |\n{lt.MARKERS[1]}\nrest\n"
    readme.write_text("no markers")
    with pytest.raises(SystemExit, match="markers"):
        lt.write_table(readme, "| new |")


def test_each_row_names_the_gpu_its_record_was_made_on(tmp_path):
    def record(name, device):
        path = tmp_path / f"{name}.json"
        path.write_text(f'{{"environment": {{"device_name": "{device}"}}}}')

    record("08d-weight-only_Llama-3.2-1B_b1_s256", "NVIDIA H100 80GB HBM3")
    record("02-fp16-compile_roberta-base_b16_s32", "NVIDIA H200")
    record("10-tensor-parallel_Llama-3.1-8B_b1_s128", "Intel(R) Xeon(R)")  # CPU processes
    assert lt.gpu_names(tmp_path) == {"08d": "H100", "02": "H200"}
