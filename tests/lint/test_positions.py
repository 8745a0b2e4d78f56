"""Spans come from breakscan's own pass over the generated code, not libcst's PositionProvider: they
must be the same, statement by statement, and fit the file's own indentation."""

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from breakscan.lint.positions import ModulePositions
from breakscan.lint.traverse import find_nodes
from breakscan.model import Span
from tests.helpers import FIXTURES, lint_source

MIXED = (
    "import torch\r\n\r\n"
    "@torch.compile(mode='max-autotune')\r\n"
    "def fn(x, *, y=lambda q: q + 1):\r\n"
    "    s = '''a\rb\r\n  c'''\r\n"
    "    if (x.sum()\r\n"
    "            > 0):  # comment\r\n"
    "        return f\"{x!r} {s}\"; pass\r\n"
    "    return [i for i in x]\r\n"
)


@pytest.mark.parametrize("source", [MIXED, *(path.read_text() for path in sorted(FIXTURES.glob("*.py"))[:12])])
def test_spans_are_libcsts_positions(source):
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    requests = [(node, statement) for statement in module.body for node in find_nodes(statement, (cst.CSTNode,))]
    spans = ModulePositions(module, source).locate(requests)
    for node, _ in requests:
        where = expected[node]
        assert spans[id(node)] == Span(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)


@pytest.mark.parametrize("indent", ["  ", "\t"])
def test_columns_in_a_file_not_indented_by_four_spaces(tmp_path, indent):
    source = f"import torch\n\n@torch.compile\ndef fn(x):\n{indent}if x.sum() > 0:\n{indent * 2}print(x)\n{indent}return x\n"
    spans = {f.rule: f.span for f in lint_source(tmp_path, source).findings}
    assert spans["BS201"] == Span(5, len(indent) + 4, 5, len(indent) + 15)  # `x.sum() > 0`
    assert spans["BS401"] == Span(6, 2 * len(indent) + 1, 6, 2 * len(indent) + 9)  # `print(x)`
