"""What each command does, from parsed arguments to an exit code."""

from __future__ import annotations

import argparse
import contextlib
import json
import linecache
import os
import shutil
import sys
from dataclasses import replace

from breakscan import __version__
from breakscan.config import Config, ConfigError, find_config, load_config
from breakscan.exits import EXIT_CLEAN, EXIT_ERROR, EXIT_INTERRUPTED, UsageError
from breakscan.model import Applicability, FileError, Report, TargetSpec
from breakscan.notebook import is_notebook, remember_code
from breakscan.report import RenderOptions, render
from breakscan.selectors import selector_problem

STDIN_PATH = "-"
# What a `--entry` target with no `--inputs` needs when its first layer does not tell the input.
_MISSING_INPUTS = 'add --inputs "torch.randn(...)": its example arguments (a tuple, a dict of keywords, or a tensor)'
# Report width when stdout is not a terminal, and when a terminal reports a width too narrow to use (0 included).
_PLAIN_WIDTH, _NARROWEST, _NARROW_FALLBACK = 100, 40, 80
_STATISTICS_FORMATS = ("text", "concise", "json")


def _config(config_file: str | None, start: str) -> Config:
    """`--config FILE`, else the nearest config at or above `start`."""
    try:
        if config_file:
            if not os.path.isfile(config_file):
                raise UsageError(f"config file not found: {config_file}")
            return load_config(config_file)
        found = find_config(start)
        return load_config(found) if found else Config()
    except ConfigError as error:
        raise UsageError(str(error)) from None


def terminal_width() -> int:
    """The terminal's columns (`COLUMNS` first); a width of 0, as some terminals and CI runners
    report, or one too narrow to read, gives 80."""
    columns = shutil.get_terminal_size(fallback=(_NARROW_FALLBACK, 24)).columns
    return columns if columns >= _NARROWEST else _NARROW_FALLBACK


def _render_options(args: argparse.Namespace, to_terminal: bool) -> RenderOptions:
    color = to_terminal and not args.no_color and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    return RenderOptions(color=color, width=terminal_width() if to_terminal else _PLAIN_WIDTH,
                         max_per_rule=args.max_per_rule, graph_format=args.graph_format,
                         quiet=args.quiet)


def write_stdout(text: str) -> None:
    """Write to standard output; a reader that has gone (`| head -1`) is not an error: the rest is
    dropped, and so is the flush at exit, which would complain about the closed pipe."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _emit(report: Report, args: argparse.Namespace) -> int:
    to_terminal = not args.output and sys.stdout.isatty()
    if args.statistics:
        text = _statistics(report, args.format)
    else:
        text = render(args.format, report, _render_options(args, to_terminal))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            raise UsageError(f"cannot write {args.output}: {error.strerror}") from None
    else:
        write_stdout(text)
    for warning in report.unused_suppressions:
        if args.format in ("text", "concise"):
            print(f"breakscan: warning: {warning.path}:{warning.line}: {warning.message}", file=sys.stderr)
    return EXIT_CLEAN if args.exit_zero else report.exit_code


def _statistics(report: Report, fmt: str) -> str:
    """Findings per rule, most first, as ruff prints them: `count  ID  name` (JSON: a list)."""
    from breakscan.report.concise import FILE_ERROR_ID

    counts: dict[tuple[str, str], int] = {}
    for finding in report.findings:
        counts[finding.rule, finding.name] = counts.get((finding.rule, finding.name), 0) + 1
    if report.errors:
        counts[FILE_ERROR_ID, "not-analysed"] = len(report.errors)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        return json.dumps([{"rule": rule, "name": name, "count": n} for (rule, name), n in rows], indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(f"{n:>{width}}  {rule}  {name}\n" for (rule, name), n in rows)


def _check_statistics_format(args: argparse.Namespace) -> None:
    if args.statistics and args.format not in _STATISTICS_FORMATS:
        raise UsageError(f"--statistics works with --format {', '.join(_STATISTICS_FORMATS)}")


def _shows_progress(args: argparse.Namespace) -> bool:
    """Progress is drawn on a terminal only: piped or redirected output holds none."""
    return not args.quiet and sys.stderr.isatty()


def memory_limit(args: argparse.Namespace) -> int | None:
    """Bytes per confirmation worker: `--memory-limit`, else half of the machine's memory; None: no limit."""
    if args.memory_limit is None:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    return args.memory_limit or None


def _check_selectors(args: argparse.Namespace) -> None:
    for option, selectors in (("--select", args.select), ("--ignore", args.ignore)):
        problem = selector_problem(selectors)
        if problem:
            raise UsageError(f"{option}: {problem}")


def _stdin_name(args: argparse.Namespace) -> str | None:
    """With PATH `-`: the file name standard input stands for."""
    if STDIN_PATH not in args.paths:
        if args.stdin_filename:
            raise UsageError("--stdin-filename needs PATH - (standard input)")
        return None
    if args.paths != [STDIN_PATH]:
        raise UsageError("PATH - (standard input) cannot be combined with other paths")
    if not args.stdin_filename:
        raise UsageError("PATH - needs --stdin-filename NAME: the file standard input stands for")
    if args.entry or args.changed_since:
        raise UsageError("standard input is linted only: --entry and --changed-since need files")
    return args.stdin_filename


def _lint_stdin(name: str, config: Config, args: argparse.Namespace):
    """Standard input linted as the file `name` (its config, per-file ignores, module name and
    neighbours); the report shows that text, not what may be on disk under that name."""
    from breakscan.lint.buffer import lint_buffer

    text = sys.stdin.read()
    config = replace(config, select=args.select or config.select, ignore=args.ignore + config.ignore,
                     unreachable=args.unreachable or config.unreachable)
    linecache.cache[name] = (len(text), None, text.splitlines(keepends=True), name)
    return lint_buffer(name, {name: text}, config, fixes=_shows_fixes(args))


def check_command(args: argparse.Namespace) -> int:
    from breakscan.lint.linter import lint_paths

    _check_selectors(args)
    stdin_name = _stdin_name(args)
    _check_statistics_format(args)
    config = _config(args.config, stdin_name or args.paths[0])
    entry = _entry_target(args, config) if args.entry else None
    if args.inputs and not args.entry:
        raise UsageError("--inputs needs --entry")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.verify and not args.baseline:
        raise UsageError("--verify needs --baseline FILE (an earlier --format json report)")
    baseline = None
    if args.baseline:
        from breakscan.report.verify import BaselineError, load_baseline

        try:
            baseline = load_baseline(args.baseline)
        except BaselineError as error:
            raise UsageError(str(error)) from None
    paths = args.paths
    missing = [p for p in paths if not os.path.lexists(p) and p != STDIN_PATH]
    if missing:
        raise UsageError(f"path not found: {', '.join(missing)}")
    if args.changed_since:
        from breakscan.changed import changed_files

        paths = changed_files(paths, args.changed_since, config.exclude)
    if stdin_name:
        outcome = _lint_stdin(stdin_name, config, args)
    else:
        cache = None
        if not args.no_cache:
            from breakscan.cache import open_cache

            cache = open_cache(config)
        with contextlib.ExitStack() as display:
            on_file = None
            if _shows_progress(args):
                from breakscan.progress import ScanProgress, terminal

                on_file = display.enter_context(ScanProgress(terminal())).on_file
            outcome = lint_paths(paths, config, select=args.select, ignore=args.ignore, jobs=args.jobs,
                                 cache=cache, unreachable=args.unreachable, follow=args.follow, on_file=on_file,
                                 fixes=_shows_fixes(args))
    remember_code(outcome.files)
    report = Report(version=__version__, files=len(outcome.files), findings=outcome.findings,
                    errors=outcome.errors, unused_suppressions=outcome.unused_suppressions,
                    fail_on=args.fail_on or config.fail_on)
    unfinished = _confirm(report, args, outcome, config, entry) if not args.static and not stdin_name else 0
    _attach_fixes(report, args)
    if baseline is not None:
        from breakscan.report.verify import attach_baseline

        attach_baseline(report, baseline, label=args.baseline)
    code = _emit(report, args)
    if unfinished:
        print(f"breakscan: interrupted: {len(report.targets)} target(s) finished, {unfinished} did not",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


def _shows_fixes(args: argparse.Namespace) -> bool:
    """Whether the report shows or applies suggested refactors (the lint then writes them)."""
    return args.format not in ("concise", "github")


def _attach_fixes(report: Report, args: argparse.Namespace) -> None:
    """The refactors that depend on what TorchDynamo saw, for the formats that show or apply them
    (the lint wrote the others: a static run has nothing to add)."""
    if not _shows_fixes(args) or not report.findings or not report.targets:
        return
    from breakscan.fixes import attach_fixes

    report.findings = attach_fixes(report.findings, report.targets, suggested=True)


def _entry_target(args: argparse.Namespace, config: Config) -> tuple[str, str]:
    """(file, expression) of `--entry EXPR` with one PATH file, or of `--entry package.module:EXPR`
    with one PATH, a file or folder of the project the module is found from."""
    from breakscan.confirm.locate import find_module, split_module_entry

    module, expression = split_module_entry(args.entry)
    if module is None:
        if len(args.paths) != 1 or not os.path.isfile(args.paths[0]):
            raise UsageError("--entry needs exactly one PATH, a Python file (or --entry package.module:EXPR)")
        return args.paths[0], expression
    if len(args.paths) != 1 or not os.path.exists(args.paths[0]):
        raise UsageError("--entry package.module:EXPR needs exactly one PATH: the project, or a file in it")
    start = args.paths[0] if os.path.isdir(args.paths[0]) else os.path.dirname(os.path.abspath(args.paths[0]))
    found = find_module(module, start, config.src_roots)
    if found is None:
        raise UsageError(f"--entry {args.entry}: no module {module} found from {args.paths[0]} "
                         "(its package root, the project folder and its src/, config `src`)")
    relative = os.path.relpath(found)
    return (found if relative.startswith(os.pardir) else relative), expression


def _confirm(report: Report, args: argparse.Namespace, outcome, config: Config,
             entry: tuple[str, str] | None) -> int:
    """Run the targets given, declared, or (for files named directly) zero-setup ones; returns how
    many did not finish because of Ctrl-C (the report then holds those that did)."""
    named_files = {os.path.abspath(p) for p in args.paths if os.path.isfile(p) and not is_notebook(p)}
    candidates = [p for p in outcome.files if not is_notebook(p)
                  and (p in outcome.declaring_targets or os.path.abspath(p) in named_files)]
    if entry:
        candidates = [entry[0]]
    if not candidates:
        return 0
    from breakscan.confirm import discover_targets, fuse, run_targets
    from breakscan.confirm.runner import Interrupted

    specs: list[TargetSpec] = []
    for path in candidates:
        if any(e.path == path for e in outcome.errors):
            continue
        found, note = discover_targets(path, entry=entry[1] if entry else None, inputs=args.inputs)
        if entry:
            found = [replace(spec, missing_inputs=_MISSING_INPUTS) for spec in found]
        specs.extend(found)
        if not found and note and (entry or os.path.abspath(path) in named_files):
            report.errors.append(FileError(path, f"not confirmed: {note}"))
    if not specs:
        return 0
    unfinished = 0
    with contextlib.ExitStack() as display:
        progress = None
        if _shows_progress(args):
            from breakscan.progress import ConfirmProgress, terminal

            progress = display.enter_context(ConfirmProgress(terminal()))
        try:
            report.targets = run_targets(specs, device=args.device, timeout=args.timeout, progress=progress,
                                         src_roots=config.src_roots, memory_limit=memory_limit(args))
        except Interrupted as interrupt:
            report.targets, unfinished = interrupt.finished, len(specs) - len(interrupt.finished)
    if entry and not args.inputs and report.targets and report.targets[0].status == "skipped":
        raise UsageError(f"--entry needs --inputs here: {report.targets[0].error}")
    report.torch_version = next((t.torch_version for t in report.targets if t.torch_version), None)
    report.findings = fuse(report.findings, report.targets)
    return unfinished


def _script_to_run(args: argparse.Namespace) -> tuple[str, list[str]]:
    """(the file to run, its arguments): SCRIPT, or the file `python -m MODULE` would run."""
    rest = args.args[1:] if args.args[:1] == ["--"] else args.args
    if args.module is None:
        if args.script is None:
            raise UsageError("run needs SCRIPT or -m MODULE")
        if not os.path.isfile(args.script):
            raise UsageError(f"script not found: {args.script}")
        return args.script, rest
    from breakscan.confirm.locate import main_file

    script_args = ([args.script] if args.script is not None else []) + rest  # after -m, all are its arguments
    found = main_file(args.module, os.getcwd(), _config(None, os.getcwd()).src_roots)
    if found is None:
        raise UsageError(f"-m {args.module}: no such module (or package with a __main__.py) from the working folder")
    relative = os.path.relpath(found)
    return (found if relative.startswith(os.pardir) else relative), script_args


def _project_files_run(script: str, targets) -> list[str]:
    """Files of the script's project (not installed packages) where the run's compiled regions,
    breaks and recompilations are, other than the script itself."""
    from breakscan.confirm.attribute import project_root

    root = os.path.join(os.path.realpath(project_root(os.path.abspath(script))), "")
    seen = {os.path.realpath(script)}
    found = []
    for path in [p for t in targets for p in (t.path, *(b.path for b in t.breaks), *(r.path for r in t.recompiles))]:
        real = os.path.realpath(path)
        if real not in seen and real.startswith(root) and os.path.isfile(real) and path.endswith(".py") \
                and "site-packages" not in real:
            seen.add(real)
            found.append(path)
    return found


def run_command(args: argparse.Namespace) -> int:
    script, script_args = _script_to_run(args)
    _check_statistics_format(args)
    from breakscan.confirm import fuse, run_script
    from breakscan.lint.linter import lint_paths

    config = _config(None, script)
    targets = run_script(script, script_args, device=args.device, timeout=args.timeout, module=args.module,
                         src_roots=config.src_roots, memory_limit=memory_limit(args))
    # The script is linted, and so are the project's files the run compiled, broke or recompiled
    # in: each break and recompilation is then either confirmed or missed by the lint.
    paths = [script, *_project_files_run(script, targets)]
    outcome = lint_paths(paths, config, jobs=1, fixes=_shows_fixes(args))
    report = Report(version=__version__, files=len(paths), targets=targets, errors=outcome.errors,
                    unused_suppressions=outcome.unused_suppressions, fail_on=args.fail_on or config.fail_on)
    report.torch_version = next((t.torch_version for t in targets if t.torch_version), None)
    report.findings = fuse(outcome.findings, targets)
    _attach_fixes(report, args)
    return _emit(report, args)


def rules_command(args: argparse.Namespace) -> int:
    from breakscan.lint.rules import all_rules
    from breakscan.rule_docs import rule_doc

    if args.rule:
        doc = rule_doc(args.rule)  # the lint's rules, and BS000/BR000 that the fuser reports
        if doc is None:
            raise UsageError(f"unknown rule: {args.rule} (see `breakscan rules`)")
        if args.format == "json":
            write_stdout(json.dumps(_rule_dict(doc), indent=2) + "\n")
        else:
            predicts = (f"Graph-break ids: {', '.join(doc.gb_ids) or 'as reported'}" if doc.kind == "break"
                        else "Predicts: recompilations")
            write_stdout(f"# {doc.id} {doc.name}\n\n{predicts}  Severity: {doc.severity}\nFix: {doc.fix_hint}\n\n"
                         f"{doc.markdown}\n")
        return EXIT_CLEAN
    docs = [rule_doc(rule.id) for rule in all_rules()]
    if args.format == "json":
        write_stdout(json.dumps([_rule_dict(doc) for doc in docs if doc], indent=2) + "\n")
        return EXIT_CLEAN
    write_stdout("".join(f"{doc.id}  {doc.name:<32} {','.join(doc.gb_ids) or doc.kind:<16} {doc.fix_hint}\n"
                         for doc in docs if doc))
    return EXIT_CLEAN


def _rule_dict(doc) -> dict:
    return {"id": doc.id, "name": doc.name, "gb_ids": list(doc.gb_ids), "severity": doc.severity,
            "kind": doc.kind, "message": doc.summary, "fix": doc.fix_hint, "docs": doc.markdown}


def lsp_command(args: argparse.Namespace) -> int:
    try:
        from breakscan.lsp import serve
    except ImportError as error:
        print(f"breakscan: the language server needs `pip install breakscan[lsp]` ({error.name} missing)",
              file=sys.stderr)
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN



def _fix_targets(args: argparse.Namespace, files: list[str], config: Config) -> list[TargetSpec]:
    """What `fix --verify` runs: `--entry`/`--inputs`, else the targets the files declare or the
    modules they define that can be built with no arguments."""
    from breakscan.confirm import discover_targets

    if args.entry:
        path, expression = _entry_target(args, config)
        return discover_targets(path, entry=expression, inputs=args.inputs)[0]
    if args.inputs:
        raise UsageError("--inputs needs --entry")
    return [spec for path in files for spec in discover_targets(path)[0]]


def _verified_fix(args: argparse.Namespace, files: list[str], config: Config,
                  allowed: tuple[Applicability, ...], report: Report) -> int:
    """`fix --verify`: fixes tried on the targets, written (or shown with `--diff`) only when kept."""
    from breakscan.confirm import run_targets
    from breakscan.fixes.apply import write_atomically
    from breakscan.fixes.edits import unified_diff
    from breakscan.fixes.verify import verify_fixes
    from breakscan.report.fix_verify import verification_json, verification_text

    texts = {}
    for path in files:
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                texts[path] = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            report.errors.append(FileError(path, f"cannot read: {error}"))

    def run(specs: list[TargetSpec], extras: list[dict]):
        return run_targets(specs, device=args.device, timeout=args.timeout, src_roots=config.src_roots,
                           memory_limit=memory_limit(args), extras=extras)

    verification = verify_fixes(texts, _fix_targets(args, files, config), config, allowed, run)
    diffs = [unified_diff(path, before, after) for path, (before, after) in verification.texts.items()]
    if not args.diff:
        for path, (_, after) in verification.texts.items():
            try:
                write_atomically(path, after)
            except OSError as error:
                report.errors.append(FileError(path, f"not fixed, left as it was: {error}"))
    if args.format == "json":
        write_stdout(json.dumps(verification_json(verification, report, written=not args.diff), indent=2) + "\n")
    else:
        write_stdout(verification_text(verification) + ("".join(diffs) if args.diff else ""))
    if verification.problem or report.errors:
        return 1
    return 1 if (args.diff and diffs) or any(not t.kept for t in verification.trials) else EXIT_CLEAN


def fix_command(args: argparse.Namespace) -> int:
    """Apply the fixes with exact edits (safe ones; `--unsafe`: unsafe too), or print them (`--diff`);
    with `--verify`, only those that running the targets shows to remove breaks and nothing else."""
    from breakscan.files import collect
    from breakscan.fixes.apply import SAFE_ONLY, fix_file
    from breakscan.fixes.edits import unified_diff

    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:
        raise UsageError(f"path not found: {', '.join(missing)}")
    config = _config(args.config, args.paths[0])
    collected = collect(args.paths, config.exclude)
    allowed: tuple[Applicability, ...] = ("safe", "unsafe") if args.unsafe else SAFE_ONLY
    if args.verify:
        report = Report(version=__version__, files=len(collected.files), errors=list(collected.errors))
        return _verified_fix(args, [p for p in collected.files if not is_notebook(p)], config, allowed, report)
    if args.entry or args.inputs:
        raise UsageError("--entry/--inputs need --verify")
    report = Report(version=__version__, files=len(collected.files), errors=list(collected.errors),
                    fail_on=config.fail_on)
    diffs, applied, changed = [], 0, 0
    for path in (p for p in collected.files if not is_notebook(p)):
        result = fix_file(path, config, allowed, write=not args.diff)
        if result.error is not None:
            report.errors.append(result.error)
        report.findings += [f for f in result.remaining if f.path == path]  # a helper elsewhere: its own file
        if result.changed:
            applied, changed = applied + len(result.applied), changed + 1
            diffs.append(unified_diff(path, result.before, result.after))
    if args.diff:
        write_stdout("".join(diffs))
    else:
        remaining = [f for f in report.findings if f.fix is not None and f.fix.applicability == "unsafe"]
        hint = f" ({len(remaining)} with an unsafe fix: --unsafe applies them)" if remaining and not args.unsafe else ""
        write_stdout(render("concise", report, RenderOptions()))
        print(f"breakscan: fixed {applied} finding{'s' * (applied != 1)} in "
              f"{changed} file{'s' * (changed != 1)}; {len(report.findings)} remain{hint}", file=sys.stderr)
    return 1 if (args.diff and diffs) else report.exit_code
