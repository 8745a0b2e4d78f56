"""How fast is the lint? Measured against the cost of merely parsing the same files with libcst.

    python bench/lint_speed.py                          # the installed torch package's own sources
    python bench/lint_speed.py --corpus transformers    # model-heavy code: transformers' modeling files
    python bench/lint_speed.py --corpus DIR [DIR ...] --runs 3

Corpora: torch's own sources (the installed package; few compiled regions), and `transformers`,
the model-heavy one: the first 300, in sorted path order, of transformers' `models/*/modeling_*.py`
files, from transformers 5.23.0 as `python bench/ecosystem.py setup` installs it in
bench/.venv-ecosystem (the script stops, saying so, when that version is not there).

Every figure comes from this one run, on the same files, each the median of `--runs` rounds (each
round takes every figure once); every run is a fresh process, as a user's command is:

- parse:  `libcst.parse_module` of every file (reading included), nothing else;
- cold:   `breakscan check --static --jobs 1` with an empty cache (the run fills it), per format:
          concise, text and json (text and json also write each finding's suggested refactor);
- warm:   the same again, nothing changed since: answered from the cache, fixes included;
- peak:   the largest resident memory of the process in the cold run (`wait4`'s ru_maxrss);
- jobs 2: `--no-cache --jobs 2` against `--no-cache --jobs 1`, concise, with the peak of the
          larger worker;
- editor: re-linting one model file of about 1,000 lines after an edit, as `breakscan lsp` does;
- one file: a pre-commit run with one staged file in a 500-file project (copied from the corpus,
          with a pyproject.toml): the file's helpers are found on disk; cold, and with a warm cache.

It is a script, not a test: the figures depend on the machine and on what else it is doing. It
runs a snapshot of breakscan taken when it starts, so an edit made meanwhile cannot mix versions
(nor invalidate the warm cache, whose key includes breakscan's own code).
"""

from __future__ import annotations

import argparse
import compileall
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "breakscan"
BENCH = Path(__file__).resolve().parent

# The model-heavy corpus, pinned: this transformers version, and this rule for its files.
TRANSFORMERS_VERSION = "5.23.0"
TRANSFORMERS_FILES = "models/*/modeling_*.py"
TRANSFORMERS_COUNT = 300
FORMATS = ("concise", "text", "json")

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
    """Run the copy of breakscan in `into`, here and in every command below, byte-compiled as
    `pip install` leaves a package (so no run compiles breakscan's sources, even where
    PYTHONDONTWRITEBYTECODE is set)."""
    shutil.copytree(PACKAGE, os.path.join(into, "breakscan"), ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(os.path.join(into, "breakscan"), quiet=1)
    sys.path.insert(0, into)
    os.chdir(into)  # `python -m breakscan` imports from the current folder first


@dataclass
class Timing:
    seconds: float
    peak_mb: float  # the largest resident memory of the process (or of the largest of its workers)
    output: str


def timed(command: list[str], env: dict[str, str] | None = None) -> Timing:
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=output, stderr=errors, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        errors.seek(0)
        if process.returncode not in (0, 1):
            sys.exit(f"failed: {' '.join(command)}\n{errors.read().decode(errors='replace')}")
        return Timing(elapsed, usage.ru_maxrss / 1024, output.read().decode())


def median_of(runs: int, command: list[str], env: dict[str, str] | None = None) -> float:
    return statistics.median(timed(command, env).seconds for _ in range(runs))


def lint_command(corpus: list[str], *options: str, output: str = "concise") -> list[str]:
    return [sys.executable, "-m", "breakscan", "check", "--static", "--format", output, *options, *corpus]


def editor_relint(runs: int) -> tuple[str, int, float] | None:
    """Median seconds to lint a ~1,000-line model file after an edit, through the LSP's entry point."""
    from breakscan.config import Config
    from breakscan.files import collect
    from breakscan.lint.buffer import lint_buffer
    from breakscan.lint.units import FileSet

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


def one_file_in_project(corpus: list[str], runs: int, size: int = 500) -> tuple[str, int, float, float]:
    """(file, files in the project, cold seconds, warm seconds) for linting one model file of a
    project of the corpus's first `size` files."""
    sources = _files(corpus)[:size]
    base = os.path.dirname(os.path.commonpath(corpus))
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
        cold = median_of(runs, [*command, "--no-cache"])
        env = {"BREAKSCAN_CACHE_DIR": os.path.join(folder, "cache")}
        timed(command, env)  # fills the cache
        warm = median_of(runs, command, env)
    return os.path.relpath(staged, project), len(sources), cold, warm


def _torch_dir() -> str | None:
    spec = find_spec("torch")  # finds the package without importing it (2 s)
    return os.path.dirname(spec.origin) if spec and spec.origin else None


def transformers_corpus() -> list[str]:
    """The pinned model-heavy corpus's files, or exit saying why it is not there."""
    found = sorted(glob.glob(str(BENCH / ".venv-ecosystem" / "lib" / "python*" / "site-packages" /
                                 f"transformers-{TRANSFORMERS_VERSION}.dist-info")))
    if not found:
        sys.exit(f"transformers {TRANSFORMERS_VERSION} is not installed in {BENCH / '.venv-ecosystem'}: "
                 "`python bench/ecosystem.py setup` installs it (the corpus is pinned to that version)")
    package = os.path.join(os.path.dirname(found[0]), "transformers")
    files = sorted(glob.glob(os.path.join(package, TRANSFORMERS_FILES)))[:TRANSFORMERS_COUNT]
    if len(files) < TRANSFORMERS_COUNT:
        sys.exit(f"only {len(files)} files match {TRANSFORMERS_FILES} in {package}, not {TRANSFORMERS_COUNT}")
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", help="folders to lint, or `transformers` "
                        "(default: the installed torch package)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is reported (default 3)")
    args = parser.parse_args()
    if args.corpus == ["transformers"]:
        corpus = transformers_corpus()
        name = f"transformers {TRANSFORMERS_VERSION}: the first {TRANSFORMERS_COUNT} of {TRANSFORMERS_FILES}"
    else:
        corpus = [os.path.abspath(c) for c in args.corpus or [_torch_dir() or sys.exit("torch is not installed")]]
        name = ", ".join(corpus)
    with tempfile.TemporaryDirectory() as frozen:
        snapshot(frozen)
        measure(name, corpus, args.runs)


def measure(name: str, corpus: list[str], runs: int) -> None:
    lines = sum(_line_count(path) for path in _files(corpus))

    # Round by round, each figure once per round: work from elsewhere on a shared machine then
    # weighs on every figure alike, and the ratios hold better than the seconds.
    samples: dict[str, list[Timing]] = {}
    for _ in range(runs):
        samples.setdefault("parse", []).append(timed([sys.executable, "-c", PARSE_ONLY, *corpus]))
        for output in FORMATS:
            with tempfile.TemporaryDirectory() as cache:
                env = {"BREAKSCAN_CACHE_DIR": cache}
                command = lint_command(corpus, "--jobs", "1", output=output)
                samples.setdefault(f"cold {output}", []).append(timed(command, env))  # fills the cache
                samples.setdefault(f"warm {output}", []).append(timed(command, env))
        samples.setdefault("jobs 1", []).append(timed(lint_command(corpus, "--no-cache", "--jobs", "1")))
        samples.setdefault("jobs 2", []).append(timed(lint_command(corpus, "--no-cache", "--jobs", "2")))
    figure = {key: Timing(statistics.median(t.seconds for t in taken), max(t.peak_mb for t in taken), taken[-1].output)
              for key, taken in samples.items()}
    parse, one_job, two_jobs = figure["parse"], figure["jobs 1"], figure["jobs 2"]
    count = int(parse.output)
    summary = json.loads(figure["cold json"].output)["summary"]
    if summary["files"] != count:
        sys.exit(f"parse saw {count} files, the lint {summary['files']}: not the same corpus")
    editor = editor_relint(max(runs, 5))
    staged, project_files, one_cold, one_warm = one_file_in_project(corpus, max(runs, 5))

    print(f"corpus           {name}")
    print(f"files, lines     {count} files, {lines:,} lines ({summary['findings']} findings); "
          f"medians of {runs} rounds; {os.cpu_count()} cores")
    print(f"libcst parse     {parse.seconds:8.2f} s  ({lines / parse.seconds:,.0f} lines/s)  peak {parse.peak_mb:,.0f} MB")
    for output in FORMATS:
        cold, warm = figure[f"cold {output}"], figure[f"warm {output}"]
        print(f"cold {output:<11} {cold.seconds:8.2f} s  = {cold.seconds / parse.seconds:.2f}x the parse  "
              f"peak {cold.peak_mb:,.0f} MB;  warm {warm.seconds:.2f} s = {100 * warm.seconds / cold.seconds:.1f}% of cold")
    print(f"--jobs 2         {two_jobs.seconds:8.2f} s  = {one_job.seconds / two_jobs.seconds:.2f}x faster than "
          f"--jobs 1 ({one_job.seconds:.2f} s, --no-cache)  peak {two_jobs.peak_mb:,.0f} MB per worker")
    if editor:
        editor_name, editor_lines, seconds = editor
        print(f"editor re-lint   {seconds:8.3f} s  ({editor_name}, {editor_lines:,} lines, after an edit)")
    print(f"one staged file  {one_warm:8.3f} s warm, {one_cold:.3f} s cold  ({staged} in a {project_files}-file project)")


def _files(corpus: list[str]) -> list[str]:
    from breakscan.files import collect

    return collect(corpus).files


def _line_count(path: str) -> int:
    with open(path, "rb") as handle:
        return handle.read().count(b"\n")


if __name__ == "__main__":
    main()
