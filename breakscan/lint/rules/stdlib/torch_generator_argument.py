import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import assigned_values


class TorchGeneratorArgument(Rule):
    id = "BS510"
    name = "torch-generator-argument"
    gb_ids = ("GB0055",)
    message = ("a `torch.Generator` passed to a torch call: TorchDynamo cannot hand the generator object to the "
               "graph, the graph breaks here")
    fix_hint = ("seed the global generator outside the compiled code (`torch.manual_seed(s)`) and draw without "
                "`generator=`, or draw the noise outside and pass it in")
    docs = """
    ## What it does
    Flags a torch call given a `torch.Generator` (`torch.randn(n, generator=g)`), where `g` is
    built by `torch.Generator(...)` (seeded or not) in the call or in an assignment of the
    function.

    ## Why is this bad?
    TorchDynamo cannot turn a `torch.Generator` object into a graph input ("Failed to convert
    args/kwargs to proxy", GB0055): the graph breaks at the call, which runs eagerly, and a new
    graph starts after it (probed with a generator built in the function, a module-level one and
    one passed in). Building the generator in the compiled code breaks too (GB0363, BS507).
    `generator=None` is traced.

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

            @torch.compile
            def fn(x):
                generator = torch.Generator().manual_seed(3)  # break (another rule)
                noise = torch.randn(8, generator=generator)  # break
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
        given = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "generator"), None)
        if given is None or not (ctx.qualname(node.func) or "").startswith("torch."):
            return
        if _builds_generator(given, ctx) or (isinstance(given, cst.Name) and _always_a_generator(given.value, ctx)):
            ctx.report(self, node)


def _builds_generator(node: cst.BaseExpression | None, ctx) -> bool:
    """`torch.Generator(...)`, seeded or otherwise set up by its chained methods."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
        node = node.func.value  # `torch.Generator(device).manual_seed(s)`
    return isinstance(node, cst.Call) and ctx.qualname(node.func) == "torch.Generator"


def _always_a_generator(name: str, ctx) -> bool:
    values = assigned_values(name, ctx)
    return bool(values) and all(_builds_generator(value, ctx) for value in values)
