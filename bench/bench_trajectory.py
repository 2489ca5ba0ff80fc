"""Reading trajectory files and importing agent logs, against the obvious implementations.

Writes, in a temporary folder, trajectory files totalling ``--steps`` steps (JSON Lines and a
``.json`` list) and an OpenAI chat log of as many calls, then times in one process run:

- ``read_trajectories`` on the JSON Lines file against two baselines: ``json.loads`` per line
  with no checks at all (a floor), and ``json.loads`` plus the published JSON Schema checked with a
  cached ``jsonschema`` validator (the same rules, the usual way; no models built);
- the streamed ``.json`` list against ``json.load`` of the whole file (which holds it in memory);
- ``importers.read("openai-chat")`` against ``json.loads`` per line.

Prints absolute rates (CPU seconds of this process) and the ratios. Target: reading with all
checks at least 3x the jsonschema baseline.

    python bench/bench_trajectory.py [--steps N]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema

from envfactory.importers import read
from envfactory.trajectory import Trajectory, read_trajectories, trajectory_schema


def _trajectory(rng: random.Random, index: int, steps: int) -> dict[str, Any]:
    calls = []
    for i in range(steps):
        pet = {"id": rng.randrange(10**6), "name": f"pet{i}", "price": rng.randrange(100), "tags": ["a", "b"]}
        step: dict[str, Any] = {"tool": rng.choice(["addPet", "getPet", "deletePet"]), "input": pet}
        if rng.random() < 0.7:
            step["output"] = dict(pet, created=True)
            step["status"] = 200
        if rng.random() < 0.05:
            step["input"] = {"petId": {"$var": f"p{i}"}}
        calls.append(step)
    return {"id": f"t{index}", "seed": index, "initial": {"user": "ann"}, "steps": calls}


def _chat(rng: random.Random, index: int, steps: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "manage my pets"}]
    for i in range(steps):
        args = {"id": rng.randrange(10**6), "name": f"pet{i}"}
        call_id = f"call_{index}_{i}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "addPet", "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(args)})
    return {"id": f"c{index}", "messages": messages}


def _timed(label: str, fn: Callable[[], int], steps: int) -> float:
    start = time.process_time()  # CPU seconds of this process: steadier on a busy machine
    count = fn()
    seconds = time.process_time() - start
    assert count > 0
    rate = steps / seconds
    print(f"  {label:<44} {seconds:7.2f} s  {rate:>12,.0f} steps/s")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200_000)
    args = parser.parse_args()
    rng = random.Random(0)
    per = 20
    count = args.steps // per
    steps = count * per
    with tempfile.TemporaryDirectory() as folder:
        lines = Path(folder) / "t.jsonl"
        listed = Path(folder) / "t.json"
        chat = Path(folder) / "chat.jsonl"
        trajs = [_trajectory(rng, i, per) for i in range(count)]
        lines.write_text("".join(json.dumps(t) + "\n" for t in trajs))
        listed.write_text(json.dumps(trajs, indent=1))
        chat.write_text("".join(json.dumps(_chat(rng, i, per)) + "\n" for i in range(count)))
        del trajs
        size = lines.stat().st_size / 1e6
        print(f"{count:,} trajectories, {steps:,} steps ({size:.0f} MB as JSON Lines)")

        validator = jsonschema.Draft202012Validator(trajectory_schema())

        def ours() -> int:
            n = 0
            for item in read_trajectories(lines):
                assert isinstance(item, Trajectory)
                n += 1
            return n

        def plain() -> int:
            with open(lines, "rb") as handle:
                return sum(1 for line in handle if json.loads(line) is not None)

        sample = 100  # the jsonschema baseline is slow: timed on the first lines, as a rate

        def schema() -> int:
            n = 0
            with open(lines, "rb") as handle:
                for line in handle:
                    validator.validate(json.loads(line))
                    n += 1
                    if n == sample:
                        break
            return n

        print("JSON Lines:")
        rate_ours = _timed("read_trajectories (all checks, models)", ours, steps)
        rate_plain = _timed("baseline: json.loads per line, no checks", plain, steps)
        rate_schema = _timed(
            f"baseline: json.loads + cached jsonschema ({sample} lines)", schema, sample * per
        )

        def ours_list(path: Path = listed) -> int:
            return sum(1 for item in read_trajectories(path) if isinstance(item, Trajectory))

        def whole_list(path: Path = listed) -> int:
            with open(path, "rb") as handle:
                return len(json.load(handle))

        print(".json list:")
        rate_list = _timed("read_trajectories (streamed)", ours_list, steps)
        rate_whole = _timed("baseline: json.load of the whole list", whole_list, steps)
        small = Path(folder) / "small.json"  # memory on a tenth of the list: tracemalloc is slow
        small.write_text(json.dumps(json.loads(listed.read_bytes())[: count // 10], indent=1))
        peaks = []
        for fn in (ours_list, whole_list):
            tracemalloc.start()
            fn(small)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        peak_ours, peak_whole = peaks
        small_mb = small.stat().st_size / 1e6

        def ours_chat() -> int:
            return sum(1 for item in read("openai-chat", chat) if isinstance(item, Trajectory))

        def plain_chat() -> int:
            with open(chat, "rb") as handle:
                return sum(1 for line in handle if json.loads(line) is not None)

        print("OpenAI chat log:")
        rate_import = _timed("importers.read('openai-chat')", ours_chat, steps)
        rate_chat = _timed("baseline: json.loads per line, no import", plain_chat, steps)

    print("ratios:")
    print(f"  reader vs jsonschema baseline:      {rate_ours / rate_schema:5.2f}x (target >= 3x)")
    print(f"  reader vs json.loads floor:         {rate_ours / rate_plain:5.2f}x")
    print(
        f"  streamed list vs whole json.load:   {rate_list / rate_whole:5.2f}x speed, "
        f"peak memory on {small_mb:.1f} MB: {peak_ours / 1e6:.1f} MB vs {peak_whole / 1e6:.1f} MB"
    )
    print(f"  chat import vs json.loads floor:    {rate_import / rate_chat:5.2f}x")


if __name__ == "__main__":
    main()
