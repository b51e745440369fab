"""The Torch-TensorRT features its documentation leads with, on whichever version is here.

What fell back to PyTorch, engine caching, refitting and shared dynamic dimensions each
changed across versions; the notebooks call the real API and use these functions to see
what happened and to skip, with the reason, where the installed version lacks a feature.
Every function takes the ``torch_tensorrt`` module, so that tests can hand it a fake one.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from packaging.version import Version

from helpers.claims import NOTICEABLE  # two single starts: a smaller gap is no difference
from helpers.errors import SkipStep
from helpers.profiling import sampled_phases


@dataclass(frozen=True)
class Partition:
    """One graph as Torch-TensorRT split it: the operators, the engines, what ran in PyTorch."""

    total_ops: int
    supported_ops: int
    engines: int
    in_pytorch: Counter = field(default_factory=Counter)  # operator -> nodes left to PyTorch


def _operator(node_line: str) -> str:
    """'Node: torch.ops.aten.gather.default, with layer location: ...' -> 'aten.gather.default'."""
    name = node_line.removeprefix("Node: ").split(",")[0]
    return name.removeprefix("torch.ops.")


@contextlib.contextmanager
def partitions(torch_tensorrt) -> Iterator[list[Partition]]:
    """Collect how each graph compiled inside the block was split.

    Torch-TensorRT builds a report of every partitioning (its "dry run" statistics) and
    hands it to ``dryrun_stats_display``, which only logs it unless ``dryrun=True``; the
    report is read there, for ``torch_tensorrt.compile`` and ``backend="tensorrt"`` alike.
    The list stays empty on a version without that report.
    """
    compiler = getattr(getattr(torch_tensorrt, "dynamo", None), "_compiler", None)
    original = getattr(compiler, "dryrun_stats_display", None)
    seen: list[Partition] = []
    if original is None:
        yield seen
        return

    def record(tracker, *args, **kwargs):
        seen.append(
            Partition(
                total_ops=tracker.total_ops_in_graph,
                supported_ops=tracker.supported_ops_in_graph,
                engines=tracker.tensorrt_graph_count,
                in_pytorch=Counter(map(_operator, tracker.to_run_in_torch)),
            )
        )
        return original(tracker, *args, **kwargs)

    compiler.dryrun_stats_display = record
    try:
        yield seen
    finally:
        compiler.dryrun_stats_display = original


def partition_line(seen: list[Partition]) -> str:
    """What ran as TensorRT and what fell back to PyTorch, in one line."""
    if not seen:
        return "no partition report (this version does not make one, or nothing was compiled)"
    left = sum((part.in_pytorch for part in seen), Counter())
    engines = sum(part.engines for part in seen)
    supported = sum(part.supported_ops for part in seen)
    total = sum(part.total_ops for part in seen)
    fell_back = ", ".join(f"{op} x{n}" for op, n in left.most_common(5)) or "nothing"
    return (
        f"{len(seen)} graph(s) into {engines} TensorRT engine(s); {supported} of {total} "
        f"operators supported; left to PyTorch: {fell_back}"
    )


def _has_setting(torch_tensorrt, name: str) -> bool:
    settings = getattr(getattr(torch_tensorrt, "dynamo", None), "CompilationSettings", None)
    return name in getattr(settings, "__dataclass_fields__", {})


def engine_cache_settings(torch_tensorrt, cache_dir: str) -> dict:
    """The keyword arguments that make ``compile`` save engines to ``cache_dir`` and reuse them.

    A cached engine is refitted on reuse (stored without weights on TensorRT 10.14+), so
    caching silently does nothing for an engine built with immutable weights (the default
    since 2.6, whose setting is ``immutable_weights``; 2.5 called it ``make_refittable``) or
    on a build without refit. SkipStep where this version cannot cache.
    """
    if not _has_setting(torch_tensorrt, "cache_built_engines"):
        raise SkipStep(f"torch_tensorrt {_version(torch_tensorrt)} has no engine cache (2.5+)")
    features = getattr(torch_tensorrt, "ENABLED_FEATURES", None)
    if features is not None and not getattr(features, "refit", True):
        raise SkipStep("this TensorRT build cannot refit, so cached engines would never be reused")
    kwargs = dict(cache_built_engines=True, reuse_cached_engines=True, engine_cache_dir=cache_dir)
    if _has_setting(torch_tensorrt, "immutable_weights"):
        kwargs["immutable_weights"] = False
    elif _has_setting(torch_tensorrt, "make_refittable"):
        kwargs["make_refittable"] = True
    return kwargs


def save_dynamic_note(torch_tensorrt) -> str:
    """'' where ``torch_tensorrt.save`` takes ``dynamic_shapes`` (2.11+), else why the batch
    of the saved program is not known to stay dynamic: older ``save`` drops unknown keywords
    (``**kwargs``), and 2.10 re-exports at the example inputs' shapes (``retrace=True``)."""
    if "dynamic_shapes" in inspect.signature(torch_tensorrt.save).parameters:
        return ""
    return (
        f"torch_tensorrt {_version(torch_tensorrt)}'s save has no dynamic_shapes (2.11+) and "
        "ignores it: the saved program may accept only the batch it was saved with"
    )


def _version(torch_tensorrt) -> str:
    return str(getattr(torch_tensorrt, "__version__", "0.0"))


def check_shared_dims(torch_tensorrt) -> None:
    """SkipStep unless ``Input(shared_dims=...)`` means something here (2.13+).

    Older versions accept any keyword in ``Input`` and ignore the ones they do not know,
    so passing it there would compile without the shared dimension, silently.
    """
    if torch_tensorrt is None:
        raise SkipStep("no Torch-TensorRT here")
    input_class = getattr(torch_tensorrt, "Input", None)
    try:
        text = inspect.getsource(input_class) if input_class else ""
    except (OSError, TypeError):  # a class without source: read its documentation
        text = inspect.getdoc(input_class) or ""
    if "shared_dims" in text or Version(_version(torch_tensorrt)).release[:2] >= (2, 13):
        return
    raise SkipStep(
        f"torch_tensorrt {_version(torch_tensorrt)} has no Input(shared_dims=...): it arrived "
        "in 2.13, and this version would ignore it; section 4's shared Dim does the same job"
    )


def engine_counts(built: dict) -> dict[str, int]:
    """TensorRT engines in each compiled module (its ``_run_on_acc`` children); the builds
    that are not modules (a skip, a failure) are left out."""
    return {
        name: sum("_run_on_acc" in child for child, _ in module.named_children())
        for name, module in built.items()
        if hasattr(module, "named_children")
    }


def watch_refits(mutable) -> list[dict]:
    """Record each refit and each (re)build of a ``MutableTorchTensorRTModule``, with its seconds.

    The module decides on its next call whether a weight change is refitted or rebuilt
    (and rebuilds when a refit fails); the events say which happened, not what was hoped.
    """
    events: list[dict] = []
    for method, kind in (("refit_gm", "refit"), ("compile", "build")):
        original = getattr(mutable, method)

        def timed(*args, _original=original, _kind=kind, **kwargs):
            start = time.perf_counter()
            with sampled_phases(PHASES) as samples:
                try:
                    return _original(*args, **kwargs)
                finally:
                    seconds = time.perf_counter() - start
                    events.append({"kind": _kind, "seconds": seconds, "samples": samples})

        # the module forwards unknown attributes to the PyTorch model: set it on the module itself
        object.__setattr__(mutable, method, timed)
    return events


#: Where a build or a refit spends its time: the qualified names of the Torch-TensorRT (2.11)
#: and torch functions doing each part. The innermost one on the stack counts, so a refit
#: inside a cache lookup is a refit; a native call counts for the function that made it.
PHASES = {
    "export": ("MutableTorchTensorRTModule.get_exported_program", "trace"),
    "lowering": ("ExportedProgram.run_decompositions", "pre_export_lowering", "post_lowering"),
    "partitioning": ("partition",),
    "network definition": ("TRTInterpreter._construct_trt_network_def",),
    "engine build": ("TRTInterpreter.run",),
    "weight map (refittable builds)": ("TRTInterpreter._save_weight_mapping",),
    "cache lookup": ("pull_cached_engine",),
    "cache write": ("insert_engine_to_cache",),
    "weights into the engine": ("_refit_single_trt_engine_with_gm",),
    "refit, the rest (serialize, bookkeeping)": ("refit_module_weights",),
    "engine set-up": ("TorchTensorRTModule.setup_engine",),
}


def phase_line(kind: str, seconds: float, samples: Counter) -> str:
    """A build's or a refit's seconds split in the shares of sampled time spent in each phase."""
    total = sum(samples.values())
    if not total:
        return f"{kind} {seconds:.1f} s: too short to sample"
    ranked = sorted(samples.items(), key=lambda item: -item[1])
    return f"{kind} {seconds:.1f} s: " + ", ".join(
        f"{phase} {seconds * part / total:.1f} s" for phase, part in ranked
    )


def refit_line(events: list[dict]) -> tuple[str, float | None]:
    """What the weight change cost against the first build (the first event), and the share
    of the build's time it saved (None where no refit alone did the change)."""
    if not events or events[0]["kind"] != "build":
        return "no first build was recorded: watch the module before its first call", None
    build_s, after = events[0]["seconds"], events[1:]
    refits = [e["seconds"] for e in after if e["kind"] == "refit"]
    rebuilds = [e["seconds"] for e in after if e["kind"] == "build"]
    if rebuilds:  # a changed structure, or a failed refit, rebuilds
        spent = sum(refits) + sum(rebuilds)
        return (
            f"rebuilt, not refitted: {spent:.1f} s against a first build of {build_s:.1f} s",
            None,
        )
    if not refits:
        return "nothing was refitted: the module saw no weight change", None
    saved = 1 - refits[-1] / build_s
    return (
        f"refit in {refits[-1]:.2f} s against a first build of {build_s:.1f} s: {_share(saved)}",
        saved,
    )


def _share(saved: float) -> str:
    """A refit's time against the build's, said plainly whichever took longer."""
    return f"{100 * saved:.0f} % less time" if saved >= 0 else f"{1 - saved:.2f}x the build's time"


#: Torch-TensorRT's documentation, quoted exactly: the engine-caching example, and the
#: weight-refit design page ("refit ... copies new weight values into the already-built engine,
#: which is ...").
CACHE_CLAIM = (
    "Engine caching can significantly speed up subsequent model compilations reusing "
    "previously built TensorRT engines."
)
REFIT_CLAIM = "typically 80–95% faster than a full rebuild"
#: "Significantly": the reused compile must take at most half the time of the first one.
SIGNIFICANT = 2.0


def cache_verdict(written_s: float | None, reused_s: float | None, why_not: str = "") -> str:
    """The documentation's caching claim against two fresh processes' compile seconds: the
    first writes the cache, the second may reuse it (``why_not``: why no cache was tried)."""
    if why_not:
        return f"not testable here: {why_not}"
    if written_s is None or reused_s is None:
        return "not judged: a start with the cache failed before its first output (table above)"
    ratio = written_s / reused_s
    if ratio >= SIGNIFICANT:
        return f"holds: the compile reusing the cache took {ratio:.1f}x less time"
    if ratio >= NOTICEABLE:
        return f"faster, not significantly: {ratio:.2f}x less time, under {SIGNIFICANT:.0f}x"
    if ratio > 1 / NOTICEABLE:
        return f"does not hold here: within {NOTICEABLE}x of the compile that wrote it"
    return f"does not hold here: reusing the cache took {1 / ratio:.2f}x longer"


def cache_result(starts: list[dict], why_not: str = "") -> tuple[str, str]:
    """This run's line and the verdict, from the two rebuilds labelled "rebuild, cache ..."."""
    cached = {s["path"]: s for s in starts if s["path"].startswith("rebuild, cache")}
    written = cached.get("rebuild, cache written", {})
    reused = cached.get("rebuild, cache reused", {})
    written_s, reused_s = written.get("compile_s"), reused.get("compile_s")
    if not (written_s and reused_s):
        return "compile_s: no pair of rebuilds with the cache ran", cache_verdict(
            None, None, why_not
        )
    files = written.get("cache_files_written"), reused.get("cache_files_written")
    line = (
        f"compile_s: {written_s:.1f} s writing the cache, {reused_s:.1f} s reusing it"
        f" (files written: {files[0]}, then {files[1]})"
    )
    if not (files[0] and files[1] == 0):  # a miss is not a reuse
        why_not = (
            why_not or f"the second start wrote {files[1]} files: it rebuilt instead of reusing"
        )
    return line, cache_verdict(written_s, reused_s, why_not)


def refit_verdict(saved: float | None, line: str) -> str:
    """The documentation's refit claim against ``refit_line``'s share of build time saved."""
    if saved is None:  # rebuilt, not refitted, or nothing changed: the line says which
        return f"not judged: {line.split(':')[0]}"
    percent = _share(saved) + (" than the first build" if saved >= 0 else "")
    if saved > 0.95:
        return f"holds, and more: {percent}"
    if saved >= 0.80:
        return f"holds: {percent}"
    return f"does not hold here: {percent}"
