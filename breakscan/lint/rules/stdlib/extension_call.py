import os

import libcst as cst

from breakscan.lint.rule import Example, Rule


class ExtensionCall(Rule):
    id = "BS513"
    name = "extension-call"
    gb_ids = ("GB0007", "GB0156")
    message = "this function is compiled code (a C, C++ or Cython extension module): TorchDynamo cannot trace it, the graph breaks here"
    fix_hint = ("call it outside the compiled code and pass the result in, or wrap it as a custom operator "
                "(`torch.library.custom_op`) so the graph can hold it")
    docs = """
    ## What it does
    Flags a call of a function that a compiled extension module defines: a `.so`/`.pyd` file
    built from C, C++ or Cython, found beside the scanned code or among the installed packages
    (without importing anything), named directly (`my_kernels.forward(x)`, a kernel built with
    `setup.py`) or re-exported by a package's Python modules (`from scipy.optimize import
    linear_sum_assignment`, which `scipy.optimize` imports from `scipy.optimize._lsap`). torch's
    own extensions, NumPy's and the standard library's are left to the rules that know them.

    ## Why is this bad?
    TorchDynamo traces Python bytecode. A function with no Python source (a builtin of an
    extension: GB0007 "Attempted to call function marked as skipped ... cannot determine source
    file", or a callable object such as a Cython function: GB0156) cannot be traced: the graph
    ends at the call, the call runs eagerly, and a new graph starts after it. A DETR-style
    Hungarian matcher in a loss is the common case; custom CUDA kernels called through their
    pybind module are another.

    ## Example
    ```python
    from scipy.optimize import linear_sum_assignment

    def forward(self, logits, boxes, targets):
        cost = self.cost_matrix(logits, boxes, targets)
        rows, cols = linear_sum_assignment(cost.cpu())
        ...
    ```

    ## Use instead
    Run the matcher outside the compiled region (compile the cost computation, match eagerly,
    then compile the loss on the matched pairs), or register the kernel as a custom operator
    (`torch.library.custom_op`) so TorchDynamo puts one opaque call in the graph.
    """
    invalid = (
        Example("""
            import torch
            from scipy.optimize import linear_sum_assignment

            @torch.compile
            def fn(cost):
                c = cost * 2
                rows, cols = linear_sum_assignment(c)  # break
                return c.sum() + len(rows)
        """, inputs="torch.rand(4, 4)"),
        Example("""
            import scipy.optimize
            import torch

            class Matcher(torch.nn.Module):
                def forward(self, cost):
                    c = cost.softmax(-1)
                    rows, cols = scipy.optimize.linear_sum_assignment(c.detach())  # break
                    return c[torch.as_tensor(rows), torch.as_tensor(cols)].sum()
        """, entry="Matcher()", inputs="torch.rand(4, 4)"),
    )
    valid = (
        Example("""
            import torch
            from scipy.optimize import linear_sum_assignment

            def match(cost):
                return linear_sum_assignment(cost)  # outside the compiled code

            @torch.compile
            def fn(cost):
                return cost.softmax(-1).sum()
        """, inputs="torch.rand(4, 4)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if qualified is None or ctx.find_function(qualified) is not None or ctx.find_class(qualified) is not None:
            return  # the scanned code's own
        extension = ctx.compiled_extension(qualified)
        if extension is not None:
            ctx.report(self, node, f"`{qualified}` is compiled code (the extension module `{os.path.basename(extension)}`): "
                                   "TorchDynamo cannot trace it, the graph breaks here")
