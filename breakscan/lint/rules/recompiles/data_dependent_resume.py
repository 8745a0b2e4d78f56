import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads
from breakscan.lint.traverse import ancestors, find_nodes, parent_map, subtree_ids


class DataDependentResume(Rule):
    id = "BR013"
    name = "data-dependent-resume"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the code after this graph break is given a value read from tensor data, and the declared calls give "
               "other data each time: TorchDynamo guards the value where the resumed code uses it, so a call whose "
               "data gives another value recompiles it (then, with automatic dynamic shapes, the value becomes dynamic)")
    fix_hint = ("keep the value in a tensor (no `.item()`/`.tolist()`; `torch.where` with three arguments), or set "
                "`torch._dynamo.config.capture_scalar_outputs` / `capture_dynamic_output_shape_ops` so the value "
                "stays in the graph")
    docs = """
    ## What it does
    Flags where compiled code resumes after a graph break that reads tensor data into Python, when
    the calls `BREAKSCAN_TARGETS` declares give other data each time (each makes its tensors with
    `torch.randn`, `torch.randint`...; read, never run):
    - a tensor whose size the data decides (`nonzero`, `unique`, `torch.where(c)`, `x[mask]`, and
      what is computed from one), at the line the code resumes at: the break itself when the
      function computes more after it, else the call in its caller that it returns to;
    - a number read from data (`.item()`, `float(t)`, `.tolist()`), where the resumed code first
      uses it.
    Only where the resumed code computes with tensors: a function that just returns what the break
    gave compiles nothing after it. A value read from what the module holds (`self.scale.item()`)
    is the same on every call, and so is one NumPy computes from sizes (`int(np.prod(x.shape))`):
    neither is flagged.

    ## Why is this bad?
    After a graph break TorchDynamo compiles the rest of the function (and of each caller) as a
    function of its own, given the break's result as an input. It specialises that input: a
    tensor's size, a Python number's value. On the next call the data, and so the size or the
    number, differs: the guard fails and the resumed code compiles again (once; automatic dynamic
    shapes then make the value dynamic, or, with them off, every call recompiles). This comes on
    top of the break itself, on every new input.

    ## Example
    ```python
    def forward(self, ids):
        uniq, inverse = torch.unique(ids, return_inverse=True)   # graph break
        return self.proj(self.emb(uniq))[inverse]   # recompiles: uniq's size changes
    ```

    ## Use instead
    Keep data-dependent sizes out of the compiled code (deduplicate outside it), or let TorchDynamo
    capture them: `torch._dynamo.config.capture_dynamic_output_shape_ops = True` (sizes) and
    `capture_scalar_outputs = True` (numbers) keep the value in the graph as a symbolic size.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            def dedup(ids):
                return torch.unique(ids, return_inverse=True)  # break (another rule)

            class Dedup(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(64, 8)

                def forward(self, ids):
                    uniq, inverse = dedup(ids)  # recompile
                    return self.emb(uniq)[inverse]

            BREAKSCAN_TARGETS = {"Dedup()": "[torch.randint(0, 64, (24,)), torch.randint(0, 64, (24,))]"}
        """, entry="Dedup()", inputs="[torch.randint(0, 64, (24,)), torch.randint(0, 64, (24,))]"),
        Example("""
            import torch
            from torch import nn

            def dedup(ids):
                return torch.unique(ids, return_inverse=True)  # break (another rule)

            class Lookup(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(64, 8)

                def forward(self, ids):
                    uniq, inverse = dedup(ids)  # recompile
                    return self.emb(uniq)[inverse]

            class Tower(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lookup = Lookup()
                    self.head = nn.Linear(8, 1)

                def forward(self, ids):
                    rows = self.lookup(ids)  # `emb(uniq)[inverse]` has the size of `ids`: no guard fails here
                    return self.head(rows).squeeze(-1)

            BREAKSCAN_TARGETS = {"Tower()": "[torch.randint(0, 64, (24,)), torch.randint(0, 64, (24,))]"}
        """, entry="Tower()", inputs="[torch.randint(0, 64, (24,)), torch.randint(0, 64, (24,))]"),
        Example("""
            import torch

            def scale_of(x):
                amax = float(x.abs().amax())  # break (another rule)
                return max(amax, 1e-8) / 127

            def quantize(x):
                s = scale_of(x)
                q = torch.round(x / s)  # recompile
                return q * s

            BREAKSCAN_TARGETS = {"quantize": "[torch.randn(16), torch.randn(16)]"}
        """, entry="quantize", inputs="[torch.randn(16), torch.randn(16)]"),
        Example("""
            import torch

            def fn(x):
                n = int((x > 0).sum())  # break (another rule)
                return x[:n] * 2  # recompile

            BREAKSCAN_TARGETS = {"fn": "[torch.randn(32), torch.randn(32)]"}
        """, inputs="[torch.randn(32), torch.randn(32)]"),
    )
    valid = (
        Example("""
            import torch

            def positives(x):
                return torch.nonzero(x > 0)  # break (another rule)

            def fn(x):
                return positives(x)  # nothing is computed after the break: nothing is guarded

            BREAKSCAN_TARGETS = {"fn": "[torch.randn(32), torch.randn(32)]"}
        """, inputs="[torch.randn(32), torch.randn(32)]"),
        Example("""
            import torch

            def fn(x):
                s = float(x.abs().amax())  # break (another rule)
                return x * 2, s  # returned, not used: not guarded

            BREAKSCAN_TARGETS = {"fn": "[torch.randn(16), torch.randn(16)]"}
        """, inputs="[torch.randn(16), torch.randn(16)]"),
        Example("""
            import torch

            def fn(x):
                s = float(x.abs().amax())  # break (another rule)
                return x / s  # the same data on every call: the guard holds

            BREAKSCAN_TARGETS = {"fn": "[torch.ones(16), torch.ones(16)]"}
        """, inputs="[torch.ones(16), torch.ones(16)]"),
        Example("""
            import torch
            from torch import nn

            class Rescale(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("scale", torch.tensor(2.0))

                def forward(self, x):
                    s = self.scale.item()  # break (another rule)
                    return x * s  # read from the module's own buffer: the same on every call

            BREAKSCAN_TARGETS = {"Rescale()": "[torch.randn(8), torch.randn(8)]"}
        """, entry="Rescale()", inputs="[torch.randn(8), torch.randn(8)]"),
        Example("""
            import numpy as np
            import torch

            def fn(x):
                n = int(np.prod(x.shape))  # break (another rule)
                return x / n  # computed from the sizes, not the data: the same on every call

            BREAKSCAN_TARGETS = {"fn": "[torch.randn(4, 4), torch.randn(4, 4)]"}
        """, inputs="[torch.randn(4, 4), torch.randn(4, 4)]"),
        Example("""
            import torch

            def nearest(d, radius):
                idx = torch.arange(d.shape[-1]).expand_as(d).clone()
                idx[d > radius] = d.shape[-1]  # written through the mask: no data read, no break
                return idx.sort(dim=-1).values[..., :4]

            BREAKSCAN_TARGETS = {"nearest": "[(torch.rand(2, 8), 0.5), (torch.rand(2, 8), 0.5)]"}
        """, entry="nearest", inputs="[(torch.rand(2, 8), 0.5), (torch.rand(2, 8), 0.5)]"),
    )

    def __init__(self) -> None:
        self.reads = FirstReads()
        # Where the code resumed with a value from data, each with the nodes computed before the
        # break; reported at the first tensor computation after it.
        self.pending: list[tuple[cst.CSTNode, set[int], str]] = []
        # Names bound to numbers a break here gave: guarded where first used (a number computed
        # from one is not guarded again: the guard is on what the break gave).
        self.arrived: set[str] = set()

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)
        if ctx.module.varying_data and not self._arrives(
                node, [*([node.func.value] if isinstance(node.func, cst.Attribute) else []),
                       *(argument.value for argument in node.args)], ctx):
            self._computes(node, ctx)

    def on_Subscript(self, node: cst.Subscript, ctx) -> None:
        if ctx.module.varying_data and not self._arrives(
                node, [node.value, *(element.slice.value for element in node.slice if isinstance(element.slice, cst.Index))],
                ctx):
            self._computes(node, ctx)

    def on_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if ctx.module.varying_data:
            self._computes(node, ctx)

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)

    def on_Name(self, node: cst.Name, ctx) -> None:
        if not ctx.module.varying_data or v.data_held(ctx.local_value(node.value) or v.OTHER) != "number" or not (
                node.value in self.arrived or ctx.is_passed_in(node)):
            return
        if self.reads.first_read(node, ctx) and not isinstance(self._taken_by(node, ctx), cst.Return):
            self._resumes(node, node, f"`{node.value}`, a number read from tensor data", ctx)

    def _arrives(self, node: cst.Call | cst.Subscript, inputs: list[cst.BaseExpression], ctx) -> bool:
        """Whether the node is a break that reads data (or a call of a function in which one
        does): its value holds data that none of its inputs held. Code resumes after it; the
        break itself compiles nothing."""
        held = v.data_held(ctx.value(node))
        if held is None or any(v.data_held(ctx.value(given)) for given in inputs):
            return False
        if ctx.loop_depth:
            return True  # after a break in a loop TorchDynamo runs the frame eagerly: nothing resumes
        # Reported on the statement: the break itself, where it is here, has a finding of its own.
        statement = next((holder for holder in ancestors(node, ctx.memoised(parent_map, ctx.function.top_statement))
                          if isinstance(holder, cst.BaseSmallStatement)), node)
        if held == "size":
            self._resumes(statement, node, f"the size of `{ctx.code(node)}`, which the data decides", ctx)
        elif isinstance(taker := self._taken_by(node, ctx), (cst.Assign, cst.AnnAssign)):
            targets = [target.target for target in taker.targets] if isinstance(taker, cst.Assign) else [taker.target]
            self.arrived.update(name.value for target in targets for name in find_nodes(
                target, (cst.Name,), prune=(cst.Attribute, cst.Subscript)))  # guarded where they are used
        elif not isinstance(taker, cst.Return) and not self.reads.passed_on(node, ctx):  # passed on: in the callee
            self._resumes(statement, node, f"`{ctx.code(node)}`, numbers read from tensor data", ctx)
        return True

    def _resumes(self, where: cst.CSTNode, node: cst.CSTNode, what: str, ctx) -> None:
        """The resumed code guards `what`, the value of `node`, when it computes with tensors (in
        the expression around it, or after it): reported at `where`."""
        if any(self._is_computation(holder, ctx) for holder in self._enclosing(node, ctx)):
            self._report(where, what, ctx)
        else:
            self.pending.append((where, subtree_ids(node), what))

    def _computes(self, node: cst.BaseExpression, ctx) -> None:
        if not self.pending or not self._is_computation(node, ctx):
            return
        waiting = [entry for entry in self.pending if id(node) in entry[1]]
        for resumed, _, what in self.pending:
            if all(resumed is not other for other, _, _ in waiting):
                self._report(resumed, what, ctx)
        self.pending = waiting

    @staticmethod
    def _is_computation(node: cst.CSTNode, ctx) -> bool:
        """A tensor operation: a call or arithmetic giving a tensor, or indexing one."""
        if isinstance(node, cst.Subscript):
            return ctx.value(node.value) == v.TENSOR and not v.is_assumed_tensor(ctx.value(node.value))
        if isinstance(node, (cst.Call, cst.BinaryOperation)):
            value = ctx.value(node)
            return value in (v.TENSOR, v.TENSORS) and not v.is_assumed_tensor(value)
        return False

    @staticmethod
    def _enclosing(node: cst.CSTNode, ctx) -> list[cst.CSTNode]:
        """The expressions around the node, up to its statement."""
        found = []
        for holder in ancestors(node, ctx.memoised(parent_map, ctx.function.top_statement)):
            if isinstance(holder, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                break
            found.append(holder)
        return found

    @staticmethod
    def _taken_by(node: cst.CSTNode, ctx) -> cst.CSTNode | None:
        """What takes the node as it is, alone or packed in a tuple or list (`return x, s`)."""
        parents = ctx.memoised(parent_map, ctx.function.top_statement)
        holder = parents.get(id(node))
        while isinstance(holder, (cst.Tuple, cst.List, cst.Element)):
            holder = parents.get(id(holder))
        return holder

    def _report(self, node: cst.CSTNode, what: str, ctx) -> None:
        calls = ctx.module.varying_data
        if not ctx.dynamo.enabled("automatic_dynamic_shapes"):
            ctx.report(self, node, f"the code after a graph break is given {what}, and the declared calls give other data "
                                   f"each time (`{calls}`): with automatic dynamic shapes off, every call recompiles it, "
                                   f"until the recompile limit ({ctx.dynamo.number('recompile_limit')})",
                       severity="error")
        else:
            ctx.report(self, node, f"the code after a graph break is given {what}, and the declared calls give other data "
                                   f"each time (`{calls}`): TorchDynamo guards it here, so a call whose data gives "
                                   "another value recompiles the resumed code (once: the value then becomes dynamic)")
