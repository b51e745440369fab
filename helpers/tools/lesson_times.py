"""Each lesson's time on the publishing GPU and its estimated time on a Colab T4.

A T4 was never available here, so its time is estimated from the T4-emulated run on an
H200 or H100 (``--emulate t4``): the share of that run with a kernel on the GPU (NVML's busy share)
is scaled by how much slower a T4's GPU is, the rest by how much slower Colab's host is.

    python -m helpers.tools.lesson_times      # rewrites the table in notebooks/README.md
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.records import number_of, project_root
from helpers.tools.series import notebooks
from helpers.tools.time_profile import profile_table

#: The dense FP16 tensor rate of an H200 or H100 over a T4's (989 / 65 TFLOP/s), and the
#: H200's memory bandwidth over a T4's (4.8 / 0.32 TB/s; an H100's is 10.5x): at most 15.
#: An upper factor: a kernel that keeps neither busy (a latency-bound one) slows down less.
GPU_FACTOR = 15.0
#: Colab's two vCPUs against the H200 machine's host: an assumption, not a measurement.
HOST_FACTOR = 2.0
#: A lesson longer than this on a T4, by the estimate, does not fit a workshop's slot.
LESSON_LIMIT_S = 600.0
MARKERS = ("<!-- lesson-times:start -->", "<!-- lesson-times:end -->")
PROFILE_MARKERS = ("<!-- time-profile:start -->", "<!-- time-profile:end -->")
DEEP_MARKERS = ("<!-- deep-dive-profile:start -->", "<!-- deep-dive-profile:end -->")


def t4_estimate_s(seconds: float, busy_share: float) -> float:
    """A T4's time for a run that took ``seconds`` on the H200, busy ``busy_share`` of it."""
    return seconds * (busy_share * GPU_FACTOR + (1 - busy_share) * HOST_FACTOR)


def notebook_of(key: str) -> str:
    """'08_llm_decoding_Llama-3.2-1B_b1_s256' -> '08' ('08d' for a deep dive)."""
    return number_of(key)


def default_runs(status: dict) -> dict[str, dict]:
    """Per notebook number, its ok run at the notebook's defaults (output_dir aside)."""
    runs = {}
    for key, entry in status.items():
        given = {k: v for k, v in entry.get("parameters", {}).items() if k != "output_dir"}
        if entry.get("status") == "ok" and not given:
            runs.setdefault(notebook_of(key), entry)
    return runs


def gpu_names(records: Path) -> dict[str, str]:
    """Per notebook number, the short name of the GPU its record was made on ('H200')."""
    names = {}
    for path in sorted(records.glob("*.json")):
        device = json.loads(path.read_text()).get("environment", {}).get("device_name", "")
        if device.startswith("NVIDIA "):  # 10 on one GPU runs in CPU processes: no GPU named
            names[number_of(path.stem)] = device.removeprefix("NVIDIA ").split()[0]
    return names


def with_gpu(seconds: float, gpu: str | None) -> str:
    """'87 s' with the GPU that took them, where known: '87 s (H200)'."""
    return f"{seconds:.0f} s" + (f" ({gpu})" if gpu else "")


def times_table(
    published: dict, emulated: dict, gpus: dict | None = None, emulated_gpus: dict | None = None
) -> str:
    """The markdown table: published seconds, the emulated run, its busy share, the T4 estimate,
    each run's seconds beside the GPU that took them."""
    h200, t4 = default_runs(published), default_runs(emulated)
    gpus, emulated_gpus = gpus or {}, emulated_gpus or {}
    lines = [
        "| notebook | published run | T4 limits emulated (its own run) | GPU busy "
        "| peak GPU GiB | T4, estimated |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for number in sorted(set(h200) | set(t4)):
        mine, emu = h200.get(number), t4.get(number)
        if emu is None or emu.get("gpu_busy_share") is None:
            emu_s = busy = peak = estimate = "not run yet"
        else:
            seconds, share = emu["seconds"], emu["gpu_busy_share"]
            estimate_s = t4_estimate_s(seconds, share)
            over = " (over 10 min)" if estimate_s > LESSON_LIMIT_S else ""
            emu_s, busy = with_gpu(seconds, emulated_gpus.get(number)), f"{100 * share:.0f} %"
            if not share and not emu["peak_gpu_gib"]:
                busy = "none: CPU processes"  # 10 with one GPU runs its mechanics on CPUs
            peak = f"{emu['peak_gpu_gib']:.1f}"
            minutes = f"{estimate_s / 60:.1f}" if over else f"{estimate_s / 60:.0f}"  # 10.3, not 10
            estimate = f"{minutes} min{over}"
        h200_s = with_gpu(mine["seconds"], gpus.get(number)) if mine else "not run"
        lines.append(f"| {number} | {h200_s} | {emu_s} | {busy} | {peak} | {estimate} |")
    return "\n".join(lines)


def write_table(readme: Path, table: str, markers: tuple[str, str] = MARKERS) -> None:
    """Put ``table`` between the ``markers`` of ``readme``."""
    start, end = markers
    text = readme.read_text()
    pattern = re.compile(f"{re.escape(start)}.*?{re.escape(end)}", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{readme} has no {start} ... {end} markers")
    readme.write_text(pattern.sub(lambda _: f"{start}\n{table}\n{end}", text))


def main() -> None:
    root = project_root()
    published = json.loads((root / "results" / "run-status.json").read_text())
    emulated_path = root / "results" / "t4-emulation" / "results" / "run-status.json"
    emulated = json.loads(emulated_path.read_text()) if emulated_path.exists() else {}
    readme = root / "notebooks" / "README.md"
    gpus = gpu_names(root / "results" / "records")
    emulated_gpus = gpu_names(emulated_path.parent / "records")
    write_table(readme, times_table(published, emulated, gpus, emulated_gpus))
    # the runner's own list: the lessons, not the .noisy/.running copies beside them
    write_table(readme, profile_table(notebooks(root, only="core")), PROFILE_MARKERS)
    deep = notebooks(root, only="deep-dives")
    write_table(readme, profile_table(deep, "the deep dives"), DEEP_MARKERS)
    print(f"wrote the lesson times into {root / 'notebooks' / 'README.md'}")


if __name__ == "__main__":
    main()
