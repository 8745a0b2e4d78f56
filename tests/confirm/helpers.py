"""Paths of the confirmation fixtures and the lines their `# MARKER` comments tag."""

import os

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "fixtures", "confirm")
FIXTURES = os.path.normpath(FIXTURES)


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, name)


def line_of(name: str, marker: str) -> int:
    """The line of `fixture(name)` carrying the comment `# MARKER`."""
    with open(fixture(name), encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.rstrip().endswith(f"# {marker}"):
                return number
    raise LookupError(marker)


def same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)

