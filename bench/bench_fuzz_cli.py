"""The deep planted bugs as a user meets them: one ``envfactory fuzz`` process per bug and seed.

    python bench/bench_fuzz_cli.py --sets ledger,hotel,depot,garage --seeds 1,2,3 --budget 20

runs ``envfactory fuzz CONTRACT --target python:IMPL:BUG --time-budget 20 --seed S --format
json`` (default options otherwise) for every planted bug of the chosen sets, and the correct
implementation of each set, and prints per bug the runs that found it, the CPU seconds each whole
process used, the CPU seconds to the first finding (the run's wall seconds to it, scaled by the
share of a core the process had), and the shrunk trace lengths against the minimal length.

``--bfcl`` fuzzes BFCL's eight executable API classes instead, as a user would (``envfactory fuzz
<function doc> --target python:bench/bfcl_edge_harness.py:<class> --only crash --time-budget 20``:
a plain factory, a fresh instance with the default scenario), and prints per class the methods
found crashing against those the independent harness (``bfcl_edge_harness.py``) shows; with
``--cpu-clock`` the run's clock counts the CPU time of its isolated target worker too.

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
from collections.abc import Callable
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
    "def workers():\n"
    "    import multiprocessing, os\n"
    "    tick = os.sysconf('SC_CLK_TCK')\n"
    "    usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "    seconds = usage.ru_utime + usage.ru_stime\n"
    "    for child in multiprocessing.active_children():\n"
    "        try:\n"
    "            with open(f'/proc/{child.pid}/stat') as fh:\n"
    "                fields = fh.read().rsplit(')', 1)[1].split()\n"
    "            seconds += (int(fields[11]) + int(fields[12])) / tick\n"
    "        except (OSError, ValueError, IndexError):\n"
    "            pass\n"
    "    return seconds\n"
    "cache = [-1.0, 0.0]\n"
    "def with_workers():\n"
    "    now = time.perf_counter()\n"
    "    if now - cache[0] > 0.05:\n"
    "        cache[0], cache[1] = now, workers()\n"
    "    return time.process_time() + cache[1]\n"
    "if sys.argv[1] != 'wall-clock':\n"
    "    import envfactory.fuzz.runner as runner, envfactory.fuzz.shrink as shrink\n"
    "    tick = with_workers if sys.argv[1] == 'cpu-clock+workers' else time.process_time\n"
    "    clock = types.SimpleNamespace(**{**vars(time), 'monotonic': tick})\n"
    "    runner.time = shrink.time = clock\n"
    "from envfactory.cli import main\n"
    "sys.argv[0:2] = ['envfactory']\n"
    "main()\n"
)
"""The child: the CLI (with the fuzz runner's clock set to the process's CPU time where asked, and
to that of the process and its worker processes with ``cpu-clock+workers``: a ``python:`` target
isolated in a worker answers each call while the fuzzer waits, so on an idle machine the run's
wall time is the CPU time of both), reporting the CPU seconds of the whole process and its
workers on its last line of stderr."""


def run_one(
    contract: str, impl: str, cls: str, seed: int, budget: float, cpu_clock: bool, site: str | None = None
) -> dict[str, Any]:
    spec = f"python:{IMPLS / impl}:{cls}"
    args = ["fuzz", str(IMPLS / contract), "--target", spec]
    args += ["--time-budget", f"{budget:g}", "--seed", str(seed), "--format", "json"]
    row, doc = run_cli(args, "cpu-clock" if cpu_clock else "wall-clock", site)
    row.update(cls=cls, seed=seed)
    if doc is None:
        return row
    row.update(_summary(doc))
    cpu = row["cpu"]
    if row["first"] is not None and cpu is not None:
        # CPU seconds to the first finding: the run's own clock, scaled by the share of a core
        # it had (under --cpu-clock that clock is CPU time already)
        row["first_cpu"] = round(row["first"] * (1.0 if cpu_clock else cpu / row["wall"]), 2)
    return row


def run_cli(args: list[str], clock: str, site: str | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One ``envfactory`` process (``CHILD``) with ``args``: its wall and CPU seconds, and its
    JSON output (None, with the error's tail in the row, if it printed none)."""
    command = [sys.executable, "-c", CHILD, clock, *args]
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
    row: dict[str, Any] = {"wall": round(wall, 2), "cpu": cpu}
    try:
        return row, json.loads(out)
    except ValueError:
        return {**row, "error": err.decode()[-400:]}, None


CRASH_KINDS = ("crash", "hang", "resource")


def run_bfcl(name: str, seed: int, budget: float, cpu_clock: bool, site: str | None = None) -> dict[str, Any]:
    """One BFCL class fuzzed as a user would: its function doc as the contract, a plain factory
    (a fresh instance with the default scenario: ``bfcl_edge_harness.py``) as the target, ``--only
    crash``; the methods with a crash, hang or resource finding."""
    from bfcl_edge_harness import func_doc_path

    spec = f"python:{ROOT / 'bench' / 'bfcl_edge_harness.py'}:{name}"
    args = ["fuzz", str(func_doc_path(name)), "--target", spec, "--only", "crash"]
    args += ["--time-budget", f"{budget:g}", "--seed", str(seed), "--format", "json"]
    row, doc = run_cli(args, "cpu-clock+workers" if cpu_clock else "wall-clock", site)
    row.update(set="bfcl", cls=name, seed=seed, minimal=0)
    if doc is None:
        return row
    found = [f for f in doc.get("findings") or [] if f.get("kind") in CRASH_KINDS]
    row.update(
        methods=sorted({f["operation"] for f in found}),
        by_kind={k: sorted({f["operation"] for f in found if f["kind"] == k}) for k in CRASH_KINDS},
        seconds=doc.get("seconds"),
        calls=doc.get("calls"),
        stopped=doc.get("stopped_by"),
    )
    return row


def report_bfcl(rows: list[dict[str, Any]], harness: dict[str, Any], budget: float) -> None:
    """Per class: methods found crashing, of those the independent harness shows and beyond."""
    shown_total = found_total = beyond_total = methods_total = 0
    for row in rows:
        shown = set(harness[row["cls"]]["crashing"])
        every = harness[row["cls"]]["methods"]
        got = set(row.get("methods") or ())
        shown_total += len(shown)
        found_total += len(shown & got)
        beyond_total += len(got - shown)
        methods_total += len(every)
        print(
            f"{row['cls']:20} seed {row['seed']}: {len(got):2} of {len(every):2} methods crash "
            f"({len(shown & got)} of the harness's {len(shown)}; missed {sorted(shown - got)}; "
            f"beyond {sorted(got - shown)}); run clock {row.get('seconds')} s for {budget:g} s, "
            f"wall {row['wall']} s, cpu {row['cpu']} s{'; ERROR ' + row['error'][-120:] if 'error' in row else ''}"
        )
    print(
        f"bfcl: crashes found in {found_total} of the {shown_total} methods the harness shows crashing "
        f"({found_total + beyond_total} of {methods_total} methods in all, {beyond_total} beyond the harness)"
    )


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
    parser.add_argument(
        "--bugs", default=None, help="comma-separated classes, planted or correct (default: all of the sets)"
    )
    parser.add_argument("--no-correct", action="store_true", help="skip the correct implementations")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time")
    parser.add_argument("--cpu-clock", action="store_true", help="the budget in CPU seconds")
    parser.add_argument(
        "--site",
        default=None,
        help="a folder holding another version's envfactory package (as bench_fuzz.throughput_of builds it)",
    )
    parser.add_argument("-o", "--output", default=None, help="append each run as a JSON line")
    parser.add_argument(
        "--bfcl",
        action="store_true",
        help="fuzz BFCL's eight executable API classes (--only crash) instead of the planted bugs",
    )
    parser.add_argument(
        "--harness",
        default=None,
        help="the independent harness's methods shown crashing (bfcl_edge_harness.py --json FILE); "
        "run here if not given",
    )
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="report two result files")
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.bfcl:
        bfcl(args, seeds)
        return
    wanted = set(args.bugs.split(",")) if args.bugs else None
    runs: list[tuple[str, str, int, int]] = []
    for name in args.sets.split(","):
        bugs = [(cls, minimal) for cls, minimal in DEEP[name] if wanted is None or cls in wanted]
        if not args.no_correct and (wanted is None or CORRECT[name] in wanted):
            bugs.append((CORRECT[name], 0))
        runs += [(name, cls, minimal, seed) for cls, minimal in bugs for seed in seeds]

    def one(run: tuple[str, str, int, int]) -> dict[str, Any]:
        name, cls, minimal, seed = run
        row = run_one(f"{name}.yaml", f"{name}_impl.py", cls, seed, args.budget, args.cpu_clock, args.site)
        row.update(set=name, minimal=minimal)
        return _emit(row, args.output)

    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, runs))
    report(rows)


def _emit(row: dict[str, Any], output: str | None) -> dict[str, Any]:
    """Print a run's row as it ends, and append it to ``output`` (JSON Lines) when given."""
    print(json.dumps(row), flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write(json.dumps(row) + "\n")
    return row


def bfcl(args: argparse.Namespace, seeds: list[int]) -> None:
    """The BFCL mode: every class on every seed, then the comparison with the harness."""
    from bfcl_edge_harness import CLASSES, harness

    shown = json.loads(Path(args.harness).read_text()) if args.harness else harness(3.0)

    def one(run: tuple[str, int]) -> dict[str, Any]:
        return _emit(run_bfcl(*run, args.budget, args.cpu_clock, args.site), args.output)

    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, [(name, seed) for seed in seeds for name in CLASSES]))
    report_bfcl(rows, shown, args.budget)


def compare(old: str, new: str) -> None:
    """Print two result files bug by bug, then the ratios on the runs both hold (the same set,
    class and seed): bugs found, traces at their minimal length, calls per run and CPU seconds
    per process, new against old."""
    rows = {path: _rows(path) for path in (old, new)}
    for path in (old, new):
        report(rows[path], label=path)
    before, after = ({(r["set"], r["cls"], r["seed"]): r for r in rows[path]} for path in (old, new))
    both = [key for key in before if key in after]
    if not both:
        print("\nno run in common")
        return
    planted = [key for key in both if before[key]["minimal"]]

    def counted(runs: dict[Any, dict[str, Any]], test: Callable[[dict[str, Any]], object]) -> int:
        return sum(1 for key in planted if test(runs[key]))

    def at_minimum(row: dict[str, Any]) -> bool:
        return bool(row.get("lengths")) and row["lengths"][0] == row["minimal"]

    def ratio(field: str) -> str:
        was, now = (sum(runs[key].get(field) or 0 for key in both) for runs in (before, after))
        return f"{now / was:.2f}x" if was else "n/a"

    def found(row: dict[str, Any]) -> bool:
        return bool(row.get("found"))

    print(
        f"\n{len(both)} runs in common ({len(planted)} on planted bugs), new against old: "
        f"found {counted(after, found)}/{len(planted)} against {counted(before, found)}/{len(planted)}, "
        f"at the minimal length {counted(after, at_minimum)} against {counted(before, at_minimum)}, "
        f"calls per run {ratio('calls')}, CPU per process {ratio('cpu')}"
    )
    for key in planted:
        if found(before[key]) != found(after[key]):
            print(f"  {'gained' if found(after[key]) else 'lost':6} {key[0]} {key[1]} seed {key[2]}")


def _rows(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line]


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
