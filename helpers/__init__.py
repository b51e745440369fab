"""What the lessons share and do not teach: timing, accuracy, workload, records, environment.

The lessons write the calls they teach (``torch_tensorrt.compile``, ``torch.compile``,
CUDA graphs, the timing loop) in their own cells; this package measures. Importing it
loads torch but no plotting or table library: ``helpers.plots`` and ``helpers.widgets``
are imported where a figure or a widget is drawn. Maintainers' tools live in
``helpers.tools`` (series runner, report, Colab stamping).
"""

from helpers import claims, records
from helpers.accuracy import (
    OutputDiff,
    check_accuracy,
    compare_outputs,
    nearest_neighbour_agreement,
)
from helpers.compiled import NotCompiledError, expect_compiled
from helpers.cuda_graphs import capture_cuda_graph
from helpers.environment import (
    caveats,
    device_free_mib,
    environment_report,
    format_report,
    resolve_device,
)
from helpers.errors import (
    AccuracyError,
    DeviceUnavailableError,
    ModelNotAvailableError,
    ParameterError,
    SeriesError,
    SkipStep,
    error_line,
)
from helpers.gpu import dtype_label, emulation, emulation_tag, gpu_features
from helpers.lesson import Lesson, start_lesson
from helpers.notebook_checks import check_notebook_values
from helpers.parameters import adjust, check_parameters
from helpers.profiling import CallProfile, format_profile, profile_calls
from helpers.records import output_path, save_record, workload_tag
from helpers.results import PathResult, gate_and_time, results_table, speedup_range
from helpers.roofline import achieved_tflops, count_flops, measure_ceilings
from helpers.timing import LatencyStats, benchmark_latency, synchronize, time_cold_call
from helpers.trt_compat import (
    import_tensorrt,
    import_torch_tensorrt,
    quiet_tensorrt_logs,
    setting_names,
    tensorrt_settings,
    tensorrt_status,
)
from helpers.workload import load_model, make_batch, max_sequence_length
