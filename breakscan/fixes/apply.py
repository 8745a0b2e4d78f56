"""`breakscan fix`: apply the findings' exact edits to a file, lint again, and repeat until nothing
more applies; the file is written once, atomically, and only if the result parses.

The loop works on the text in memory (the lint reads it as an editor's buffer), so `--diff`
and writing in place run the same rounds.
"""

from __future__ import annotations

import ast
import linecache
import os
import tempfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from breakscan.config import Config
from breakscan.confirm.fuse import fuse
from breakscan.fixes import attach_fixes
from breakscan.fixes.edits import apply_edits
from breakscan.lint.buffer import lint_buffer
from breakscan.model import Applicability, Edit, FileError, Finding, TargetResult

# Each round applies every fix whose edits do not touch another's; what a fix changes can make
# another applicable (or not) only after the file is linted again.
MAX_ROUNDS = 10
SAFE_ONLY: tuple[Applicability, ...] = ("safe",)


@dataclass
class FileFixes:
    path: str
    before: str
    after: str
    applied: list[Finding] = field(default_factory=list)  # each with the fix that was applied
    remaining: list[Finding] = field(default_factory=list)  # findings of the fixed text
    error: FileError | None = None

    @property
    def changed(self) -> bool:
        return self.after != self.before


def _bounds(edit: Edit) -> tuple[tuple[int, int], tuple[int, int]]:
    return (edit.span.line, edit.span.column), (edit.span.end_line, edit.span.end_column)


def _conflict(a: Edit, b: Edit) -> bool:
    """Two edits overlap, or insert at the same point (whose text would go first is unknown)."""
    (a0, a1), (b0, b1) = _bounds(a), _bounds(b)
    return a0 == b0 or max(a0, b0) < min(a1, b1)


def applicable(findings: Iterable[Finding], path: str, allowed: Collection[Applicability]) -> list[Finding]:
    """The findings whose fix edits `path` and is allowed, minus those touching an earlier one's edits."""
    chosen: list[Finding] = []
    taken: list[Edit] = []
    real = os.path.realpath(path)
    for finding in findings:
        fix = finding.fix
        if fix is None or not fix.edits or fix.applicability not in allowed or os.path.realpath(fix.path or "") != real:
            continue
        if any(_conflict(edit, other) for edit in fix.edits for other in taken):
            continue
        chosen.append(finding)
        taken += fix.edits
    return chosen


def lint_text(path: str, text: str, config: Config, targets: Sequence[TargetResult] = ()) -> list[Finding]:
    """The findings of `text` as the content of `path`, with their fixes; with the `targets` run
    on that text, fused with their breaks (a break no rule predicted gets a fix too)."""
    linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)
    try:
        findings = lint_buffer(path, {path: text}, config, fixes=True).findings  # suggested on the lint's tree
        return attach_fixes(fuse(findings, list(targets)) if targets else findings, targets, suggested=True)
    finally:
        linecache.cache.pop(path, None)


def fix_text(path: str, text: str, config: Config, allowed: Collection[Applicability]) -> FileFixes:
    result = FileFixes(path, text, text)
    for _ in range(MAX_ROUNDS):
        findings = lint_text(path, result.after, config)
        chosen = applicable(findings, path, allowed)
        result.remaining = findings
        if not chosen:
            return result
        after = apply_edits(result.after, [edit for finding in chosen for edit in finding.fix.edits])
        try:
            ast.parse(after)
        except SyntaxError:  # two fixes that each parse may not parse together: stop here
            return result
        result.after = after
        result.applied += chosen
    result.remaining = lint_text(path, result.after, config)
    return result


def write_atomically(path: str, text: str) -> None:
    """Replace the file's content in one step: a reader (or a crash) sees the old or the new file,
    never half of one. Permissions are kept."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".breakscan-", suffix=".py")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temporary, os.stat(path).st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def fix_file(path: str, config: Config, allowed: Collection[Applicability], write: bool) -> FileFixes:
    """Fix one file; with `write`, save it when something changed. The original stays on any failure."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        return FileFixes(path, "", "", error=FileError(path, f"cannot read: {error}"))
    result = fix_text(path, text, config, allowed)
    if write and result.changed:
        try:
            ast.parse(result.after)
            write_atomically(path, result.after)
        except (SyntaxError, OSError) as error:
            result.error = FileError(path, f"not fixed, left as it was: {error}")
            result.after, result.applied = result.before, []
    return result
