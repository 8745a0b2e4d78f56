"""What each command does, from parsed arguments to an exit code."""

from __future__ import annotations

import argparse
import json
import os
import sys

from breakscan import __version__
from breakscan.cli import EXIT_CLEAN, EXIT_ERROR, UsageError
from breakscan.config import Config, ConfigError, find_config, load_config
from breakscan.model import FileError, Report, TargetSpec
from breakscan.report import RenderOptions, render


def _config(args: argparse.Namespace) -> Config:
    try:
        if args.config:
            if not os.path.isfile(args.config):
                raise UsageError(f"config file not found: {args.config}")
            return load_config(args.config)
        found = find_config(args.paths[0] if args.paths else ".")
        return load_config(found) if found else Config()
    except ConfigError as error:
        raise UsageError(str(error)) from None


def _render_options(args: argparse.Namespace, to_terminal: bool) -> RenderOptions:
    color = to_terminal and not args.no_color and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    width = 100
    if to_terminal:
        width = os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else 100
    return RenderOptions(color=color, width=width, max_per_rule=args.max_per_rule, graph_format=args.graph_format)


def _emit(report: Report, args: argparse.Namespace) -> int:
    to_terminal = not args.output and sys.stdout.isatty()
    text = render(args.format, report, _render_options(args, to_terminal))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            raise UsageError(f"cannot write {args.output}: {error.strerror}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    for warning in report.unused_suppressions:
        if args.format in ("text", "concise"):
            print(f"breakscan: warning: {warning.path}:{warning.line}: {warning.message}", file=sys.stderr)
    return report.exit_code


def _progress(message: str) -> None:
    if sys.stderr.isatty():
        print(f"breakscan: {message}", file=sys.stderr, flush=True)


def check_command(args: argparse.Namespace) -> int:
    from breakscan.lint.linter import lint_paths

    config = _config(args)
    if args.entry and (len(args.paths) != 1 or not os.path.isfile(args.paths[0])):
        raise UsageError("--entry needs exactly one PATH, a Python file")
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
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise UsageError(f"path not found: {', '.join(missing)}")
    if args.changed_since:
        from breakscan.changed import changed_files

        paths = changed_files(paths, args.changed_since, config.exclude)
    cache = None
    if not args.no_cache:
        from breakscan.cache import open_cache

        cache = open_cache(config)
    outcome = lint_paths(paths, config, select=args.select, ignore=args.ignore, jobs=args.jobs, cache=cache,
                         unreachable=args.unreachable, follow=args.follow)
    report = Report(version=__version__, files=len(outcome.files), findings=outcome.findings,
                    errors=outcome.errors, unused_suppressions=outcome.unused_suppressions)
    if not args.static:
        _confirm(report, args, outcome)
    _attach_fixes(report, args)
    if baseline is not None:
        from breakscan.report.verify import attach_baseline

        attach_baseline(report, baseline, label=args.baseline)
    return _emit(report, args)


def _attach_fixes(report: Report, args: argparse.Namespace) -> None:
    """Refactors written against the user's lines, for the formats that show or apply them."""
    if args.format in ("concise", "github") or not report.findings:
        return
    from breakscan.fixes import attach_fixes

    report.findings = attach_fixes(report.findings, report.targets)


def _confirm(report: Report, args: argparse.Namespace, outcome) -> None:
    """Run the targets given, declared, or (for files named directly) zero-setup ones."""
    named_files = {os.path.abspath(p) for p in args.paths if os.path.isfile(p)}
    candidates = [p for p in outcome.files if p in outcome.declaring_targets or os.path.abspath(p) in named_files]
    if args.entry:
        candidates = outcome.files[:1]
    if not candidates:
        return
    from breakscan.confirm import discover_targets, fuse, run_targets

    specs: list[TargetSpec] = []
    for path in candidates:
        if any(e.path == path for e in outcome.errors):
            continue
        found, note = discover_targets(path, entry=args.entry, inputs=args.inputs)
        specs.extend(found)
        if not found and note and (args.entry or os.path.abspath(path) in named_files):
            report.errors.append(FileError(path, f"not confirmed: {note}"))
    if not specs:
        return
    report.targets = run_targets(specs, device=args.device, timeout=args.timeout, progress=_progress)
    report.torch_version = next((t.torch_version for t in report.targets if t.torch_version), None)
    report.findings = fuse(report.findings, report.targets)


def run_command(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.script):
        raise UsageError(f"script not found: {args.script}")
    from breakscan.confirm import fuse, run_script
    from breakscan.lint.linter import lint_paths

    # The script is linted too, so each break it hits is either confirmed or missed by the lint.
    config = _config(argparse.Namespace(config=None, paths=[args.script]))
    outcome = lint_paths([args.script], config, jobs=1)
    script_args = args.args[1:] if args.args[:1] == ["--"] else args.args
    targets = run_script(args.script, script_args, device=args.device, timeout=args.timeout)
    report = Report(version=__version__, files=1, targets=targets, errors=outcome.errors,
                    unused_suppressions=outcome.unused_suppressions)
    report.torch_version = next((t.torch_version for t in targets if t.torch_version), None)
    report.findings = fuse(outcome.findings, targets)
    _attach_fixes(report, args)
    return _emit(report, args)


def rules_command(args: argparse.Namespace) -> int:
    from breakscan.lint.rules import all_rules, rule_by_id

    if args.rule:
        rule = rule_by_id(args.rule)
        if rule is None:
            raise UsageError(f"unknown rule: {args.rule} (see `breakscan rules`)")
        if args.format == "json":
            print(json.dumps(_rule_dict(rule), indent=2))
        else:
            print(f"# {rule.id} {rule.name}\n\nGraph-break ids: {', '.join(rule.gb_ids)}  "
                  f"Severity: {rule.severity}\nFix: {rule.fix_hint}\n\n{rule.documentation()}")
        return EXIT_CLEAN
    if args.format == "json":
        print(json.dumps([_rule_dict(rule) for rule in all_rules()], indent=2))
        return EXIT_CLEAN
    for rule in all_rules():
        print(f"{rule.id}  {rule.name:<32} {','.join(rule.gb_ids):<16} {rule.fix_hint}")
    return EXIT_CLEAN


def _rule_dict(rule) -> dict:
    return {"id": rule.id, "name": rule.name, "gb_ids": list(rule.gb_ids), "severity": rule.severity,
            "message": rule.message, "fix": rule.fix_hint, "docs": rule.documentation()}


def lsp_command(args: argparse.Namespace) -> int:
    try:
        from breakscan.lsp import serve
    except ImportError as error:
        print(f"breakscan: the language server needs `pip install breakscan[lsp]` ({error.name} missing)",
              file=sys.stderr)
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN

