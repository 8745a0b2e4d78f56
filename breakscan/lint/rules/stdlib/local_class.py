import libcst as cst

from breakscan.lint.rule import Example, Rule


class LocalClass(Rule):
    id = "BS508"
    name = "local-class"
    gb_ids = ("GB8977",)
    message = "a class statement inside compiled code cannot be traced: the graph breaks here"
    fix_hint = "define the class at module level (or in __init__'s module) and only use it in the compiled code"
    docs = """
    ## What it does
    Flags `class` statements inside functions that run under `torch.compile`.

    ## Why is this bad?
    Building a class runs `__build_class__`, which TorchDynamo does not trace (GB8977): the graph
    ends at the statement, it runs eagerly, and a new graph starts after it, on every call.

    ## Example
    ```python
    def forward(self, x):
        class Options:
            scale = 2.0
        return x * Options.scale
    ```

    ## Use instead
    ```python
    class Options:
        scale = 2.0

    def forward(self, x):
        return x * Options.scale
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                class Options:  # break
                    scale = 2.0
                return y * Options.scale
        """),
    )
    valid = (
        Example("""
            import torch

            class Options:
                scale = 2.0

            @torch.compile
            def fn(x):
                return x * Options.scale
        """),
    )

    def on_ClassDef(self, node: cst.ClassDef, ctx) -> None:
        ctx.report(self, node.name)
