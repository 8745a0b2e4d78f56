"""Command line: argument parsing and exit codes; the work is done by the lint, confirm and report layers."""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback

from breakscan import __version__
from breakscan.exits import EXIT_ERROR, EXIT_INTERRUPTED, UsageError

COMMANDS = ("check", "run", "fix", "rules", "lsp")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 on usage errors too; keep its wording
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _comma_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", re.IGNORECASE)


def memory_size(value: str) -> int:
    """Bytes of `4GB`, `512MB`, `1.5g`, `1048576` (units of 1024); `none` or 0: no limit (0)."""
    if value.strip().lower() == "none":
        return 0
    match = _SIZE.fullmatch(value.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {value!r} (e.g. 4GB, 512MB, or none)")
    return int(float(match[1]) * 1024 ** "_kmgt".index(match[2].lower() or "_"))


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["text", "concise", "json", "sarif", "github", "html"], default="text",
                        help="output format (default: text)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="where confirmation runs (default: auto = cuda if available)")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="per confirmation target (default: 300)")
    parser.add_argument("--memory-limit", type=memory_size, metavar="SIZE",
                        help="memory of each confirmation worker, e.g. 4GB (default: half of the machine's; none: no limit)")
    parser.add_argument("--max-per-rule", type=int, metavar="N", help="text report: show at most N findings per rule")
    parser.add_argument("--graph-format", choices=["dot", "mermaid"], help="also print each target's graph chain")
    parser.add_argument("--no-color", action="store_true", help="plain text output (also: NO_COLOR env)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--fail-on", choices=["error", "warning"],
                        help="which findings give exit code 1 (default: config `fail-on`, else any finding)")
    parser.add_argument("--statistics", action="store_true",
                        help="print the number of findings per rule instead of the report")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print the findings only: no banner, headers, tables or progress")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="breakscan", description="Find, confirm and fix torch.compile graph breaks.")
    parser.add_argument("--version", action="version", version=f"breakscan {__version__}")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    check = commands.add_parser("check", help="lint files and folders, then confirm targets (default command)")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--static", action="store_true", help="lint only: never import or run the scanned code")
    check.add_argument("--entry", metavar="EXPR", help="callable or nn.Module to confirm, evaluated in the file")
    check.add_argument("--inputs", metavar="EXPR", help="example inputs for --entry, evaluated in the file")
    check.add_argument("--select", type=_comma_list, default=(), metavar="IDS", help="rule ids or prefixes to run")
    check.add_argument("--ignore", type=_comma_list, default=(), metavar="IDS", help="rule ids or prefixes to skip")
    check.add_argument("--config", metavar="FILE", help="pyproject.toml or breakscan.toml with [tool.breakscan]")
    check.add_argument("--unreachable", action="store_true",
                       help="also report constructs in code no compiled root reaches (as info)")
    check.add_argument("--follow", action="store_true",
                       help="also analyse installed packages the compiled code calls (read, never imported)")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the lint cache")
    check.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: all cores)")
    check.add_argument("--changed-since", metavar="REF", help="lint only files changed since this git ref")
    check.add_argument("--baseline", metavar="FILE", help="an earlier JSON report to compare against (--verify)")
    check.add_argument("--verify", action="store_true", help="show what changed since --baseline, per target")
    check.add_argument("--stdin-filename", metavar="NAME",
                       help="with PATH -: lint standard input as if it were the file NAME")
    _add_output_options(check)

    run = commands.add_parser("run", help="run a script as-is and report every graph break it hits")
    run.add_argument("-m", dest="module", metavar="MODULE",
                     help="run a module as `python -m MODULE` does (then SCRIPT is not given)")
    run.add_argument("script", metavar="SCRIPT", nargs="?")
    run.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")
    _add_output_options(run)

    fix = commands.add_parser("fix", help="apply the fixes that have exact edits (safe ones unless --unsafe)")
    fix.add_argument("paths", nargs="+", metavar="PATH")
    fix.add_argument("--diff", action="store_true", help="print a unified diff of the fixes and change nothing")
    fix.add_argument("--unsafe", action="store_true",
                     help="also apply unsafe fixes (they can change results at edge cases)")
    fix.add_argument("--config", metavar="FILE", help="pyproject.toml or breakscan.toml with [tool.breakscan]")
    fix.add_argument("--verify", action="store_true",
                     help="run the targets before and after each fix; keep only fixes that remove breaks "
                          "and leave outputs (and gradients) unchanged")
    fix.add_argument("--entry", metavar="EXPR", help="with --verify: callable or nn.Module to run, evaluated in the file")
    fix.add_argument("--inputs", metavar="EXPR", help="with --entry: its example inputs (or a list of calls)")
    fix.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                     help="with --verify: where the targets run (default: auto = cuda if available)")
    fix.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS", help="per target run (default: 300)")
    fix.add_argument("--memory-limit", type=memory_size, metavar="SIZE",
                     help="memory of each worker, e.g. 4GB (default: half of the machine's; none: no limit)")
    fix.add_argument("--format", choices=["text", "json"], default="text", help="with --verify: report format")

    rules = commands.add_parser("rules", help="list the rules, or show one rule's documentation")
    rules.add_argument("rule", nargs="?", metavar="RULE")
    rules.add_argument("--format", choices=["text", "json"], default="text")

    commands.add_parser("lsp", help="language server over stdio")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-") or (
        argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")
    ):
        argv.insert(0, "check")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        return _dispatch(args)
    except UsageError as error:
        print(f"breakscan: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("breakscan: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # a bug in breakscan, not bad input: short message, details on request
        print(f"breakscan: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("BREAKSCAN_DEBUG"):
            traceback.print_exc()
        else:
            print("breakscan: set BREAKSCAN_DEBUG=1 for the traceback, and please report it", file=sys.stderr)
        return EXIT_ERROR


def _dispatch(args: argparse.Namespace) -> int:
    from breakscan import commands

    if args.command == "rules":
        return commands.rules_command(args)
    if args.command == "lsp":
        return commands.lsp_command(args)
    if args.command == "run":
        return commands.run_command(args)
    if args.command == "fix":
        return commands.fix_command(args)
    return commands.check_command(args)


def entry_point() -> None:
    sys.exit(main())
