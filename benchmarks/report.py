"""What the benchmarks print and keep: aligned rows beside their references and targets,
the machine they ran on, their figures merged into benchmarks/results/*.json, the growth plot.
What measures is benchmarks/harness.py."""

from __future__ import annotations

import json
import os
import platform
import sys
import time

from benchmarks.harness import RESULTS


def row(label: str, value: str, reference: str, ratio: str, target: str) -> None:
    print(f"{label:<30}{value:>14}{reference:>24}{ratio:>14}  {target}")


def header(title: str, columns: tuple[str, str, str] = ("kpca", "reference", "ratio")) -> None:
    print(f"\n== {title}")
    print(f"{'':<30}{columns[0]:>14}{columns[1]:>24}{columns[2]:>14}  target")


def plot_growth(table: list, exponents: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for axis, key, ax, label in (("n", "n", axes[0], "frames n (540 x 960)"), ("d", "d", axes[1], "pixels d (n = 69)")):
        chosen = [e for e in table if e["axis"] == axis]
        for stage, marker in (("fit", "o"), ("encode", "s"), ("decode", "^")):
            ax.loglog(
                [e[key] for e in chosen],
                [e[stage]["seconds"] for e in chosen],
                marker=marker,
                label=f"{stage} (slope {exponents[f'{stage} vs {axis}']:.2f})",
            )
        ax.set_xlabel(label)
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize="small")
    figure.suptitle(f"kpca growth, {platform.machine()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    figure.tight_layout()
    RESULTS.mkdir(parents=True, exist_ok=True)
    figure.savefig(RESULTS / "growth.png", dpi=100)


def run_benchmarks(benchmarks: dict, argv, results_name: str) -> dict:
    """Run the benchmarks named in `argv` (default: all of `benchmarks`), print the machine,
    and merge their figures into benchmarks/results/`results_name` (a partial run updates its
    own benchmarks only); returns the figures."""
    names = (argv if argv is not None else sys.argv[1:]) or list(benchmarks)
    unknown = [n for n in names if n not in benchmarks]
    if unknown:
        raise SystemExit(f"unknown benchmark {unknown}; choose from {list(benchmarks)}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    results: dict = {"date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count()}
    for name in names:
        benchmarks[name](results)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / results_name
    previous = json.loads(path.read_text()) if path.exists() else {}
    previous.update(results)
    path.write_text(json.dumps(previous, indent=2, default=str))
    return results
