"""Where the core's time goes: each cell under the first kind of work it contains."""

import nbformat

from helpers.tools import time_profile as tp


def executed(cells: list[tuple[str, float]], total: float) -> dict:
    notebook = nbformat.v4.new_notebook()
    for source, seconds in cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["papermill"] = {"duration": seconds}
        notebook.cells.append(cell)
    notebook.cells.append(nbformat.v4.new_markdown_cell("torch.compile( in prose: not a cell"))
    notebook.metadata["papermill"] = {"duration": total}
    return notebook


def test_each_cell_counts_once_under_its_first_kind_and_the_rest_is_outside_the_cells():
    notebook = executed(
        [
            ('lesson = h.start_lesson("02", globals())', 20.0),
            ("engine = torch_tensorrt.compile(model)\nstep = torch.compile(model)", 15.0),
            ("compiled = torch.compile(model)", 5.0),
            ("timings = h.gate_and_time(paths, batch)", 3.0),
        ],
        total=47.0,
    )
    seconds = tp.profile(notebook)
    assert seconds[next(iter(tp.KINDS))] == 20.0  # setup
    assert seconds["TensorRT engines: builds, saves and loads"] == 15.0  # first match wins
    assert seconds["torch.compile: Inductor's compile and first calls"] == 5.0
    assert seconds[tp.REST] == 3.0
    assert seconds[tp.OUTSIDE] == 4.0


def test_the_table_sums_lessons_and_names_where_each_kind_ran(tmp_path):
    for number, build in (("02", 30.0), ("03", 10.0)):
        notebook = executed([("engine = build(inputs)", build)], total=build + 2)
        nbformat.write(nbformat.from_dict(notebook), tmp_path / f"{number}_x.ipynb")
    table = tp.profile_table(sorted(tmp_path.glob("*.ipynb")))
    assert "| TensorRT engines: builds, saves and loads | 40 | 91 % | 02 (30), 03 (10) |" in table
    assert "| **the core lessons** | **44** | 100 % | 2 notebooks |" in table
    assert "nvcc" not in table  # a kind no notebook here does has no row


def test_the_deep_dives_table_names_07ds_export_and_refit_apart_from_the_rest(tmp_path):
    cells = [
        ("torch.onnx.export(model, args, path, dynamo=True)", 27.0),
        ("mutable = torch_tensorrt.MutableTorchTensorRTModule(model)\nengine = build(x)", 67.0),
        ("rows = cold_starts.start_row(label)", 170.0),
    ]
    notebook = executed(cells, total=270.0)
    nbformat.write(nbformat.from_dict(notebook), tmp_path / "07d_onnx_engine.ipynb")
    table = tp.profile_table(sorted(tmp_path.glob("*.ipynb")), "the deep dives")
    assert "| ONNX export (07d) | 27 | 10 % | 07d (27) |" in table
    assert "| a refit: new weights into a built engine (07d) | 67 | 25 % | 07d (67) |" in table
    assert "| **the deep dives** | **270** | 100 % | 1 notebook |" in table


def test_the_profile_reads_the_lessons_not_the_runners_copies_beside_them(tmp_path):
    from helpers.tools.lesson_times import notebooks  # the list lesson_times profiles

    deep = tmp_path / "notebooks" / "deep-dives"
    deep.mkdir(parents=True)
    for name in ("08d_weight_only", "08d_weight_only.noisy", "08d_weight_only.running", "x"):
        (deep / f"{name}.ipynb").write_text("{}")
    found = notebooks(tmp_path, only="deep-dives")
    assert [p.name for p in found] == ["08d_weight_only.ipynb"]


def test_modelopts_build_is_the_call_that_builds_not_a_cell_that_names_nvcc():
    builds = [
        "kernels = extensions.get_cuda_ext()  # nvcc compiles them once per machine",
        "builds = [extensions.get_cuda_ext] + ([extensions.get_cuda_ext_fp8] if fp8 else [])",
    ]
    for source in builds:
        assert tp.kind_of(source) == "modelopt's CUDA kernels, built by nvcc once per machine"
    skipped = "# built by nvcc at first use\nextensions.get_cuda_ext.extension = None"
    assert tp.kind_of(f"{skipped}\nquantized = mtq.quantize(model, config, loop)") == tp.REST
