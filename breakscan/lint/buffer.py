"""Linting an editor's buffers: the text as typed, not the file on disk.

The unit reads the open buffers (the file being linted and any helper file open in the editor)
from memory and every other file from disk; suppressions and config apply as on the command line.
"""

from __future__ import annotations

from breakscan.config import Config
from breakscan.lint.engine import Unit
from breakscan.lint.linter import LintOutcome, lint_settings, merge_units, module_resolver
from breakscan.lint.source import Source, SourceError, check_bracket_depth, read_source
from breakscan.lint.units import FileSet, LintSettings


class _BufferUnit(Unit):
    def __init__(self, path: str, files: FileSet, settings: LintSettings, buffers: dict[str, str]):
        super().__init__(path, files, settings)
        self.buffers = buffers

    def disk_signature(self, path: str) -> tuple[int, int] | None:
        return None if path in self.buffers else super().disk_signature(path)

    def read(self, path: str) -> Source:
        text = self.buffers.get(path)
        if text is None:
            return read_source(path)
        if "\0" in text:
            raise SourceError("source contains a NUL byte")
        data = text.encode("utf-8", "surrogatepass")
        check_bracket_depth(data)  # as for files: the native parser must not overflow its stack
        return Source(path, text, data)


def lint_buffer(path: str, buffers: dict[str, str], config: Config, files: FileSet | None = None, *,
                fixes: bool = False) -> LintOutcome:
    """Lint `buffers[path]` as the content of `path`. Calls into the project's other files are
    followed wherever they are on disk; `files`, when given, says how imports resolve; `fixes`:
    each finding comes with its suggested refactor."""
    if files is None or path not in files.paths:
        files = FileSet([*(files.paths if files else ()), path],
                        files.resolver if files is not None else module_resolver(config))
    settings = lint_settings(config, fixes=fixes)
    outcome = LintOutcome(files=[path], rule_ids=settings.rule_ids)
    merge_units(outcome, [(path, _BufferUnit(path, files, settings, buffers).run())], config)
    return outcome
