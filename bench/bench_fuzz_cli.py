"""The deep planted bugs as a user meets them: one ``envfactory fuzz`` process per bug and seed.

    python bench/bench_fuzz_cli.py --sets ledger,hotel,depot,garage --seeds 1,2,3 --budget 20

runs ``envfactory fuzz CONTRACT --target python:IMPL:BUG --time-budget 20 --seed S --format
json`` (default options otherwise) for every planted bug of the chosen sets, and the correct
implementation of each set, and prints per bug the runs that found it, the CPU seconds each whole
process used, the CPU seconds to the first finding (the run's wall seconds to it, scaled by the
share of a core the process had), and the shrunk trace lengths against the minimal length.

``--cpu-clock`` makes the budget CPU seconds instead of wall seconds (the run's clock is its own
process time), so that two versions can be compared on a machine whose load changes: a 20 s
budget then means what it means on an idle machine. Results are written as JSON Lines with
``-o`` and can be compared with ``--compare OLD.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_fuzz import CORRECT, DEEP, IMPLS  # noqa: E402

CPU_CLOCK = (
    "import sys, time, types\n"
    "import envfactory.fuzz.runner as runner\n"
    "runner.time = types.SimpleNamespace(**{**vars(time), 'monotonic': time.process_time})\n"
    "from envfactory.cli import main\n"
    "sys.argv[0] = 'envfactory'\n"
    "main()\n"
)
"""A child that runs the CLI with the fuzz runner's clock set to the process's CPU time."""


def run_one(contract: str, impl: str, cls: str, seed: int, budget: float, cpu_clock: bool) -> dict[str, Any]:
    spec = f"python:{IMPLS / impl}:{cls}"
    args = ["fuzz", str(IMPLS / contract), "--target", spec]
    args += ["--time-budget", f"{budget:g}", "--seed", str(seed), "--format", "json"]
    command = (
        [sys.executable, "-c", CPU_CLOCK, *args]
        if cpu_clock
        else [sys.executable, "-m", "envfactory.cli", *args]
    )
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    out, err = proc.communicate()
    wall = time.monotonic() - started
    try:
        doc = json.loads(out)
    except ValueError:
        return {"cls": cls, "seed": seed, "error": err.decode()[-400:], "wall": wall}
    return {"cls": cls, "seed": seed, "wall": wall, **_summary(doc)}


def _summary(doc: dict[str, Any]) -> dict[str, Any]:
    findings = doc.get("findings") or []
    seconds = doc.get("seconds") or 0.0
    return {
        "found": bool(findings),
        "lengths": sorted(len(f.get("steps") or ()) for f in findings),
        "first": doc.get("first_finding_seconds"),
        "seconds": seconds,
        "calls": doc.get("calls"),
        "cases": doc.get("test_cases"),
        "kinds": sorted({f.get("kind") for f in findings}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="ledger,hotel,depot,garage")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--bugs", default=None, help="comma-separated bug classes (default: all of the sets)")
    parser.add_argument("--no-correct", action="store_true", help="skip the correct implementations")
    parser.add_argument("--cpu-clock", action="store_true", help="the budget in CPU seconds")
    parser.add_argument("-o", "--output", default=None, help="append each run as a JSON line")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    wanted = set(args.bugs.split(",")) if args.bugs else None
    rows: list[dict[str, Any]] = []
    for name in args.sets.split(","):
        contract, impl = f"{name}.yaml", f"{name}_impl.py"
        bugs = [(cls, minimal) for cls, minimal in DEEP[name] if wanted is None or cls in wanted]
        if not args.no_correct and wanted is None:
            bugs.append((CORRECT[name], 0))
        for cls, minimal in bugs:
            for seed in seeds:
                before = os.times()
                row = run_one(contract, impl, cls, seed, args.budget, args.cpu_clock)
                after = os.times()
                cpu = (after.children_user - before.children_user) + (
                    after.children_system - before.children_system
                )
                share = cpu / row["wall"] if row.get("wall") else 1.0
                row.update(set=name, minimal=minimal, cpu=round(cpu, 2))
                if row.get("first") is not None:
                    # CPU seconds to the first finding: the run's clock times the share of a core
                    row["first_cpu"] = round(row["first"] * (1.0 if args.cpu_clock else share), 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.output:
                    with open(args.output, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
    report(rows)


def report(rows: list[dict[str, Any]]) -> None:
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by.setdefault((row["set"], row["cls"]), []).append(row)
    totals: dict[str, list[int]] = {}
    print()
    for (name, cls), runs in by.items():
        found = sum(1 for r in runs if r.get("found"))
        minimal = runs[0]["minimal"]
        lengths = [r["lengths"][0] for r in runs if r.get("lengths")]
        firsts = [r["first_cpu"] for r in runs if r.get("first_cpu") is not None]
        cpu = sum(r.get("cpu", 0.0) for r in runs)
        if minimal:
            total = totals.setdefault(name, [0, 0])
            total[0] += found
            total[1] += len(runs)
        label = "correct" if not minimal else f"min {minimal}"
        print(
            f"{name:8} {cls:16} {label:8} found {found}/{len(runs)}  shrunk {lengths}  "
            f"cpu-to-first {firsts}  cpu {cpu:.1f}s"
        )
    for name, (found, total) in totals.items():
        print(f"{name}: {found}/{total}")


if __name__ == "__main__":
    main()
