"""How fast is the lint? Measured against the cost of merely parsing the same files with libcst.

    python bench/lint_speed.py                      # the installed torch package's own sources
    python bench/lint_speed.py --corpus DIR --runs 5

Every figure comes from this one run, on the same files, each the median of `--runs` runs; every
run is a fresh process, as a user's command is:

- parse:  `libcst.parse_module` of every file (reading included), nothing else;
- cold:   `breakscan --static --no-cache --jobs 1 --format concise` (one process, no cache);
- warm:   the same with a cache that a first run filled, nothing changed since;
- jobs 2: `--no-cache --jobs 2`, against cold;
- fixes:  cold with `--format json`, which also writes a suggested refactor for every finding
          (not cached: it is computed after the lint, for the report);
- editor: re-linting one model file of about 1,000 lines after an edit, as `breakscan lsp` does;
- one file: a pre-commit run with one staged file in a 500-file project (copied from the corpus,
          with a pyproject.toml): the file's helpers are found on disk; cold, and with a warm cache.

It is a script, not a test: the figures depend on the machine and on what else it is doing. It
runs a snapshot of breakscan taken when it starts, so an edit made meanwhile cannot mix versions
(nor invalidate the warm cache, whose key includes breakscan's own code).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "breakscan"

# Parses exactly the files the lint collects (breakscan.files.collect) and prints their count.
PARSE_ONLY = """
import sys, libcst
from breakscan.files import collect
files = collect(sys.argv[1:]).files
for path in files:
    with open(path, encoding="utf-8") as handle:
        libcst.parse_module(handle.read())
print(len(files))
"""


def snapshot(into: str) -> None:
    """Run the copy of breakscan in `into`, here and in every command below."""
    shutil.copytree(PACKAGE, os.path.join(into, "breakscan"), ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, into)
    os.chdir(into)  # `python -m breakscan` imports from the current folder first


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr}")
    return elapsed, done.stdout


def median_of(runs: int, command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    results = [timed(command, env) for _ in range(runs)]
    return statistics.median(t for t, _ in results), results[-1][1]


def lint_command(corpus: list[str], *options: str, output: str = "concise") -> list[str]:
    return [sys.executable, "-m", "breakscan", "check", "--static", "--format", output, *options, *corpus]


def editor_relint(runs: int) -> tuple[str, int, float] | None:
    """Median seconds to lint a ~1,000-line model file after an edit, through the LSP's entry point."""
    from breakscan.config import Config
    from breakscan.files import collect
    from breakscan.lint.buffer import lint_buffer
    from breakscan.lint.engine import FileSet

    torch_dir = _torch_dir()
    if torch_dir is None:
        return None
    path = os.path.join(torch_dir, "nn", "modules", "transformer.py")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    project = FileSet([os.path.abspath(p) for p in collect([os.path.join(torch_dir, "nn")]).files])
    lint_buffer(path, {path: text}, Config(), project)  # the editor opened it: now it is being edited
    times = []
    for edit in range(runs):
        statement = f"        output = output * {edit + 2}\n"
        edited = text.replace("        return output", statement + "        return output", 1)
        started = time.perf_counter()
        lint_buffer(path, {path: edited}, Config(), project)
        times.append(time.perf_counter() - started)
    return os.path.relpath(path, torch_dir), text.count("\n"), statistics.median(times)


def one_file_in_project(corpus: list[str], runs: int, size: int = 500) -> tuple[str, float, float]:
    """(file, cold seconds, warm seconds) for linting one model file of a `size`-file project."""
    sources = _files(corpus)[:size]
    base = os.path.dirname(corpus[0])
    with tempfile.TemporaryDirectory() as folder:
        project = os.path.join(folder, "project")
        for source in sources:
            copy = os.path.join(project, os.path.relpath(source, base))
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            shutil.copyfile(source, copy)
        Path(project, "pyproject.toml").write_text('[project]\nname = "copied"\n')
        models = [p for p in sources if "def forward" in Path(p).read_text(encoding="utf-8", errors="replace")]
        staged = os.path.join(project, os.path.relpath(max(models or sources, key=os.path.getsize), base))
        command = lint_command([staged])
        cold, _ = median_of(runs, [*command, "--no-cache"])
        env = {"BREAKSCAN_CACHE_DIR": os.path.join(folder, "cache")}
        timed(command, env)  # fills the cache
        warm, _ = median_of(runs, command, env)
    return os.path.relpath(staged, project), cold, warm


def _torch_dir() -> str | None:
    spec = find_spec("torch")  # finds the package without importing it (2 s)
    return os.path.dirname(spec.origin) if spec and spec.origin else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", help="folders to lint (default: the installed torch package)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is reported (default 3)")
    args = parser.parse_args()
    corpus = [os.path.abspath(c) for c in args.corpus or [_torch_dir() or sys.exit("torch is not installed")]]
    with tempfile.TemporaryDirectory() as frozen:
        snapshot(frozen)
        measure(corpus, args.runs)


def measure(corpus: list[str], runs: int) -> None:
    lines = sum(_line_count(path) for path in _files(corpus))

    parse, count = median_of(runs, [sys.executable, "-c", PARSE_ONLY, *corpus])
    cold, _ = median_of(runs, lint_command(corpus, "--no-cache", "--jobs", "1"))
    with tempfile.TemporaryDirectory() as cache:
        env = {"BREAKSCAN_CACHE_DIR": cache}
        timed(lint_command(corpus, "--jobs", "1"), env)  # fills the cache
        warm, _ = median_of(runs, lint_command(corpus, "--jobs", "1"), env)
    parallel, _ = median_of(runs, lint_command(corpus, "--no-cache", "--jobs", "2"))
    with_fixes, report = median_of(runs, lint_command(corpus, "--no-cache", "--jobs", "1", output="json"))
    summary = json.loads(report)["summary"]
    if summary["files"] != int(count):
        sys.exit(f"parse saw {count} files, the lint {summary['files']}: not the same corpus")
    editor = editor_relint(max(runs, 5))
    staged, one_cold, one_warm = one_file_in_project(corpus, max(runs, 5))

    print(f"corpus           {', '.join(corpus)}")
    print(f"files, lines     {count.strip()} files, {lines:,} lines ({summary['findings']} findings); "
          f"medians of {runs} runs; {os.cpu_count()} cores")
    print(f"libcst parse     {parse:8.2f} s  ({lines / parse:,.0f} lines/s)")
    print(f"cold, 1 process  {cold:8.2f} s  ({lines / cold:,.0f} lines/s)  = {cold / parse:.2f}x the parse")
    print(f"warm cache       {warm:8.2f} s  = {100 * warm / cold:.1f}% of cold")
    print(f"--jobs 2         {parallel:8.2f} s  = {cold / parallel:.2f}x faster than --jobs 1")
    print(f"cold, with fixes {with_fixes:8.2f} s  = {with_fixes / parse:.2f}x the parse (--format json)")
    if editor:
        name, editor_lines, seconds = editor
        print(f"editor re-lint   {seconds:8.3f} s  ({name}, {editor_lines:,} lines, after an edit)")
    print(f"one staged file  {one_warm:8.3f} s warm, {one_cold:.3f} s cold  ({staged} in a 500-file project)")


def _files(corpus: list[str]) -> list[str]:
    from breakscan.files import collect

    return collect(corpus).files


def _line_count(path: str) -> int:
    with open(path, "rb") as handle:
        return handle.read().count(b"\n")


if __name__ == "__main__":
    main()
