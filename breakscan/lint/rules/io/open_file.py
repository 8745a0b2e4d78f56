import libcst as cst

from breakscan.lint.rule import Example, Rule

OPEN_FUNCTIONS = frozenset({"builtins.open", "io.open"})


class OpenFile(Rule):
    id = "BS406"
    name = "open-file"
    gb_ids = ("GB0059", "GB0142")
    message = ("`open()` cannot be traced: the graph breaks here (with `with open(...)`, the rest of the function "
               "runs eagerly)")
    fix_hint = "read or write files outside the compiled code and pass tensors in / return them out"
    docs = """
    ## What it does
    Flags `open(...)` (and `io.open`) in compiled code.

    ## Why is this bad?
    Opening a file is a side effect TorchDynamo cannot put in a graph: it ends the graph at the
    call (GB0059 "Failed to trace builtin operator"). As `with open(...) as f:` the file is also
    an unsupported context manager (GB0142), so TorchDynamo cannot resume after it: the rest of
    the function runs eagerly. Each method call on the file object breaks again.

    ## Example
    ```python
    with open(self.dump_path, "a") as f:
        f.write(f"{x.shape}\\n")
    ```

    ## Use instead
    Return what you want to save and write it from the caller, outside the compiled function.
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                with open("/dev/null", "w") as sink:  # break
                    sink.write("forward")
                return y + 1
        """),
        Example("""
            import torch

            def write_frame(path, pos, step):
                with open(path, "a") as fh:  # break
                    fh.write(f"step={step}\\n")
                    for p in pos.tolist():  # the frame runs eagerly from the `with`: no break here
                        fh.write(f"{p[0]:.4f}\\n")

            @torch.compile
            def fn(pos):
                pos = pos * 2
                write_frame("/dev/null", pos.detach(), 0)
                return pos + 1
        """, inputs="torch.randn(5, 3)"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return x * 2

            def save(x, path):
                with open(path, "w") as handle:
                    handle.write(str(fn(x).tolist()))
        """),
    )

    def __init__(self) -> None:
        self.entered: set[int] = set()  # `open(...)` calls that a `with` enters

    def on_With(self, node: cst.With, ctx) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call) and ctx.qualname(item.item.func) in OPEN_FUNCTIONS:
                self.entered.add(id(item.item))
                ctx.report(self, item.item, skips_frame=True)  # the rest of the frame runs eagerly

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in OPEN_FUNCTIONS and id(node) not in self.entered:
            ctx.report(self, node)
