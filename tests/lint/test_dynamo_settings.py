"""How code is compiled decides what breaks: settings read from the source and from config.

The settings themselves are calibrated in each rule's examples (tests/calibration); `fullgraph=True`
is checked here directly, as the calibration harness compiles without it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from breakscan.config import Config
from breakscan.lint.dynamo_settings import from_config_table
from tests.helpers import lint_source

ITEM = """\
import torch
{setup}

{decorator}
def fn(x):
    return x / x.abs().max().item()
{after}
"""


def _rules(tmp_path, setup: str = "", decorator: str = "@torch.compile", after: str = "", **options) -> set[str]:
    source = ITEM.format(setup=setup, decorator=decorator, after=after)
    return {f.rule for f in lint_source(tmp_path, source, **options).findings}


@pytest.mark.parametrize("setup", [
    "torch._dynamo.config.capture_scalar_outputs = True",
    "from torch._dynamo import config\nconfig.capture_scalar_outputs = True",
    "import torch._dynamo.config as dynamo_config\n\ndef main():\n    dynamo_config.capture_scalar_outputs = True",
])
def test_a_capture_setting_anywhere_in_the_file_keeps_item_in_the_graph(tmp_path, setup):
    assert _rules(tmp_path) == {"BS101"}
    assert _rules(tmp_path, setup) == set()


def test_a_setting_turned_off_again_is_off(tmp_path):
    setup = "torch._dynamo.config.capture_scalar_outputs = False"
    assert _rules(tmp_path, setup) == {"BS101"}


@pytest.mark.parametrize("decorator,after", [
    ("@torch.compile(fullgraph=True)", ""),
    ("@torch._dynamo.config.patch(capture_scalar_outputs=True)", "\ncompiled = torch.compile(fn)"),
    ("", "\ncompiled = torch.compile(fn, fullgraph=True)"),
])
def test_how_the_root_is_compiled_counts(tmp_path, decorator, after):
    assert _rules(tmp_path, decorator=decorator, after=after) == set()


def test_a_helper_keeps_its_break_while_any_root_reaching_it_does_not_capture(tmp_path):
    source = textwrap.dedent("""\
        import torch

        def scale(x):
            return x / x.abs().max().item()

        @torch.compile(fullgraph=True)
        def captured(x):
            return scale(x)

        @torch.compile
        def plain(x):
            return scale(x) + 1
    """)
    [finding] = lint_source(tmp_path, source).findings
    assert (finding.rule, finding.line) == ("BS101", 4)
    alone = source.replace("@torch.compile\ndef plain", "def plain")
    assert lint_source(tmp_path, alone).findings == []


def test_settings_made_elsewhere_come_from_config(tmp_path):
    settings = from_config_table({"capture_scalar_outputs": True})
    path = tmp_path / "example.py"
    path.write_text(ITEM.format(setup="", decorator="@torch.compile", after=""))
    from breakscan.lint.linter import lint_paths

    assert lint_paths([str(path)], Config(dynamo=settings), jobs=1).findings == []
    assert [f.rule for f in lint_paths([str(path)], Config(), jobs=1).findings] == ["BS101"]


def test_print_is_replayed_only_with_tensor_and_constant_arguments(tmp_path):
    source = textwrap.dedent("""\
        import torch

        torch._dynamo.config.reorderable_logging_functions.add(print)

        @torch.compile
        def fn(x):
            print("value", x)
            print("shape", x.shape)
            print("constant only")
            return x
    """)
    assert sorted(f.line for f in lint_source(tmp_path, source).findings) == [8, 9]


FULLGRAPH = """
import torch

def item(x):
    return x / x.abs().max().item()

def nonzero(x):
    return torch.nonzero(x > 0)

def unique(x):
    return torch.unique(x.round())

def masked(x):
    return x[x > 0]

for fn in (item, nonzero, unique, masked):
    torch.compile(fn, fullgraph=True, backend="eager")(torch.randn(8))  # raises on any graph break
print("ok")
"""


@pytest.mark.slow
def test_fullgraph_captures_scalar_outputs_and_dynamic_shapes_under_the_installed_dynamo():
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", FULLGRAPH], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


COUNTER = """\
import torch
{setup}


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0

    def forward(self, x):
        self.step += 1
        return x * self.step
"""


@pytest.mark.parametrize("setup,limit", [
    ("", 8),
    ("torch._dynamo.config.recompile_limit = 64", 64),
    ("torch._dynamo.config.cache_size_limit = 16", 16),  # the older name
])
def test_recompile_findings_quote_the_recompile_limit_the_code_sets(tmp_path, setup, limit):
    (finding,) = lint_source(tmp_path, COUNTER.format(setup=setup)).findings
    assert finding.rule == "BR001" and f"until the recompile limit, {limit}," in finding.message
