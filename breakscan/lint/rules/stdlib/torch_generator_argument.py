import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import assigned_values


class TorchGeneratorArgument(Rule):
    id = "BS510"
    name = "torch-generator-argument"
    gb_ids = ("GB0055", "GB7650")
    message = ("a `torch.Generator` passed to a torch call: TorchDynamo cannot hand the generator object to the "
               "graph, the graph breaks here")
    fix_hint = ("seed the global generator outside the compiled code (`torch.manual_seed(s)`) and draw without "
                "`generator=`, or draw the noise outside and pass it in")
    docs = """
    ## What it does
    Flags a torch call given a `torch.Generator` (`torch.randn(n, generator=g)`, or a tensor's
    in-place sampling method: `x.uniform_(a, b, generator=g)`), and the
    generator's state methods (`g.manual_seed(s)`, `seed()`, `initial_seed()`, `get_state()`,
    `set_state()`), where `g` is built by `torch.Generator(...)` (seeded or not) in the call or
    in the function (a name, or an element of a list of them), kept in an attribute (`self.gen = torch.Generator()`),
    built at module level, or a parameter declared `torch.Generator` (a warning when declared
    optional: `generator: Optional[torch.Generator] = None` breaks when one is passed).

    ## Why is this bad?
    TorchDynamo cannot turn a `torch.Generator` object into a graph input ("Failed to convert
    args/kwargs to proxy", GB0055): the graph breaks at the call, which runs eagerly, and a new
    graph starts after it (probed with a generator built in the function, a module-level one and
    one passed in). Its state methods break as well ("stateful RNG operation", GB7650). Building
    the generator in the compiled code breaks too (GB0363, BS507). `generator=None` is traced.

    ## Example
    ```python
    def forward(self, x):
        generator = torch.Generator().manual_seed(self.seed)
        return x + torch.randn(x.shape, generator=generator)
    ```

    ## Use instead
    ```python
    torch.manual_seed(seed)              # once, outside the compiled code

    def forward(self, x):
        return x + torch.randn(x.shape)  # the global generator is traced
    ```
    """
    invalid = (
        Example("""
            import torch

            def seeded_noise(shape, seeds):
                generators = [torch.Generator().manual_seed(s) for s in seeds]  # break (another rule)
                return torch.stack([torch.randn(shape, generator=g) for g in generators])  # break

            @torch.compile
            def fn(x):
                return x + seeded_noise(x.shape[1:], [1, 2])
        """, inputs="torch.randn(2, 4)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                generator = torch.Generator().manual_seed(3)  # break (another rule)
                noise = torch.randn(8, generator=generator)  # break
                return x + noise
        """),
        Example("""
            import torch

            NOISE = torch.Generator().manual_seed(0)

            class Sampler(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gen = torch.Generator()

                def forward(self, x):
                    self.gen.manual_seed(1)  # break
                    a = torch.randn(x.shape, generator=self.gen)  # break
                    b = torch.randn(x.shape, generator=NOISE)  # break
                    return x + a + b
        """, entry="Sampler()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                gen = torch.Generator()  # break (another rule)
                noise = torch.empty(x.shape).uniform_(-1.0, 1.0, generator=gen)  # break
                return x + noise
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                noise = torch.randn(8, generator=None)
                return x + noise
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _STATEFUL_METHODS:
            # `generator.manual_seed(s)` on a generator made before (one built here breaks there already)
            held = _holds_generator(func.value, ctx) if not _builds_generator(func.value, ctx) else False
            if held is not False:
                ctx.report(self, node, f"`torch.Generator.{func.attr.value}()` changes or reads the generator's "
                                       "state, which TorchDynamo cannot trace: the graph breaks here (GB7650)"
                                       + _maybe(func.value, held, ctx), severity=None if held else "warning")
            return
        given = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "generator"), None)
        # A torch function's, or a tensor method's (`x.uniform_(a, b, generator=g)`, `x.normal_(...)`).
        if given is None or not ((ctx.qualname(func) or "").startswith("torch.") or (
                isinstance(func, cst.Attribute) and ctx.is_known_tensor(func.value))):
            return
        held = True if _builds_generator(given, ctx) else _holds_generator(given, ctx)
        if held is not False:
            ctx.report(self, node, self.message + _maybe(given, held, ctx), severity=None if held else "warning")


# `torch.Generator` methods that read or change its state (probed: GB7650 "stateful RNG operation").
_STATEFUL_METHODS = frozenset({"manual_seed", "seed", "initial_seed", "get_state", "set_state"})
_GENERATOR = "torch.Generator"


def _maybe(node: cst.BaseExpression, held: bool | None, ctx) -> str:
    return "" if held else f" (when `{ctx.code(node)}` is a generator: it is declared optional)"


def _builds_generator(node: cst.BaseExpression | None, ctx) -> bool:
    """`torch.Generator(...)`, seeded or otherwise set up by its chained methods."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
        node = node.func.value  # `torch.Generator(device).manual_seed(s)`
    return isinstance(node, cst.Call) and ctx.qualname(node.func) == _GENERATOR


def _holds_generator(node: cst.BaseExpression, ctx) -> bool | None:
    """Whether a name or attribute holds a `torch.Generator`: one the function builds, an
    attribute set to one (`self.gen`), a module-level one, or a parameter declared as one; None
    for a parameter declared optional (`generator: Optional[torch.Generator] = None`)."""
    value = ctx.value(node)
    if isinstance(value, v.ModuleValue) and value.classes == {_GENERATOR}:
        return True
    if not isinstance(node, cst.Name):
        return False
    values = assigned_values(node.value, ctx)
    if values:
        return all(_builds_generator(value, ctx) for value in values)
    if ctx.local_value(node.value) is None:  # a module-level name
        return ctx.module.assignments.get(node.value) == _GENERATOR
    param = next((p for p in _parameters(ctx.function.node.params) if p.name.value == node.value), None)
    return _declared_generator(param.annotation.annotation, ctx) if param and param.annotation else False


def _declared_generator(annotation: cst.BaseExpression, ctx) -> bool | None:
    if ctx.qualname(annotation) == _GENERATOR:
        return True
    members: list[cst.BaseExpression] = []
    if isinstance(annotation, cst.Subscript) and ctx.qualname(annotation.value) in ("typing.Optional", "typing.Union"):
        members = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
    elif isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        members = [annotation.left, annotation.right]
    if any(ctx.qualname(member) == _GENERATOR for member in members):
        return None  # a generator, or None (or another member)
    return False


def _parameters(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]
