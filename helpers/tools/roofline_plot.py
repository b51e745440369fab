"""Roofline by batch: achieved TFLOP/s of each path in notebook 02's batch sweep.

    python -m helpers.tools.roofline_plot results/records --out figures

Drawn from the records, so a published run can be replotted without a GPU. FLOPs are
counted once at the notebook's batch and scaled with the batch: at a fixed sequence length
every operation of an encoder is per sequence, so the scaling is exact.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from helpers.gpu import emulation_tag
from helpers.records import load_records, number_of
from helpers.roofline import achieved_tflops
from helpers.tools.notebook_run import record_workload_tag


def roofline_rows(record: dict) -> list[dict]:
    """Each timed sweep point with its achieved TFLOP/s and share of the FP16 ceiling."""
    flops_per_sequence = record["flops"] / record["parameters"]["batch_size"]
    ceiling = record.get("ceilings_tflops", {}).get("fp16")
    rows = []
    for point in record.get("batch_sweep", []):
        if point.get("p50_ms") is None or point["p50_ms"] != point["p50_ms"]:  # None or NaN
            continue
        tflops = achieved_tflops(flops_per_sequence * point["batch"], point["p50_ms"])
        share = 100 * tflops / ceiling if ceiling else None
        rows.append({**point, "tflops": tflops, "pct_of_fp16_ceiling": share})
    return rows


def plot_roofline(record: dict, path: Path | None = None):
    """Achieved TFLOP/s against batch per path, under the FP16 ceiling the run measured."""
    import matplotlib.pyplot as plt

    from helpers.plots import COLOURS, family

    rows = roofline_rows(record)
    p, env = record["parameters"], record["environment"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name in dict.fromkeys(row["path"] for row in rows):
        points = [row for row in rows if row["path"] == name]
        batches, rates = [r["batch"] for r in points], [r["tflops"] for r in points]
        ax.plot(batches, rates, marker="o", label=name, color=COLOURS[family(name)])
    ceiling = record.get("ceilings_tflops", {}).get("fp16")
    if ceiling:
        ax.axhline(ceiling, color="black", linestyle="--", linewidth=1)
        ax.text(1, ceiling, " FP16 matmul ceiling measured in this run", va="bottom", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"batch size (sequence length {p['seq_len']})")
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title(
        f"{p['model_name']} fp16, {env.get('device_name', '?')}, torch_tensorrt "
        f"{env.get('torch_tensorrt')} ({env.get('tensorrt_build')} build)"
        + (emulation_tag("t4") if env.get("emulated") else ""),  # the record's, not this process's
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--out", type=Path, default=Path("figures"))
    args = parser.parse_args(argv)
    for path in write_figures(load_records(args.records), args.out):
        print(f"wrote {path}")
    return 0


def write_figures(records: list[dict], out: Path) -> list[Path]:
    """The roofline of each of ``records`` that is notebook 02's (or its deep dive's) with a
    batch sweep.

    The series runner hands only the records of the notebooks that ran, so that an earlier
    run's figure is not redrawn (and republished) by a run that did not include 02.
    """
    written = []
    for record in records:
        if record["notebook"].startswith("02") and "flops" in record and roofline_rows(record):
            tag = record_workload_tag(record)
            path = out / f"{number_of(record['notebook'])}-roofline_{tag}.png"
            plot_roofline(record, path)
            written.append(path)
    return written


if __name__ == "__main__":
    raise SystemExit(main())
