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
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_fuzz import CORRECT, DEEP, IMPLS  # noqa: E402

CHILD = (
    "import atexit, resource, sys, time, types\n"
    "def cpu():\n"
    "    seconds = 0.0\n"
    "    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):\n"
    "        usage = resource.getrusage(who)\n"
    "        seconds += usage.ru_utime + usage.ru_stime\n"
    "    sys.stderr.write(f'\\ncpu-seconds {seconds}\\n')\n"
    "atexit.register(cpu)\n"
    "if sys.argv[1] == 'cpu-clock':\n"
    "    import envfactory.fuzz.runner as runner, envfactory.fuzz.shrink as shrink\n"
    "    clock = types.SimpleNamespace(**{**vars(time), 'monotonic': time.process_time})\n"
    "    runner.time = shrink.time = clock\n"
    "from envfactory.cli import main\n"
    "sys.argv[0:2] = ['envfactory']\n"
    "main()\n"
)
"""The child: the CLI (with the fuzz runner's clock set to the process's CPU time where asked),
reporting the CPU seconds of the whole process and its workers on its last line of stderr."""


def run_one(
    contract: str, impl: str, cls: str, seed: int, budget: float, cpu_clock: bool, site: str | None = None
) -> dict[str, Any]:
    spec = f"python:{IMPLS / impl}:{cls}"
    args = ["fuzz", str(IMPLS / contract), "--target", spec]
    args += ["--time-budget", f"{budget:g}", "--seed", str(seed), "--format", "json"]
    command = [sys.executable, "-c", CHILD, "cpu-clock" if cpu_clock else "wall-clock", *args]
    started = time.monotonic()
    # run from a folder holding no package: ``-c`` and ``-m`` put the working folder first on the
    # path, and the checkout's own ``envfactory/`` would shadow the one ``site`` points at
    env = {**os.environ, "PYTHONPATH": site} if site else None
    with tempfile.TemporaryDirectory(prefix="envfactory-bench-") as cwd:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
        out, err = proc.communicate()
    wall = time.monotonic() - started
    last = err.decode().strip().splitlines()[-1:] or [""]
    cpu = float(last[0].split()[1]) if last[0].startswith("cpu-seconds ") else None
    row: dict[str, Any] = {"cls": cls, "seed": seed, "wall": round(wall, 2), "cpu": cpu}
    try:
        doc = json.loads(out)
    except ValueError:
        return {**row, "error": err.decode()[-400:]}
    row.update(_summary(doc))
    if row["first"] is not None and cpu is not None:
        # CPU seconds to the first finding: the run's own clock, scaled by the share of a core
        # it had (under --cpu-clock that clock is CPU time already)
        row["first_cpu"] = round(row["first"] * (1.0 if cpu_clock else cpu / wall), 2)
    return row


def _summary(doc: dict[str, Any]) -> dict[str, Any]:
    findings = doc.get("findings") or []
    seconds = doc.get("seconds") or 0.0
    return {
        "found": bool(findings),
        "lengths": sorted(int(f.get("steps") or 0) for f in findings),
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
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time")
    parser.add_argument("--cpu-clock", action="store_true", help="the budget in CPU seconds")
    parser.add_argument(
        "--site",
        default=None,
        help="a folder holding another version's envfactory package (as bench_fuzz.throughput_of builds it)",
    )
    parser.add_argument("-o", "--output", default=None, help="append each run as a JSON line")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="report two result files")
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    seeds = [int(s) for s in args.seeds.split(",")]
    wanted = set(args.bugs.split(",")) if args.bugs else None
    runs: list[tuple[str, str, int, int]] = []
    for name in args.sets.split(","):
        bugs = [(cls, minimal) for cls, minimal in DEEP[name] if wanted is None or cls in wanted]
        if not args.no_correct and wanted is None:
            bugs.append((CORRECT[name], 0))
        runs += [(name, cls, minimal, seed) for cls, minimal in bugs for seed in seeds]

    def one(run: tuple[str, str, int, int]) -> dict[str, Any]:
        name, cls, minimal, seed = run
        row = run_one(f"{name}.yaml", f"{name}_impl.py", cls, seed, args.budget, args.cpu_clock, args.site)
        row.update(set=name, minimal=minimal)
        print(json.dumps(row), flush=True)
        if args.output:
            with open(args.output, "a") as fh:
                fh.write(json.dumps(row) + "\n")
        return row

    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, runs))
    report(rows)


def compare(old: str, new: str) -> None:
    """Print two result files side by side, bug by bug."""
    for path in (old, new):
        report([json.loads(line) for line in Path(path).read_text().splitlines() if line], label=path)


def report(rows: list[dict[str, Any]], label: str = "") -> None:
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by.setdefault((row["set"], row["cls"]), []).append(row)
    totals: dict[str, list[int]] = {}
    print(f"\n{label}")
    for (name, cls), runs in by.items():
        found = sum(1 for r in runs if r.get("found"))
        minimal = runs[0]["minimal"]
        lengths = [r["lengths"][0] for r in runs if r.get("lengths")]
        firsts = [r["first_cpu"] for r in runs if r.get("first_cpu") is not None]
        cpu = sum(r.get("cpu") or 0.0 for r in runs)
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
