"""Torch-TensorRT's documented features, on fake modules of each generation (no GPU here)."""

import dataclasses
import time
import types
from collections import Counter

import pytest

from helpers import trt_features as tf
from helpers.errors import SkipStep


def fake_trt(version: str, settings: tuple[str, ...] = (), refit: bool = True, input_cls=None):
    """A torch_tensorrt with ``version``, these compile settings and this Input class."""
    fields = [(name, bool, dataclasses.field(default=False)) for name in settings]
    compilation_settings = dataclasses.make_dataclass("CompilationSettings", fields)
    displayed = []
    compiler = types.SimpleNamespace(dryrun_stats_display=lambda t, e: displayed.append(t))
    dynamo = types.SimpleNamespace(CompilationSettings=compilation_settings, _compiler=compiler)
    module = types.SimpleNamespace(
        __version__=version,
        dynamo=dynamo,
        ENABLED_FEATURES=types.SimpleNamespace(refit=refit),
        Input=input_cls,
        displayed=displayed,
    )
    return module


def tracker(total, supported, engines, nodes):
    return types.SimpleNamespace(
        total_ops_in_graph=total,
        supported_ops_in_graph=supported,
        tensorrt_graph_count=engines,
        to_run_in_torch=[f"Node: torch.ops.{n}, with layer location: x" for n in nodes],
    )


def test_partitions_reads_each_report_and_still_logs_it_then_puts_the_display_back():
    trt = fake_trt("2.11.0")
    original = trt.dynamo._compiler.dryrun_stats_display
    with tf.partitions(trt) as seen:
        report = tracker(415, 412, 2, ["aten.gather.default", "aten.gather.default"])
        trt.dynamo._compiler.dryrun_stats_display(report, False)
    assert seen == [tf.Partition(415, 412, 2, Counter({"aten.gather.default": 2}))]
    assert trt.displayed == [report]  # Torch-TensorRT's own logging still runs
    assert trt.dynamo._compiler.dryrun_stats_display is original
    line = tf.partition_line(seen)
    assert "1 graph(s) into 2 TensorRT engine(s); 412 of 415" in line
    assert "aten.gather.default x2" in line


def test_a_version_without_the_report_gives_an_empty_list_and_says_so():
    trt = types.SimpleNamespace(__version__="2.0.0", dynamo=types.SimpleNamespace())
    with tf.partitions(trt) as seen:
        pass
    assert seen == [] and "no partition report" in tf.partition_line(seen)
    assert "left to PyTorch: nothing" in tf.partition_line([tf.Partition(10, 10, 1)])


@pytest.mark.parametrize(
    "version, settings, extra",
    [
        ("2.5.0", ("cache_built_engines", "make_refittable"), {"make_refittable": True}),
        ("2.8.0", ("cache_built_engines", "immutable_weights"), {"immutable_weights": False}),
        ("2.13.0", ("cache_built_engines", "immutable_weights"), {"immutable_weights": False}),
    ],
)
def test_engine_caching_asks_for_refittable_engines_under_each_generations_name(
    version, settings, extra
):
    kwargs = tf.engine_cache_settings(fake_trt(version, settings), "/tmp/cache")
    assert kwargs == dict(
        cache_built_engines=True, reuse_cached_engines=True, engine_cache_dir="/tmp/cache", **extra
    )


def test_engine_caching_is_skipped_with_its_reason_where_it_cannot_work():
    with pytest.raises(SkipStep, match="no engine cache"):
        tf.engine_cache_settings(fake_trt("2.4.0", ("make_refittable",)), "/tmp/c")
    no_refit = fake_trt("2.11.0", ("cache_built_engines", "immutable_weights"), refit=False)
    with pytest.raises(SkipStep, match="cannot refit"):
        tf.engine_cache_settings(no_refit, "/tmp/c")


class InputThatIgnoresKeywords:  # 2.11's Input: any keyword is accepted, unknown ones dropped
    def __init__(self, *args, **kwargs):
        self.kwargs = kwargs


class InputWithSharedDims:
    def __init__(self, *args, shared_dims=None, **kwargs):
        self.shared_dims = shared_dims


def test_shared_dims_is_skipped_before_2_13_and_runs_where_input_knows_it():
    with pytest.raises(SkipStep, match="arrived in 2.13, and this version would ignore it"):
        tf.check_shared_dims(fake_trt("2.11.0", input_cls=InputThatIgnoresKeywords))
    tf.check_shared_dims(fake_trt("2.13.0", input_cls=InputThatIgnoresKeywords))
    tf.check_shared_dims(fake_trt("2.12.0", input_cls=InputWithSharedDims))  # a backport


class FakeMutable:
    """Forwards unknown attributes to its model, as MutableTorchTensorRTModule does."""

    def __init__(self, refit_fails=False):
        object.__setattr__(self, "model", types.SimpleNamespace())
        object.__setattr__(self, "refit_fails", refit_fails)

    def __setattr__(self, name, value):
        setattr(self.model, name, value)

    def compile(self):
        return "built"

    def refit_gm(self):
        if self.refit_fails:
            raise RuntimeError("refit failed")

    def __call__(self, change=False):  # the module's own choice on its next call
        if not change:
            return self.compile()
        try:
            self.refit_gm()
        except RuntimeError:
            self.compile()


def test_refits_and_builds_are_recorded_on_the_module_itself():
    mutable = FakeMutable()
    events = tf.watch_refits(mutable)
    mutable()
    mutable(change=True)
    assert [e["kind"] for e in events] == ["build", "refit"]
    assert all(isinstance(e["samples"], Counter) for e in events)  # each split by phase
    assert not hasattr(mutable.model, "refit_gm")  # not forwarded to the PyTorch model
    failing = FakeMutable(refit_fails=True)
    events = tf.watch_refits(failing)
    failing()
    failing(change=True)
    assert [e["kind"] for e in events] == ["build", "refit", "build"]


def test_refit_line_judges_only_a_refit_against_the_first_build():
    build, refit = {"kind": "build", "seconds": 20.0}, {"kind": "refit", "seconds": 2.0}
    line, saved = tf.refit_line([build, refit])
    assert saved == pytest.approx(0.9) and "90 % less time" in line
    assert tf.refit_line([build, refit, build])[1] is None  # a failed refit rebuilt
    assert "rebuilt, not refitted" in tf.refit_line([build, refit, build])[0]
    assert tf.refit_line([build])[1] is None
    assert "no first build" in tf.refit_line([refit])[0]
    slow = {"kind": "refit", "seconds": 36.4}
    line, saved = tf.refit_line([build, slow])
    assert line.endswith("first build of 20.0 s: 1.82x the build's time") and saved < 0


def test_the_feature_check_names_each_feature_and_why_it_was_skipped(monkeypatch, capsys):
    from helpers.tools import trt_features_check as check

    def no_trt():
        raise SkipStep("torch_tensorrt is not installed")

    monkeypatch.setattr(check.h, "import_torch_tensorrt", no_trt)
    assert check.main([]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [line.split(":")[0] for line in lines] == list(check.FEATURES)
    assert all("skipped: torch_tensorrt is not installed" in line for line in lines)


def test_the_feature_check_refuses_a_bad_shape_in_one_line(capsys):
    from helpers.tools import trt_features_check as check

    with pytest.raises(SystemExit) as stop:
        check.main(["--shape", "16by32"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip() == "--shape '16by32': give batch x tokens, e.g. 16x32"


def test_the_feature_check_compares_outputs_over_real_tokens_only():
    import torch

    from helpers.tools.trt_features_check import difference

    reference = torch.zeros(1, 2, 4)
    output = types.SimpleNamespace(last_hidden_state=torch.tensor([[[0.0] * 4, [9.0] * 4]]))
    line = difference(output, reference, torch.tensor([[1, 0]]), against="x")
    assert line.startswith("against x: max 0,")  # the padded position's 9.0 is not read


@pytest.mark.parametrize(
    "written, reused, why_not, words",
    [
        (30.0, 6.0, "", "holds: the compile reusing the cache took 5.0x less time"),
        (30.0, 20.0, "", "faster, not significantly: 1.50x less time, under 2x"),
        (30.0, 29.0, "", "does not hold here: within 1.1x"),
        (20.0, 30.0, "", "does not hold here: reusing the cache took 1.50x longer"),
        (30.0, None, "", "not judged: a start with the cache failed"),
        (None, None, "this build cannot refit", "not testable here: this build cannot refit"),
    ],
)
def test_the_cache_claim_is_judged_from_two_fresh_compiles(written, reused, why_not, words):
    assert tf.cache_verdict(written, reused, why_not).startswith(words)


@pytest.mark.parametrize(
    "saved, words",
    [
        (0.97, "holds, and more: 97 % less time"),
        (0.85, "holds: 85 % less time"),
        (0.40, "does not hold here: 40 % less time"),
        (-0.82, "does not hold here: 1.82x the build's time"),
        (None, "not judged: rebuilt, not refitted"),
    ],
)
def test_the_refit_claim_is_judged_on_a_refit_only(saved, words):
    line = "rebuilt, not refitted: 31.0 s against a first build of 30.0 s"
    assert tf.refit_verdict(saved, line).startswith(words)


def test_engines_are_counted_from_the_compiled_modules_children():
    module = types.SimpleNamespace(
        named_children=lambda: [("_run_on_acc_0", 1), ("_run_on_gpu_1", 2), ("_run_on_acc_2", 3)]
    )
    assert tf.engine_counts({"static": module, "failed": RuntimeError("no")}) == {"static": 2}


def test_shared_dims_without_torch_tensorrt_says_so():
    with pytest.raises(SkipStep, match="no Torch-TensorRT here"):
        tf.check_shared_dims(None)


def post_lowering():  # named as Torch-TensorRT's function: the innermost labelled one counts
    time.sleep(0.2)


def refit_module_weights():
    post_lowering()


class TorchTensorRTModule:  # a method counts by its qualified name
    def setup_engine(self):
        time.sleep(0.1)


def test_a_build_is_split_by_the_phase_its_stack_was_in():
    from helpers.profiling import sampled_phases

    with sampled_phases(tf.PHASES, interval=0.005) as samples:
        refit_module_weights()
        TorchTensorRTModule().setup_engine()
        time.sleep(0.1)  # in no phase: "other"
    assert samples["lowering"] > samples["other"] > 0 and samples["engine set-up"] > 0
    assert "refit, the rest (serialize, bookkeeping)" not in samples
    assert 0.1 < samples["lowering"] < 0.4  # seconds, not counts
    line = tf.phase_line("refit", 3.0, Counter({"lowering": 0.2, "other": 0.1}))
    assert line == "refit 3.0 s: lowering 2.0 s, other 1.0 s"
    assert tf.phase_line("build", 0.004, Counter()) == "build 0.0 s: too short to sample"


def cache_starts(written_s, reused_s, files=(3, 0)):
    return [
        {"path": "torch.compile", "to_first_output_s": 9.0},
        {"path": "rebuild, cache written", "compile_s": written_s, "cache_files_written": files[0]},
        {"path": "rebuild, cache reused", "compile_s": reused_s, "cache_files_written": files[1]},
    ]


def test_cache_result_reads_the_two_cached_rebuilds():
    line, verdict = tf.cache_result(cache_starts(20.4, 31.5))
    assert (
        line == "compile_s: 20.4 s writing the cache, 31.5 s reusing it (files written: 3, then 0)"
    )
    assert verdict == "does not hold here: reusing the cache took 1.54x longer"
    assert tf.cache_result(cache_starts(30.0, 10.0))[1].startswith("holds: ")


def test_cache_result_calls_a_second_write_a_miss():
    _, verdict = tf.cache_result(cache_starts(30.0, 10.0, files=(3, 3)))
    assert (
        verdict
        == "not testable here: the second start wrote 3 files: it rebuilt instead of reusing"
    )


def test_cache_result_without_both_rebuilds():
    failed = [{"path": "rebuild, cache written", "error": "rebuild failed: boom"}]
    assert tf.cache_result(failed) == (
        "compile_s: no pair of rebuilds with the cache ran",
        "not judged: a start with the cache failed before its first output (table above)",
    )
    assert tf.cache_result([], "no GPU")[1] == "not testable here: no GPU"


def test_a_save_without_dynamic_shapes_is_named_before_the_batch_is_trusted():
    """2.11 added ``dynamic_shapes`` to ``save``; 2.8-2.10 swallow it in ``**kwargs``."""

    def save_2_11(module, file_path, *, arg_inputs=None, retrace=True, dynamic_shapes=None, **kw):
        return None

    def save_2_10(module, file_path, *, arg_inputs=None, retrace=True, **kwargs):
        return None

    assert tf.save_dynamic_note(types.SimpleNamespace(__version__="2.11.0", save=save_2_11)) == ""
    note = tf.save_dynamic_note(types.SimpleNamespace(__version__="2.10.0", save=save_2_10))
    assert "2.10.0" in note and "only the batch it was saved with" in note
