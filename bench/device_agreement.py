"""Does confirmation on a GPU find what it finds on the CPU?

    python bench/device_agreement.py                       # cuda against cpu (needs a CUDA build)
    python bench/device_agreement.py --json FILE           # also the per-target comparison as JSON
    python bench/device_agreement.py --devices cpu cpu     # the harness itself: must agree fully

Every target of the repository's breaking models (`examples/model.py` and the corpus of
`bench/fix_rate.py`) is confirmed once per device, each device's targets in one batch. Per target it
compares the break sites (file, line, GB id), the number of graphs and of recompilations of the
targets that ran on both, and reports where the devices disagree, with what differs; targets that
fail on one device only (model code written for the CPU: tensors made without a device) are listed
apart, with their error. The wall time of each device's batch is printed beside the other's,
measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fix_rate import corpus  # noqa: E402

from breakscan.confirm import discover_targets, run_targets  # noqa: E402
from breakscan.model import TargetResult  # noqa: E402


def _summary(result: TargetResult) -> dict:
    return {
        "status": result.status,
        "error": result.error,
        "graphs": result.graph_count,
        "recompiles": len(result.recompiles),
        "breaks": sorted({(os.path.relpath(b.path, ROOT), b.line, b.gb_id or "") for b in result.breaks}),
    }


def _differences(first: dict, second: dict) -> list[str]:
    found = [f"{key} {first[key]} vs {second[key]}" for key in ("graphs", "recompiles") if first[key] != second[key]]
    only_first = sorted(set(map(tuple, first["breaks"])) - set(map(tuple, second["breaks"])))
    only_second = sorted(set(map(tuple, second["breaks"])) - set(map(tuple, first["breaks"])))
    found += [f"break only on the first: {site}" for site in only_first]
    found += [f"break only on the second: {site}" for site in only_second]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", nargs=2, default=("cuda", "cpu"), metavar=("FIRST", "SECOND"))
    parser.add_argument("--json", metavar="FILE", help="also write the comparison there")
    args = parser.parse_args()

    specs = []
    for path in [ROOT / "examples" / "model.py", *corpus()]:
        found, _ = discover_targets(str(path), path.read_text())
        specs += found
    runs, seconds = {}, {}
    for position, device in enumerate(args.devices):
        started = time.perf_counter()
        runs[position] = [_summary(r) for r in run_targets(specs, device=device, timeout=300)]
        seconds[position] = time.perf_counter() - started

    rows = []
    for spec, first, second in zip(specs, runs[0], runs[1]):
        rows.append({"target": f"{os.path.relpath(spec.path, ROOT)}::{spec.label}",
                     "first": first, "second": second, "differences": _differences(first, second)})
    first, second = args.devices
    both = [row for row in rows if row["first"]["status"] == row["second"]["status"] == "ok"]
    agreeing = [row for row in both if not row["differences"]]
    for row in both:
        if row["differences"]:
            print(f"{row['target']}: " + "; ".join(row["differences"]))
    for position, device in ((0, first), (1, second)):
        key, other = ("first", "second") if position == 0 else ("second", "first")
        for row in rows:
            if row[key]["status"] != "ok" and row[other]["status"] == "ok":
                print(f"{row['target']}: {row[key]['status']} on {device} only: {row[key]['error']}")
    sites = sum(len(row["first"]["breaks"]) for row in both)
    print(f"{len(rows)} targets, {len(both)} ran on both devices ({sites} break sites): {len(agreeing)} agree "
          f"between {first} and {second}, {len(both) - len(agreeing)} differ")
    for position, device in ((0, first), (1, second)):
        key = "first" if position == 0 else "second"
        print(f"  not ok on {device}: {sum(1 for row in rows if row[key]['status'] != 'ok')}")
    print(f"wall time: {first} {seconds[0]:.1f} s, {second} {seconds[1]:.1f} s "
          f"({seconds[0] / seconds[1]:.2f}× {second}; {os.cpu_count()} cores)")
    if args.json:
        Path(args.json).write_text(json.dumps({"devices": list(args.devices), "seconds": [seconds[0], seconds[1]],
                                               "rows": rows}, indent=1))
    sys.exit(0 if len(agreeing) == len(both) else 1)


if __name__ == "__main__":
    main()
