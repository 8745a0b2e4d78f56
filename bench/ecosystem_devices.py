"""Do the ecosystem benchmark's break sites hold on a GPU, and with the libraries' real requirements?

    python bench/ecosystem_devices.py run --library timm --json FILE     # on a GPU machine
    python bench/ecosystem_devices.py compare FILE                       # here: against the stored truth

`run` runs each model of the named libraries under TorchDynamo (bench/ecosystem_worker.py's dynamo
mode, one fresh process per model and device) on cuda and then on cpu, in the Python that runs it:
a GPU machine's own image, with its own torch and whatever the library requires (torchvision
itself, where the ecosystem venv has a stand-in; see `Library.stubs`). The library must be
importable there at the pinned version. It writes, per model and device, the status and the break
sites (file in the package, line, GB id).

`compare` reads that file and sets each model's sites beside those of the stored ground truth
(bench/ecosystem/<library>.json: CPU, the pinned torch, the ecosystem venv): models that agree,
and for the others the sites only one side has. cuda against the GPU machine's cpu isolates the
device; that machine's cpu against the stored truth isolates the torch version and the stand-ins.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from ecosystem import BY_NAME, OFFLINE, REPO, WORKER, Library, load_truth  # noqa: E402

DEVICES = ("cuda", "cpu")


def run_model(library: Library, model: str, device: str, *, timeout: float) -> dict:
    env = {**os.environ, **OFFLINE, "ECOSYSTEM_DEVICE": device,
           "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(REPO), str(BENCH)]))}
    with tempfile.TemporaryDirectory() as folder:
        result_path = os.path.join(folder, "result.json")
        command = [sys.executable, str(WORKER), library.name, library.package, model, "dynamo", result_path]
        try:
            subprocess.run(command, capture_output=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"status": "failed", "error": f"timeout after {timeout:.0f} s"}
        if not os.path.exists(result_path):
            return {"status": "failed", "error": "crashed"}
        result = json.loads(Path(result_path).read_text(encoding="utf-8"))
    if result["status"] != "ok":
        return {"status": "failed", "error": result["error"]}
    return {"status": "ok", "graphs": result["graphs"], "sites": sites(result["breaks"])}


def sites(breaks: list[dict]) -> list[list]:
    return sorted({(b["path"], b["line"], b["gb_id"] or "") for b in breaks if b["in_library"]})


def run(libraries: list[Library], jobs: int, timeout: float) -> dict:
    import torch

    found: dict = {"torch": torch.__version__, "cuda": torch.cuda.get_device_name() if torch.cuda.is_available()
                   else None, "libraries": {}}
    for library in libraries:
        listing = subprocess.run([sys.executable, str(WORKER), "--list", library.name], capture_output=True,
                                 text=True, check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        tasks = [(model, device) for device in DEVICES for model in json.loads(listing.stdout)]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(partial(run_model, library, timeout=timeout), *zip(*tasks)))
        models: dict[str, dict] = {}
        for (model, device), result in zip(tasks, results):
            models.setdefault(model, {})[device] = result
        found["libraries"][library.name] = {"version": importlib.metadata.version(library.name), "models": models}
    return found


def compare(found: dict) -> None:
    print(f"GPU machine: torch {found['torch']}, {found['cuda']}")
    for name, ran in found["libraries"].items():
        truth, models = load_truth(BY_NAME[name]), ran["models"]
        stored = {m["name"]: m for m in truth["models"]}
        print(f"{name} {ran['version']} ({len(models)} models), stored truth: {truth['version']} "
              f"with torch {truth['torch']}")
        for left, right in (("cuda", "cpu"), ("cpu", "stored")):
            agree, differ, one_failed = 0, [], []
            for model, runs in sorted(models.items()):
                truth = stored.get(model, {"status": "missing"})
                sides = {**runs, "stored": {"status": truth["status"], "sites": sites(truth.get("breaks", [])),
                                            "error": truth.get("reason")}}
                a, b = sides[left], sides[right]
                if a["status"] != "ok" or b["status"] != "ok":
                    one_failed.append(f"{model} ({left}: {a.get('error') or 'ok'}; {right}: {b.get('error') or 'ok'})")
                    continue
                only_a = set(map(tuple, a["sites"])) - set(map(tuple, b["sites"]))
                only_b = set(map(tuple, b["sites"])) - set(map(tuple, a["sites"]))
                if only_a or only_b:
                    differ.append(f"{model}: only {left} {sorted(only_a)}; only {right} {sorted(only_b)}")
                else:
                    agree += 1
            print(f"  {left} against {right}: {agree} models with the same break sites, {len(differ)} differ, "
                  f"{len(one_failed)} not run on both")
            for line in differ + one_failed:
                print(f"    {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("run", "compare"))
    parser.add_argument("file", nargs="?", type=Path, help="compare: the JSON `run` wrote")
    parser.add_argument("--library", action="append", choices=list(BY_NAME), help="run: this library (repeatable)")
    parser.add_argument("--json", type=Path, help="run: write the results here")
    parser.add_argument("--jobs", type=int, default=8, help="run: model runs at once (default 8)")
    parser.add_argument("--timeout", type=float, default=300, help="run: seconds per model run (default 300)")
    args = parser.parse_args()
    if args.command == "run":
        if not args.library or not args.json:
            parser.error("run needs --library and --json")
        args.json.write_text(json.dumps(run([BY_NAME[n] for n in args.library], args.jobs, args.timeout), indent=1))
    else:
        if args.file is None:
            parser.error("compare needs the file `run` wrote")
        compare(json.loads(args.file.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
