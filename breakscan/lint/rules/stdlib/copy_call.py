import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

_CONTAINER_DISPLAYS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)
_CONTAINER_BUILDERS = frozenset({"builtins.list", "builtins.dict", "builtins.set"})


class CopyCall(Rule):
    id = "BS504"
    name = "copy-call"
    gb_ids = ("GB4198", "GB0208", "GB0007", "GB0008")
    message = "`copy.deepcopy`/`copy.copy` of a tensor, module or container cannot be traced: the graph breaks here"
    fix_hint = "use tensor.clone() (or dict(d) / list(l) for containers), and copy modules outside the compiled code"
    docs = """
    ## What it does
    Flags `copy.deepcopy(...)` of tensors, modules or containers holding tensors, and
    `copy.copy(...)` of tensors, modules, lists, dicts and sets, in compiled code.

    ## Why is this bad?
    TorchDynamo 2.13 refuses to deep-copy a tensor or a module (GB4198 "Attempted to
    copy.deepcopy a tensor"), and `copy.copy` goes through `__reduce_ex__` machinery it cannot
    trace (GB0208 for a tensor, GB0007 for a list, dict or set, GB0008 for a module). The graph
    ends at the call. Deep copies of plain Python data (a config, a list of ints) are traced.

    ## Example
    ```python
    residual = copy.deepcopy(hidden)
    state = copy.copy(kwargs)
    ```

    ## Use instead
    ```python
    residual = hidden.clone()
    state = dict(kwargs)
    ```
    """
    invalid = (
        Example("""
            import copy
            import torch

            @torch.compile
            def fn(x):
                h = torch.tanh(x)
                residual = copy.deepcopy(h)  # break
                return h * 2 + residual
        """),
        Example("""
            import copy
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)

                def forward(self, x):
                    y = self.proj(x)
                    shadow = copy.deepcopy(self.proj)  # break
                    return y + shadow(x)
        """, entry="Model()"),
        Example("""
            import copy
            import torch

            @torch.compile
            def fn(x):
                y = x + 1
                stats = copy.copy({"scale": 2.0})  # break
                return y * stats["scale"]
        """),
    )
    valid = (
        Example("""
            import copy
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cfg = {"scale": 2.0}

                def forward(self, x):
                    cfg = copy.deepcopy(self.cfg)
                    return x * cfg["scale"]
        """, entry="Model()"),
        Example("""
            import copy
            import torch

            @torch.compile
            def fn(x):
                sizes = copy.copy((2, 4))
                return x.clone().view(sizes)
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if not node.args or node.args[0].keyword is not None:
            return
        qualified = ctx.qualname(node.func)
        argument = node.args[0].value
        if qualified == "copy.deepcopy" and _holds_tensors(argument, ctx):
            ctx.report(self, node)
        elif qualified == "copy.copy" and not isinstance(argument, cst.Tuple) and (
            _holds_tensors(argument, ctx) or _is_mutable_container(argument, ctx)
        ):  # a tuple is immutable: copy.copy returns it as is
            ctx.report(self, node)


def _holds_tensors(node: cst.BaseExpression, ctx) -> bool:
    value = ctx.value(node)
    return value in (v.TENSOR, v.TENSORS, v.SELF) or isinstance(value, v.ModuleValue)


def _is_mutable_container(node: cst.BaseExpression, ctx) -> bool:
    if isinstance(node, _CONTAINER_DISPLAYS):
        return True
    return isinstance(node, cst.Call) and ctx.qualname(node.func) in _CONTAINER_BUILDERS
