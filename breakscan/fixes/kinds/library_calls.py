"""A break inside an installed library: the fix is at the user's call into it, never in the
library's code nor on the compiled root. The call goes through a small `@torch.compiler.disable`
wrapper, so the library runs eagerly and TorchDynamo no longer traces into it (one break at the
call instead of breaks inside); where a config switch captures the construct, it is named too."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.edits import insert_at
from breakscan.fixes.kinds.common import after_imports, qualified, torch_ref
from breakscan.fixes.rewrite import Rewrite, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding, Span

WRAPPER = "_run_eagerly"
# Breaks a TorchDynamo setting captures instead (a process-wide switch, set in the user's code).
_SETTINGS = {"GB0124": "capture_scalar_outputs", "GB0036": "capture_dynamic_output_shape_ops"}


def _callee_name(src: SourceModule, call: cst.Call) -> str:
    return (qualified(src, call.func) or "").rpartition(".")[2].lower()


def library_call(src: SourceModule, finding: Finding) -> cst.Call | None:
    """The call on the user's line that leads into the library: the one named like the library
    function or its class (`self.codebook(...)` for `Codebook.forward`), else the only call there
    that is not torch's."""
    reached = finding.library.reached_from if finding.library else None
    if reached is None or not 1 <= reached.line <= len(src.lines):
        return None
    line = Span(reached.line, 1, reached.line, len(src.lines[reached.line - 1]) + 1)
    calls = [c for c in src.nodes_in(line, lambda n: isinstance(n, cst.Call))
             if isinstance(c, cst.Call) and not (qualified(src, c.func) or "").startswith("torch.")]
    wanted = {part.lower() for part in finding.chain[-1].split(".")} if finding.chain else set()
    named = [c for c in calls if _callee_name(src, c) in wanted]
    chosen = named or (calls if len(calls) == 1 else [])
    return chosen[0] if chosen else None


def run_library_call_eagerly(src: SourceModule, finding: Finding) -> Rewrite | None:
    call = library_call(src, finding)
    if call is None or src.function(call) is None or finding.library is None:
        return None
    torch, imports = torch_ref(src)
    edits = list(imports)
    if f"def {WRAPPER}(" not in src.text:
        wrapper = (f"\n\n@{torch}.compiler.disable\ndef {WRAPPER}(fn, *args, **kwargs):\n"
                   f'{src.indent_unit}"""Calls `fn` outside torch.compile: TorchDynamo breaks inside it."""\n'
                   f"{src.indent_unit}return fn(*args, **kwargs)\n")
        edits.append(insert_at(after_imports(src), wrapper))
    arguments = ", ".join(src.code(arg).rstrip().rstrip(",") for arg in call.args)
    callee = src.code(call.func)
    edits.append(replace_node(src, call, f"{WRAPPER}({callee}{', ' + arguments if arguments else ''})"))
    summary = (f"run `{callee}` eagerly: TorchDynamo breaks inside {finding.library.package}, so call it through "
               f"a `@{torch}.compiler.disable` wrapper; the library then runs outside the graph (one break at "
               "this call instead of breaks inside it)")
    setting = next((_SETTINGS[g] for g in finding.gb_ids if g in _SETTINGS), None)
    if setting:
        summary += f"; or keep it in the graph with `{torch}._dynamo.config.{setting} = True`"
    return Rewrite(summary, tuple(edits), applicability="safe")
