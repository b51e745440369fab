"""Build the results table (markdown) from the notebooks' JSON records.

python -m helpers.tools.report results/records --out results/RESULTS.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

from helpers.accuracy import OutputDiff
from helpers.records import load_records, number_of, workload_tag
from helpers.results import PathResult, results_table
from helpers.roofline import achieved_tflops
from helpers.timing import LatencyStats


def path_result(data: dict) -> PathResult:
    """A comparison row read back from a record (``dataclasses.asdict`` wrote it)."""
    fields = {k: v for k, v in data.items() if k in PathResult.__dataclass_fields__}
    fields["latency"] = LatencyStats(**data["latency"]) if data.get("latency") else None
    for name in ("diff", "settled_diff"):
        fields[name] = OutputDiff(**data[name]) if data.get(name) else None
    return PathResult(**fields)


def workload_heading(record: dict) -> str:
    """Model, workload, device, versions, TensorRT build and weights: what numbers depend on."""
    p, env = record["parameters"], record["environment"]
    trt = (
        f"torch_tensorrt {env['torch_tensorrt']} ({env.get('tensorrt_build')} TensorRT "
        f"{env.get('tensorrt')})"
        if env.get("torch_tensorrt")
        else "no TensorRT"
    )
    return (
        f"{p['model_name']}, batch {p['batch_size']} x {p['seq_len']} on "
        f"{env.get('device_name', '?')} ({env.get('device', '?')}, driver {env.get('driver')}), "
        f"torch {env.get('torch', '?')}, {trt}; "
        f"weights: {record.get('model', {}).get('weights', 'not recorded')}"
    )


#: Parameters that make two records' baselines comparable.
WORKLOAD = ("model_name", "batch_size", "seq_len")
CLAIMS_START, CLAIMS_END = "<!-- claims:start -->", "<!-- claims:end -->"


def quoted(claim: dict) -> str:
    """The claim in quote marks if it is the source's words, plain if it describes them."""
    if not claim.get("quote", True):
        return claim["claim"]
    by = f"{claim['source']}: " if claim.get("source") else ""
    return f"{by}“{claim['claim']}”"


def claims_table(records: list[dict]) -> str:
    """Markdown: every source claim a notebook judged, its measurement and its verdict."""
    rows = []
    for record in records:
        p, env = record["parameters"], record["environment"]
        model = str(p.get("model_name", "?")).rstrip("/").split("/")[-1]  # 08 runs at two
        where = f"{model}, {p['batch_size']} x {p['seq_len']}, {env.get('device_name', '?')}"
        for claim in record.get("claims", []):
            cells = [record["notebook"], where, quoted(claim)]
            cells += [claim["measured"], claim["verdict"]]
            rows.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if not rows:
        return "No notebook has judged a claim yet (they need a GPU with Torch-TensorRT).\n"
    header = [
        "| notebook | model, workload, device | source claim | this run | verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    return "\n".join([*header, *rows]) + "\n"


#: Words and characters a cell of the README's short claims table keeps, and whether it
#: may end at a clause: the claim, this run, the verdict.
SHORT_CELLS = ((7, 50, False), (9, 50, True), (12, 60, True))
#: Where every cell of the claims table is written out in full.
FULL_TABLE = "results/RESULTS.md"


def shortened(text: str, words: int, chars: int = 1000, clauses: bool = True) -> str:
    """``text`` if it has at most ``words`` words and ``chars`` characters, else its start
    and "…".

    With ``clauses``, it ends at the last clause (", ", ": ", "; ") that keeps at least half
    of ``words``; it never ends inside an open parenthesis or bracket.
    """
    parts = text.split()
    if len(parts) <= words and len(text) <= chars:
        return text

    def closed(head: list[str]) -> bool:
        joined = " ".join(head)
        return all(joined.count(a) == joined.count(b) for a, b in ("()", "[]"))

    head = parts[:words]
    while head and (len(" ".join(head)) > chars or not closed(head)):
        head = head[:-1]
    ends = [i + 1 for i, word in enumerate(head) if word[-1] in ",:;" and closed(head[: i + 1])]
    if clauses and ends and ends[-1] * 2 >= words:
        head = head[: ends[-1]]
    return " ".join(head).rstrip(",:;") + " …"


def short_claims_table(records: list[dict]) -> str:
    """Markdown for the README: one short line per cell, one workload per claim.

    The core lessons' claims, each at its notebook's first workload (records in file
    order), the notebook named once for its rows; cells cut short end in "…". FULL_TABLE
    has every workload, the deep dives' claims and every cell in full.
    """
    rows, seen = [], set()
    core = [r for r in records if r.get("claims") and not number_of(r["notebook"]).endswith("d")]
    devices = {r["environment"].get("device_name", "?") for r in core}
    for record in core:
        p = record["parameters"]
        model = str(p.get("model_name", "?")).rstrip("/").split("/")[-1]
        where = f"{record['notebook'][:3]}{model}, {p['batch_size']} x {p['seq_len']}"
        if len(devices) > 1:
            where += f", {record['environment'].get('device_name', '?')}"
        for index, claim in enumerate(record.get("claims", [])):
            if (record["notebook"], index) in seen:
                continue
            seen.add((record["notebook"], index))
            texts = (claim["claim"], claim["measured"], claim["verdict"])
            said, measured, verdict = (
                shortened(t, *c) for t, c in zip(texts, SHORT_CELLS, strict=True)
            )
            shown = "" if rows and rows[-1][1] == where else where  # blank: as above
            cells = [shown, quoted({**claim, "claim": said}), measured, verdict]
            rows.append(("| " + " | ".join(c.replace("|", "/") for c in cells) + " |", where))
    if not rows:
        return "No notebook has judged a claim yet (they need a GPU with Torch-TensorRT).\n"
    on = f" All ran on {devices.pop()}." if len(devices) == 1 else ""
    header = [
        f"Cells cut short end in …; [`{FULL_TABLE}`]({FULL_TABLE}) has them in full, with "
        f"every workload and the deep dives'. A blank notebook cell: as above.{on}",
        "",
        "| notebook, model, workload, GPU | source claim | this run | verdict |",
        "| --- | --- | --- | --- |",
    ]
    return "\n".join([*header, *(row for row, _ in rows)]) + "\n"


def with_claims(text: str, records: list[dict]) -> str:
    """``text`` with the short claims table between its claims markers replaced."""
    if CLAIMS_START not in text or CLAIMS_END not in text:
        raise ValueError(f"markers {CLAIMS_START} ... {CLAIMS_END} not found")
    head, rest = text.split(CLAIMS_START, 1)
    tail = rest.split(CLAIMS_END, 1)[1]
    return f"{head}{CLAIMS_START}\n{short_claims_table(records)}{CLAIMS_END}{tail}"


def benchmarks_table(records: list[dict]) -> str:
    """Markdown: per notebook-02 workload, the fastest verified path, the best TensorRT path's
    distance from it, the shares of the measured FP16 ceiling, the eager FP32 baseline's
    spread across the notebooks that measured it, and whether the targets were met."""
    lines = [
        "| workload, device | fastest verified path | its median | best TensorRT path / fastest "
        "| best % of FP16 ceiling | best TensorRT % of FP16 ceiling "
        "| eager FP32 across notebooks | target |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for record in records:
        if record["notebook"] != "02-fp16-compile" or "flops" not in record:
            continue
        p, env = record["parameters"], record["environment"]
        rows = record["results"] + record.get("cudagraph_results", [])
        timed = [r for r in map(path_result, rows) if r.latency]
        if not timed:
            continue
        best = min(timed, key=lambda r: r.latency.median_ms)
        engines = [r for r in timed if "tensorrt" in r.name]
        engine = min(engines, key=lambda r: r.latency.median_ms, default=None)
        ratio = engine.latency.median_ms / best.latency.median_ms if engine else None
        ceiling = record.get("ceilings_tflops", {}).get("fp16")

        best_share, engine_share = (
            100 * achieved_tflops(record["flops"], r.latency.median_ms) / ceiling
            if ceiling and r
            else None
            for r in (best, engine)
        )
        baselines = [
            r.latency.median_ms
            for other in records
            if all(other["parameters"].get(k) == p.get(k) for k in WORKLOAD)
            and other["environment"].get("device_name") == env.get("device_name")
            for r in map(path_result, other.get("results", []))
            if r.name == "eager fp32" and r.latency
        ]
        spread = f"{min(baselines):.3g}-{max(baselines):.3g} ms ({len(baselines)} notebooks)"
        if (p["batch_size"], p["seq_len"]) == (16, 32):
            met = best.latency.median_ms <= 0.55 and ratio is not None and ratio <= 1.1
        else:
            met = (best_share or 0) >= 65 and (engine_share or 0) >= 50
        lines.append(
            f"| {p['batch_size']} x {p['seq_len']}, {env.get('device_name', '?')} | {best.name} "
            f"| {best.latency.median_ms:.3f} ms "
            f"| {f'{ratio:.2f}x ({engine.name})' if engine else '-'} "
            f"| {f'{best_share:.0f} %' if best_share else '-'} "
            f"| {f'{engine_share:.0f} %' if engine_share else '-'} | {spread} "
            f"| {'met' if met else 'not met'} |"
        )
    return "\n".join(lines) + "\n" if len(lines) > 2 else "No notebook-02 records yet.\n"


def roofline_figures(records: list[dict]) -> list[str]:
    """Links to the roofline-by-batch figures of notebook 02's sweeps (figures/)."""
    tags = [
        f"{number_of(r['notebook'])}-roofline_"
        + workload_tag(
            r["parameters"]["model_name"], r["parameters"]["batch_size"], r["parameters"]["seq_len"]
        )
        for r in records
        if r["notebook"].startswith("02") and r.get("batch_sweep") and "flops" in r
    ]
    if not tags:
        return []
    lines = [
        "Achieved TFLOP/s by batch for each path of notebook 02's sweep, under the FP16 ceiling "
        "the run measured (`python -m helpers.tools.roofline_plot`):",
        "",
    ]
    return lines + [f"![{tag}](../figures/{tag}.png)" for tag in tags] + [""]


def build_report(records: list[dict]) -> str:
    """Markdown: one section per workload and device, one table per notebook."""
    if not records:
        return "No records found.\n"
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(workload_heading(record), []).append(record)
    lines = [
        "# Results",
        "",
        "Generated by `python -m helpers.tools.report` from JSON records; do not edit by hand. "
        "Latencies are per batch, medians of calls timed in interleaved rounds; a speed-up is "
        "the ratio to eager FP32 measured in the same notebook run, with the lowest and highest "
        "round-by-round ratio beside it. `call_mib` is the torch allocator's peak during the "
        "first call above what was already held; memory TensorRT allocates by itself, outside "
        "the torch allocator, is not in it.",
        "",
        "## The source's claims, judged by these runs",
        "",
        claims_table(records),
        "## Benchmarks",
        "",
        "The series' targets, set for the H200 (benchmarks, not timed tests): at 16 x 32 the "
        "fastest verified path at or under 0.55 ms and the best TensorRT path within 1.1x of "
        "it; at other workloads the best path at 65 % or more of the run's FP16 ceiling and the "
        "best TensorRT path at 50 % or more. The last column says whether this run met them. "
        "Each notebook times its own eager FP32 baseline, interleaved "
        "with the paths it compares; the column before it shows how far that baseline moved "
        "between the notebooks that ran the same model and workload on the same device.",
        "",
        benchmarks_table(records),
        *roofline_figures(records),
    ]
    for heading, group in groups.items():
        runs = sorted({r.get("run_id", "?") for r in group if r.get("results")})
        lines += [f"## {heading}", ""]
        if len(runs) > 1:
            lines += [f"**These tables mix {len(runs)} runs:** {', '.join(runs)}.", ""]
        elif runs:
            lines += [f"One run: {runs[0]}.", ""]
        for record in group:
            if not record.get("results"):
                continue
            p = record["parameters"]
            shown = ("warmup", "iterations", "max_seconds")
            settings = "".join(f"{key} {p[key]}, " for key in shown if key in p)
            table = results_table([path_result(r) for r in record["results"]])
            lines += [
                f"### {record['notebook']} ({settings}{record['created_utc']})",
                "",
                table.to_markdown(floatfmt=".3g"),
                "",
            ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="folder of JSON records")
    parser.add_argument("--out", type=Path, help="markdown file to write (default: print)")
    args = parser.parse_args(argv)
    if not args.records.is_dir():
        parser.error(f"{args.records} is not a folder of records")
    text = build_report(load_records(args.records))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
