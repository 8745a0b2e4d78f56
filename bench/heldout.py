"""Score the static lint on a held-out set: files written by someone who has read neither the rules
nor the code, each declaring its `BREAKSCAN_TARGETS`, kept outside the repository.

    python bench/heldout.py truth DIR PREFIX [FILE ...]   # run each file under TorchDynamo: DIR/truth.json
    python bench/heldout.py score DIR PREFIX              # lint them statically and compare

`truth` runs every `DIR/PREFIX<nn>.py` (or just the files named, keeping the others' entries) with
breakscan's confirmation runner, which records each graph break at the innermost line of the file
and each recompilation at the line whose value the failed guard checked. `score` lints the same
files with `--static` (nothing is run) and counts a site as found only if a finding is on its line;
a finding on a line with no site is "not confirmed", and "on fine files" when its file neither
breaks nor recompiles. Breaks inside installed libraries are left out of both.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def _breakscan(*arguments: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "breakscan", "check", *arguments, "--format", "json"],
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def truth(folder: Path, prefix: str, only: list[str]) -> None:
    stored = folder / "truth.json"
    sites = json.loads(stored.read_text()) if only and stored.exists() else {}
    for path in sorted(folder.glob(f"{prefix}[0-9]*.py")):
        if only and path.name not in only:
            continue
        report = _breakscan(str(path), "--timeout", "240")
        breaks = sorted({(b["line"], b["gb_id"]) for t in report["targets"] for b in t["breaks"]
                         if b.get("library") is None and Path(b["path"]).name == path.name})
        recompiles = sorted({(r["line"], r["guard"][:120]) for t in report["targets"] for r in t["recompiles"]
                             if Path(r["path"]).name == path.name})
        statuses = [f"{t['name']}: {t['status']}" for t in report["targets"]]
        sites[path.name] = {"breaks": breaks, "recompiles": recompiles, "targets": statuses}
        print(path.name, "breaks:", breaks, "recompiles:", recompiles, statuses, flush=True)
    stored.write_text(json.dumps(sites, indent=1))


def score(folder: Path, prefix: str) -> None:
    sites = json.loads((folder / "truth.json").read_text())
    report = _breakscan("--static", *map(str, sorted(folder.glob(f"{prefix}[0-9]*.py"))))
    lines: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        lines.setdefault(Path(finding["path"]).name, []).append(finding)
    found = {"breaks": [0, 0], "recompiles": [0, 0]}
    unconfirmed = on_fine = 0
    for name, truth_of in sorted(sites.items()):
        flagged = {f["line"] for f in lines.get(name, [])}
        site_lines = {kind: {line for line, _ in truth_of[kind]} for kind in found}
        for kind, counts in found.items():
            for line in sorted(site_lines[kind]):
                counts[1] += 1
                counts[0] += line in flagged
                if line not in flagged:
                    print(f"missed {kind[:-1]:9} {name}:{line}")
        fine = not site_lines["breaks"] and not site_lines["recompiles"]
        for finding in lines.get(name, []):
            if finding["line"] not in site_lines["breaks"] | site_lines["recompiles"]:
                unconfirmed += 1
                on_fine += fine
                print(f"not confirmed {name}:{finding['line']} {finding['rule']} {finding['severity']}"
                      + (" (fine file)" if fine else ""))
    print(f"breaks {found['breaks'][0]}/{found['breaks'][1]}, recompiles {found['recompiles'][0]}/"
          f"{found['recompiles'][1]}, {unconfirmed} not confirmed, {on_fine} on fine files")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("truth", "score"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("prefix")
    parser.add_argument("files", nargs="*", help="with truth: only these files")
    arguments = parser.parse_args()
    if arguments.command == "truth":
        truth(arguments.folder, arguments.prefix, arguments.files)
    else:
        score(arguments.folder, arguments.prefix)


if __name__ == "__main__":
    main()
