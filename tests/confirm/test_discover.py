"""Static target discovery: never imports the file."""

from __future__ import annotations

import textwrap

from breakscan.confirm import discover_targets
from breakscan.model import TargetSpec
from tests.confirm.helpers import fixture


def _discover(source: str, path: str = "m.py"):
    return discover_targets(path, textwrap.dedent(source))


def test_explicit_entry_and_inputs_give_one_spec():
    specs, note = discover_targets("m.py", "raise SystemExit", entry="Model()", inputs="torch.randn(2)")
    assert specs == [TargetSpec("m.py", "Model()", "torch.randn(2)")] and note is None


def test_declared_dict_gives_one_spec_per_entry_in_order():
    specs, note = discover_targets(fixture("breaks.py"))
    assert note is None
    assert [(s.entry, s.inputs) for s in specs][:2] == [
        ("HelperModel()", "torch.randn(2, 8)"), ("stdlib_fn", "torch.randn(3)")]
    assert len(specs) == 7


def test_declared_pairs_accept_none_inputs():
    specs, _ = discover_targets(fixture("pairs.py"))
    assert [(s.entry, s.inputs) for s in specs] == [
        ("Tiny()", None), ("Tiny(6)", "torch.randn(3, 6)"), ("double", "torch.randn(2)"),
        ("torch.compile(double)", "torch.randn(2)")]


def test_declaration_wins_over_zero_setup():
    specs, _ = _discover("""
        from torch import nn
        class A(nn.Module):
            pass
        BREAKSCAN_TARGETS = {"fn": "torch.randn(2)"}
    """)
    assert [s.entry for s in specs] == ["fn"]


def test_empty_declaration_opts_out_of_zero_setup():
    specs, note = _discover("""
        from torch import nn
        class A(nn.Module):
            pass
        BREAKSCAN_TARGETS = {}
    """)
    assert (specs, note) == ([], None)


def test_malformed_declaration_explains_the_format():
    specs, note = _discover("BREAKSCAN_TARGETS = {make(): 'x'}\n")
    assert specs == []
    assert note.startswith("m.py:1: BREAKSCAN_TARGETS must be a literal dict")


def test_zero_setup_candidates_are_modules_buildable_without_arguments():
    specs, note = discover_targets(fixture("zero_setup.py"))
    assert note is None
    assert [s.entry for s in specs] == ["LinearNet()", "ConvNet()", "EmbedNet()", "Conv1dNet()",
                                        "Conv3dNet()", "NormNet()", "FlattenFirst()"]
    assert all(s.inputs is None for s in specs)


def test_zero_setup_follows_local_bases_and_their_init():
    specs, _ = _discover("""
        import torch
        class Base(torch.nn.Module):
            def __init__(self, width=3, *, depth=2):
                super().__init__()
        class Child(Base):
            pass
        class Strict(Base):
            def __init__(self, *, width):
                super().__init__()
        class NotAModule:
            pass
    """)
    assert [s.entry for s in specs] == ["Base()", "Child()"]


def test_nothing_buildable_says_what_to_declare_with_the_real_names():
    specs, note = discover_targets(fixture("needs_args.py"))
    assert specs == []
    assert 'BREAKSCAN_TARGETS = {"Block(dim=..., heads=...)": "torch.randn(...)"}' in note
    assert "--entry" in note


def test_no_module_at_all_still_says_what_to_declare():
    specs, note = _discover("def f(x):\n    return x\n")
    assert specs == [] and "BREAKSCAN_TARGETS = {" in note


def test_syntax_error_is_a_note_not_an_exception():
    specs, note = _discover("def (:\n")
    assert specs == [] and "cannot read m.py" in note
