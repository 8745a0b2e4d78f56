"""Attribution of raw Dynamo stacks to the user's line, without running Dynamo."""

from __future__ import annotations

import copy
import os

from breakscan.confirm.attribute import (
    UserFiles,
    graph_infos,
    merge_breaks,
    project_root,
    qualified_name,
    real_function_name,
)
from breakscan.confirm.capture import BreakEvent, GraphEvent, Region
from breakscan.confirm.registry import load_registry
from breakscan.model import Frame
from tests.confirm.helpers import FIXTURES, fixture, line_of

PATH = fixture("breaks.py")
USER = UserFiles([FIXTURES])
REGION = Region(PATH, 1, "f")
MESSAGE = "Data-dependent branching\n  Explanation: Detected it.\n  Hint: Use torch.cond.\n"


def test_resume_function_names_map_back():
    assert real_function_name("torch_dynamo_resume_in_forward_at_12") == "forward"
    assert real_function_name("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_9") == "f"
    assert real_function_name("forward") == "forward"


def test_qualified_names_come_from_the_source():
    assert qualified_name(PATH, line_of("breaks.py", "HELPER_CALL"), "forward") == "HelperModel.forward"
    assert qualified_name(PATH, line_of("breaks.py", "HELPER_BREAK"), "helper") == "helper"
    assert qualified_name(PATH, 1, "<module>") == "<module>"


def test_project_root_is_the_nearest_folder_with_a_marker(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg" / "models").mkdir(parents=True)
    assert project_root(str(tmp_path / "pkg" / "models" / "m.py")) == str(tmp_path)


def test_user_files_exclude_stdlib_torch_and_installed_packages():
    assert PATH in USER
    assert copy.__file__ not in USER
    venv_inside_root = UserFiles([os.path.dirname(os.__file__)])  # stdlib excluded even as a root
    assert os.__file__ not in venv_inside_root


def _event(*frames: Frame, gb_type="Data-dependent branching", message=MESSAGE, skips=False, outer=()):
    return BreakEvent(gb_type=gb_type, message=message, stack=frames, skips_frame=skips, region=REGION,
                      outer=outer)


def test_site_is_the_innermost_user_frame_and_the_stack_keeps_the_library_tail():
    call = line_of("breaks.py", "STDLIB_CALL")
    deep = Frame(copy.__file__, 153, "deepcopy")
    (brk,) = merge_breaks([_event(Frame(PATH, call, "stdlib_fn"), deep)], USER, load_registry())
    assert (brk.line, brk.gb_id) == (call, "GB0170")
    assert brk.stack == (Frame(PATH, call, "stdlib_fn"), deep)
    assert (brk.explanation, brk.hints) == ("Detected it.", ("Use torch.cond.",))


def test_occurrences_merge_by_site_keeping_the_longest_stack():
    line, call = line_of("breaks.py", "HELPER_BREAK"), line_of("breaks.py", "HELPER_CALL")
    inner = Frame(PATH, line, "helper")
    resumed = Frame(PATH, call, "torch_dynamo_resume_in_forward_at_19")
    (brk,) = merge_breaks([_event(inner), _event(resumed, inner), _event(inner, skips=True)], USER, None)
    assert brk.count == 3 and brk.frame_skipped
    assert [f.function for f in brk.stack] == ["HelperModel.forward", "helper"]
    assert brk.gb_id is None  # no registry: still reported


def test_a_library_frame_compiled_on_its_own_is_attributed_to_the_live_user_caller():
    call = line_of("breaks.py", "HELPER_CALL")
    library = Frame(copy.__file__, 70, "deepcopy")
    outer = (Frame(os.__file__, 1, "runner"), Frame(PATH, call - 1, "forward"),
             Frame(PATH, call, "torch_dynamo_resume_in_forward_at_18"), Frame(torch_file(), 5, "__call__"))
    (brk,) = merge_breaks([_event(library, outer=outer)], USER, None)
    assert brk.line == call
    assert brk.stack == (Frame(PATH, call, "HelperModel.forward"), library)


def torch_file() -> str:
    import importlib.util

    return os.path.join(importlib.util.find_spec("torch").submodule_search_locations[0], "x.py")


def test_chained_message_is_identified_by_its_cause_and_reports_its_own_type():
    message = MESSAGE + "\n*** While handling this graph break, another graph break occurred: ***\n\n" \
        "graph break in loop\n  Developer debug context: frame skipped\n"
    (brk,) = merge_breaks([_event(Frame(PATH, 5, "f"), gb_type="graph break in loop", message=message, skips=True)],
                          USER, load_registry())
    # The loop break is the data-dependent branch's consequence (the frame is skipped): fix the branch.
    assert (brk.gb_id, brk.gb_type, brk.frame_skipped) == ("GB0170", "graph break in loop", True)
    assert brk.reason == "graph break in loop (frame skipped); caused by: Data-dependent branching"


def test_graph_lines_come_from_user_frames_of_each_op():
    stacks = ((Frame(PATH, 20, "forward"), Frame(copy.__file__, 3, "x")), (Frame(PATH, 21, "forward"),), ())
    (info,) = graph_infos([GraphEvent(("linear", "add", "mul"), stacks, REGION)], USER)
    assert (info.index, info.op_count, info.lines, info.path) == (0, 3, (20, 21), PATH)
