"""`# breakscan: ignore[BS101]` on a line, `# breakscan: ignore-file[...]` anywhere in a file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_COMMENT = re.compile(r"#\s*breakscan:\s*(ignore-file|ignore)\b(?:\[([^\]]*)\])?")


@dataclass
class Suppression:
    line: int
    codes: tuple[str, ...]  # empty: every rule
    file_level: bool
    used: set[str] = field(default_factory=set)

    def covers(self, rule: str) -> bool:
        return not self.codes or any(rule.startswith(code) for code in self.codes)


def parse_suppressions(text: str) -> list[Suppression]:
    if "breakscan:" not in text:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if "breakscan:" not in line:
            continue
        for match in _COMMENT.finditer(line):
            codes = tuple(c.strip().upper() for c in (match.group(2) or "").split(",") if c.strip())
            found.append(Suppression(number, codes, match.group(1) == "ignore-file"))
    return found


def is_suppressed(suppressions: list[Suppression], rule: str, line: int, end_line: int) -> bool:
    """A finding is suppressed by a comment on its first or last line, or by a file-level one."""
    for suppression in suppressions:
        if (suppression.file_level or suppression.line in (line, end_line)) and suppression.covers(rule):
            suppression.used.add(rule)
            return True
    return False


def unused(suppressions: list[Suppression], selected: set[str]) -> list[Suppression]:
    """Comments that silenced nothing, among those naming rules that actually ran."""
    result = []
    for suppression in suppressions:
        if suppression.used:
            continue
        if suppression.codes and not any(any(rule.startswith(c) for rule in selected) for c in suppression.codes):
            continue
        result.append(suppression)
    return result


def suppress_on_line(line: str, rule: str) -> str:
    """`line` with `rule` suppressed: added to its `# breakscan: ignore[...]` comment, or a new comment."""
    for match in _COMMENT.finditer(line):
        if match.group(1) == "ignore" and match.group(2) is not None:
            codes = [c.strip() for c in match.group(2).split(",") if c.strip()]
            return f"{line[:match.start()]}# breakscan: ignore[{', '.join([*codes, rule])}]{line[match.end():]}"
    return f"{line.rstrip()}  # breakscan: ignore[{rule}]"
