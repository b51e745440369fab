"""Shared tools of the notebook series: the notebooks teach, this package measures.

Modules, one job each: ``models`` (load + batch), ``timing`` (latency),
``compare`` (accuracy), ``compile`` (fast paths), ``tensorrt`` (version dialects),
``benchmark`` (one path end to end), ``roofline`` (FLOPs and ceilings), ``plots``,
``environment``, ``records``, ``report``, ``series`` (run everything), ``widgets``
(explore instead of rerun) and ``colab`` (the notebooks' Colab cells).
"""

from helpers.benchmark import PathResult, measure_path, results_frame
from helpers.compare import (
    AccuracyError,
    OutputDiff,
    check_accuracy,
    compare_outputs,
    nearest_neighbour_agreement,
)
from helpers.compile import (
    CompiledModel,
    capture_cuda_graph,
    compile_tensorrt,
    compile_torch,
    model_in_precision,
)
from helpers.environment import environment_report, format_report, in_colab, resolve_device
from helpers.errors import PrecisionError, SkipPath, TensorRTUnavailableError, check_precision
from helpers.models import (
    LoadedModel,
    ModelNotAvailableError,
    WorkloadError,
    load_model,
    make_batch,
    max_sequence_length,
    validate_workload,
)
from helpers.paths import figure_path, project_root
from helpers.plots import plot_abs_diff_kde, plot_latency
from helpers.records import save_record, workload_tag
from helpers.roofline import achieved_tflops, count_flops, measure_ceilings, roofline_ms
from helpers.tensorrt import tensorrt_status
from helpers.timing import LatencyStats, benchmark_latency, time_single_call

__all__ = [
    "AccuracyError",
    "CompiledModel",
    "LatencyStats",
    "LoadedModel",
    "ModelNotAvailableError",
    "OutputDiff",
    "PathResult",
    "PrecisionError",
    "SkipPath",
    "TensorRTUnavailableError",
    "WorkloadError",
    "achieved_tflops",
    "benchmark_latency",
    "capture_cuda_graph",
    "check_accuracy",
    "check_precision",
    "compare_outputs",
    "compile_tensorrt",
    "compile_torch",
    "count_flops",
    "environment_report",
    "figure_path",
    "format_report",
    "in_colab",
    "load_model",
    "make_batch",
    "max_sequence_length",
    "measure_ceilings",
    "measure_path",
    "model_in_precision",
    "nearest_neighbour_agreement",
    "plot_abs_diff_kde",
    "plot_latency",
    "project_root",
    "resolve_device",
    "results_frame",
    "roofline_ms",
    "save_record",
    "tensorrt_status",
    "time_single_call",
    "validate_workload",
    "workload_tag",
]
