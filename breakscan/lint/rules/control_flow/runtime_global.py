import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import find_nodes


class RuntimeGlobal(Rule):
    id = "BS212"
    name = "global-made-at-run-time"
    gb_ids = ("GB0354",)
    severity = "warning"
    message = ("this reads a global that no module-level statement defines: only a function's `global` "
               "statement creates it, and while it does not exist yet when TorchDynamo traces this (a call "
               "made in the compiled code creates it too late: TorchDynamo applies the assignment after the "
               "graph), looking it up fails and the graph breaks")
    fix_hint = ("define the name at module level (`flag = False` under the imports), so that it always exists; "
                "functions then only rebind it")
    docs = """
    ## What it does
    Flags a read, in compiled code, of a module global that nothing at module level defines:
    it comes to exist only when a function runs `global flag` and assigns it
    (`def reset(): global is_leaky; is_leaky = ...`).

    ## Why is this bad?
    TorchDynamo looks a global up in the module's namespace while tracing. An assignment made by
    traced code (the compiled function's own, or a function it calls) is not applied until the
    graph has run, so a global created that way does not exist when it is read: TorchDynamo
    fails to find the name ("Failed to find name in frame's builtins", GB0354) and the graph
    breaks there. The break applies the assignments traced before it, so the reads after it find
    their globals: only the first read in a function is flagged. When code run before compiling created it (the setter called once eagerly),
    the name exists and nothing breaks: breakscan cannot tell that statically, so this is a
    warning.

    ## Example
    ```python
    def check_layers(net):
        global has_leaky
        has_leaky = any(isinstance(m, Leaky) for m in net)

    def forward(self, x):
        check_layers(self.net)
        if has_leaky:          # breaks: `has_leaky` does not exist yet
            ...
    ```

    ## Use instead
    ```python
    has_leaky = False          # defined at module level: the lookup always succeeds

    def check_layers(net):
        global has_leaky
        has_leaky = any(isinstance(m, Leaky) for m in net)
    ```
    """
    invalid = (
        Example("""
            import torch

            def set_scales():
                global scale, bias
                scale = 2.0
                bias = 1.0

            @torch.compile
            def fn(x):
                set_scales()
                y = x * scale  # break
                return y + bias
        """),
        Example("""
            import torch

            def configure(value):
                global offset
                offset = value

            def shift(x):
                return x + offset  # break

            @torch.compile
            def fn(x):
                configure(1.0)
                return shift(x * 2)
        """),
    )
    valid = (
        Example("""
            import torch

            scale = 1.0

            def set_scale():
                global scale
                scale = 2.0

            @torch.compile
            def fn(x):
                set_scale()
                return x * scale
        """),
        Example("""
            import torch

            def set_scale():
                global scale
                scale = 2.0

            set_scale()

            @torch.compile
            def fn(x):
                return x * scale
        """),
    )

    def __init__(self) -> None:
        self.not_reads: set[int] = set()  # names that are not reads of a variable (attributes, keywords)
        self.reported = False

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        if ctx.module.runtime_globals:
            self.not_reads.add(id(node.attr))

    def on_Arg(self, node: cst.Arg, ctx) -> None:
        if node.keyword is not None and ctx.module.runtime_globals:
            self.not_reads.add(id(node.keyword))

    def on_Name(self, node: cst.Name, ctx) -> None:
        if node.value in ctx.module.runtime_globals and id(node) not in self.not_reads and (
                ctx.local_value(node.value) is None) and not _declares_global(ctx.function.node, node.value) and (
                not self.reported):
            # The break applies the assignments traced before it: later reads find their globals.
            self.reported = True
            ctx.report(self, node)


def _declares_global(function: cst.FunctionDef, name: str) -> bool:
    """The function is one that assigns the global (its `global` statement, its assignments)."""
    return any(isinstance(statement, cst.Global) and any(item.name.value == name for item in statement.names)
               for statement in find_nodes(function.body, (cst.Global,), prune=(cst.FunctionDef, cst.ClassDef)))
