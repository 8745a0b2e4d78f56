import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.grad import (
    bindings,
    computed_with_grad,
    grad_free_rebindings,
    graded_names,
    made_without_grad,
    uses_parameters,
    without_grad,
)
from breakscan.lint.traverse import ancestors, find_nodes, parent_map


class BreakingCalleeInput(Rule):
    id = "BR022"
    name = "breaking-callee-input-grad"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("this function breaks, so each call from compiled code runs it as a frame of its own, compiled "
               "once and guarded on its tensor inputs' `requires_grad`: one call gives it the caller's input (which "
               "requires no grad), a later one what the caller's layers computed (which does), so the later call "
               "compiles it again")
    fix_hint = ("fix the break inside it (see its finding), so that it is traced inline with each caller; or "
                "expect one more compile of it")
    docs = """
    ## What it does
    Flags a function, method or module `forward` (at its first line) that breaks the graph and that
    one compiled function calls more than once, outside loops: first with the caller's own input
    (`h = self.block1(x)`, or a tensor computed from it with no layer, or one a factory makes) and
    later with what the caller computed with a layer (`h = self.block2(h)`), in the same parameter.
    Only a caller that no scanned code calls (the model's input is its input: an activation would
    require grad from the start), and not under `torch.no_grad()`. A break in a loop of the
    callee makes TorchDynamo give up on it before its first graph: it then never recompiles, and
    is not flagged.

    ## Why is this bad?
    TorchDynamo cannot inline a function that breaks: the caller's graph ends at the call, and the
    function runs as a frame of its own, which TorchDynamo compiles and caches on its code object,
    guarded on its inputs (their `requires_grad`, sizes, dtypes). The first call gives it the
    model's input, which requires no grad; the later call gives it what the model's parameters
    computed, which does (in grad mode): the guard fails and the function compiles again. Both
    versions stay cached, so it costs one more compile per such function, on top of the graphs
    the break splits.

    ## Example
    ```python
    class Block(nn.Module):
        def forward(self, x):
            h = self.fc(x)
            print(h.shape)          # breaks: Block.forward is a frame of its own
            return h

    def forward(self, x):           # the model
        h = self.block1(x)          # compiled for an input that requires no grad
        return self.block2(h)       # h requires grad: compiled again
    ```

    ## Use instead
    Remove the break from the callee (log outside the compiled code, or with
    `torch._dynamo.config.reorderable_logging_functions`): it is then traced inline in each call
    and compiled with the caller, once.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):  # recompile
                    h = self.fc(x).relu()
                    print("block", tuple(h.shape))  # break (another rule)
                    return h

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block1 = Block()
                    self.block2 = Block()

                def forward(self, x):
                    h = self.block1(x)
                    return self.block2(h)
        """, entry="Model()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            def log_scale(name, t):  # recompile
                scale = t.abs().mean()
                print(name, scale)  # break (another rule)

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inp = nn.Linear(6, 6)
                    self.out = nn.Linear(6, 3)

                def forward(self, feats):
                    centered = feats - feats.mean()
                    log_scale("input", centered)
                    hidden = self.inp(centered)
                    log_scale("hidden", hidden)
                    return self.out(hidden)
        """, entry="Encoder()", inputs="[torch.randn(4, 6), torch.randn(4, 6)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.fc(x).relu()
                    print("block", tuple(h.shape))  # break (another rule)
                    return h

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stem = nn.Linear(8, 8)
                    self.block1 = Block()
                    self.block2 = Block()

                def forward(self, x):
                    h = self.block1(self.stem(x))  # requires grad on both calls: one compile
                    return self.block2(h)
        """, entry="Model()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.fc(x).relu()
                    print("block", tuple(h.shape))  # break (another rule)
                    return h

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block1 = Block()
                    self.block2 = Block()

                @torch.no_grad()
                def forward(self, x):
                    h = self.block1(x)  # nothing requires grad: both calls give the same
                    return self.block2(h)
        """, entry="Model()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    return self.fc(x).relu()  # traced inline in each call

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block1 = Block()
                    self.block2 = Block()

                def forward(self, x):
                    h = self.block1(x)
                    return self.block2(h)
        """, entry="Model()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.fc(x).relu()
                    print("block", tuple(h.shape))  # break (another rule)
                    return h

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block = Block()

                def forward(self, x, use_block):
                    if use_block:
                        return self.block(x)
                    return self.block(x + 1)  # the other arm: one call per run
        """, entry="Model()", inputs="[(torch.randn(2, 8), True), (torch.randn(2, 8), True)]"),
    )

    def __init__(self) -> None:
        self.reported: set[str] = set()

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.loop_depth or ctx.is_called or without_grad(node, ctx):
            return  # a loop's calls are BR016's; a called function's input may require grad already
        calls, order = ctx.memoised(_execution_order, ctx.function.node)
        if id(node) not in order:
            return
        for callee in ctx.callees(node):
            owner = f"{callee.module.name}.{callee.class_name}"
            if callee.key in self.reported or owner in ctx.call_sites.per_instance_compiles:
                continue
            given_input = {param for param, argument in _arguments(node, callee).items()
                           if ctx.is_known_tensor(argument) and _caller_input(argument, node, ctx)}
            if not given_input:
                continue
            differing = self._later_call_with_grad(node, callee, given_input, calls, order, ctx)
            if differing:
                self.reported.add(callee.key)
                start = callee.node.decorators[0] if callee.node.decorators else callee.node
                ctx.report_in(self, callee, start, f"{self.message} (`{ctx.code(node)}`, then "
                                                   f"`{differing[1]}`)",
                              differing_inputs=differing[0], if_callees_break=(callee,))

    @staticmethod
    def _later_call_with_grad(first: cst.Call, callee, given_input: set[str], calls: list[cst.Call],
                              order: dict[int, tuple[int, int]], ctx) -> tuple[tuple[str, ...], str] | None:
        """The parameters a later call of `callee` (after `first`, on the same run, in no loop) gives
        what was computed with a layer where `first` gave the input, with that call's code."""
        parents = ctx.memoised(parent_map, ctx.function.node)
        assignments = find_nodes(ctx.function.node.body, (cst.Assign, cst.AugAssign, cst.AnnAssign),
                                 prune=(cst.FunctionDef, cst.Lambda))
        for later in calls:
            if order[id(later)] <= order[id(first)] or _in_loop(later, parents) or _exclusive(first, later, parents):
                continue
            if callee.key not in {found.key for found in ctx.callees(later)}:
                continue
            graded = graded_names([a for a in assignments if order[id(a)] < order[id(later)]], ctx)
            differing = tuple(param for param, argument in _arguments(later, callee).items()
                              if param in given_input and computed_with_grad(argument, graded, ctx))
            if differing:
                return differing, ctx.code(later)
        return None


def _execution_order(function: cst.FunctionDef) -> tuple[list[cst.Call], dict[int, tuple[int, int]]]:
    """The calls of the function's body (not of the functions it defines), and for each call and
    assignment (by `id`) a key that sorts them as they run (an argument's call before the call it
    is given to)."""
    nodes = find_nodes(function.body, (cst.CSTNode,), prune=(cst.FunctionDef, cst.Lambda))
    position = {id(node): index for index, node in enumerate(nodes)}
    end = dict(position)
    parents = parent_map(function.body)
    for node in reversed(nodes):
        parent = parents.get(id(node))
        if parent is not None and id(parent) in end:
            end[id(parent)] = max(end[id(parent)], end[id(node)])
    keys = {id(node): (end[id(node)], -position[id(node)]) for node in nodes
            if isinstance(node, (cst.Call, cst.Assign, cst.AugAssign, cst.AnnAssign))}
    calls = sorted((node for node in nodes if isinstance(node, cst.Call)), key=lambda call: keys[id(call)])
    return calls, keys


def _arguments(call: cst.Call, callee) -> dict[str, cst.BaseExpression]:
    """The callee's parameters this call gives a value, with the value's expression."""
    params = callee.positional_params
    named = {p.name.value for p in (*params, *callee.node.params.kwonly_params)}
    given = {params[i].name.value: a.value for i, a in enumerate(a for a in call.args if a.keyword is None and not a.star)
             if i < len(params)}
    given.update((a.keyword.value, a.value) for a in call.args if a.keyword is not None and a.keyword.value in named)
    return given


def _caller_input(argument: cst.BaseExpression, call: cst.Call, ctx) -> bool:
    """Whether the argument is the caller's input as far as requiring grad goes: a tensor a factory
    makes, or what the parameters give with no layer and no attribute but buffers (`feats -
    feats.mean()`), read where nothing but such code has rebound them (`x = (x - self.mean) / self.std`)."""
    if made_without_grad(argument, ctx):
        return True
    if uses_parameters(argument, ctx):
        return False
    function = ctx.function.node
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)} - {"self"}
    statement = _top_statement(call, function, ctx)
    earlier = function.body.body[:function.body.body.index(statement)]
    reads = {n.value for n in find_nodes(argument, (cst.Name,), prune=(cst.Lambda,)) if isinstance(n, cst.Name)}
    locals_read = {name for name in reads if name != "self" and ctx.local_value(name) is not None}
    for name in locals_read:
        before = {id(found) for top in earlier for found in bindings(top, name)}
        if name not in params and not before:
            return False
        if before - grad_free_rebindings(function.body, statement, name, {name} if name in params else params, ctx):
            return False
    return bool(locals_read)


def _top_statement(node: cst.CSTNode, function: cst.FunctionDef, ctx) -> cst.CSTNode:
    """The statement of the function's body that holds `node`."""
    parents = ctx.memoised(parent_map, function)
    holder = node
    for parent in ancestors(node, parents):
        if parent is function.body:
            return holder
        holder = parent
    return holder


def _in_loop(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    return any(isinstance(holder, (cst.For, cst.While, cst.CompFor)) for holder in ancestors(node, parents))


def _exclusive(first: cst.CSTNode, second: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    """Whether no run reaches both: they are in opposite arms of one `if` or conditional expression."""
    def arms(node: cst.CSTNode) -> dict[int, bool]:
        taken: dict[int, bool] = {}
        child = node
        for holder in ancestors(node, parents):
            if isinstance(holder, (cst.If, cst.IfExp)):
                if child is holder.body:
                    taken[id(holder)] = True
                elif child is holder.orelse:
                    taken[id(holder)] = False
            child = holder
        return taken

    first_arms = arms(first)
    return any(first_arms.get(test, way) != way for test, way in arms(second).items())
