import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data, is_constant_tensor

_ALPHA = frozenset({"alpha"})
_ALPHA_BETA = frozenset({"alpha", "beta"})
# The keywords each op takes as a Python number (a `Scalar` in its schema), by bare name: the
# functions (`torch.add`) and the out-of-place methods (`x.add`). Probed: each breaks when given
# a tensor; the in-place forms (`add_`) and `addcdiv`'s `value` do not, and are left out.
SCALAR_KEYWORDS: dict[str, frozenset[str]] = {
    **{name: _ALPHA for name in ("add", "sub", "subtract", "rsub")},
    **{name: _ALPHA_BETA for name in ("addmm", "addmv", "addbmm", "baddbmm", "addr")},
    "addcmul": frozenset({"value"}),
}


class TensorScalarKeyword(Rule):
    id = "BS111"
    name = "tensor-scalar-keyword"
    gb_ids = ("GB0033",)
    message = ("a tensor given as a scalar factor (`alpha=`, `beta=`, `value=`) must be read into a Python number: "
               "the graph breaks here")
    fix_hint = ("multiply instead: `a + alpha * b` (`torch.add(a, b * alpha)`) keeps the factor a tensor; or pass a "
                "Python number")
    captured_by = ("capture_scalar_outputs",)
    docs = """
    ## What it does
    Flags a tensor passed as the scalar factor of `torch.add`/`sub`/`rsub` (`alpha=`),
    `torch.addmm`/`addmv`/`addbmm`/`baddbmm`/`addr` (`alpha=`, `beta=`) or `torch.addcmul`
    (`value=`), as a function or as a tensor's method: a buffer holding a tolerance
    (`torch.add(self.atol, y.abs(), alpha=self.rtol)`), a 0-d tensor computed in the code.

    ## Why is this bad?
    These arguments are Python numbers in the op's signature. Given a tensor, TorchDynamo must
    read its value (`aten._local_scalar_dense`, as `.item()` does), which it does not trace: the
    graph breaks at the call (GB0033), on every call. With
    `torch._dynamo.config.capture_scalar_outputs = True` the value is captured and nothing breaks.

    ## Example
    ```python
    self.register_buffer("rtol", torch.tensor(rtol))
    ...
    bound = torch.add(self.atol, y.abs(), alpha=self.rtol)
    ```

    ## Use instead
    ```python
    bound = self.atol + self.rtol * y.abs()
    ```
    """
    invalid = (
        Example("""
            import torch

            class Controller(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("atol", torch.tensor(1e-6))
                    self.register_buffer("rtol", torch.tensor(1e-3))

                def forward(self, y):
                    bound = torch.add(self.atol, y.abs(), alpha=self.rtol)  # break
                    return y / bound
        """, entry="Controller()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scale = x.mean()
                y = x.addcmul(x, x, value=scale)  # break
                return y + 1
        """),
    )
    valid = (
        Example("""
            import torch

            class Controller(torch.nn.Module):
                def __init__(self, rtol: float = 1e-3):
                    super().__init__()
                    self.register_buffer("atol", torch.tensor(1e-6))
                    self.rtol = rtol

                def forward(self, y):
                    bound = torch.add(self.atol, y.abs(), alpha=self.rtol)
                    return y / (self.atol + self.atol * y.abs()) + bound
        """, entry="Controller()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        qualified = ctx.qualname(func)
        if qualified is not None and qualified.startswith("torch."):
            name = qualified.rpartition(".")[2]
        elif isinstance(func, cst.Attribute) and ctx.is_tensor(func.value):
            name = func.attr.value
        else:
            return
        keywords = SCALAR_KEYWORDS.get(name)
        if keywords is None:
            return
        if any(arg.keyword is not None and arg.keyword.value in keywords and holds_tensor_data(arg.value, ctx)
               and not is_constant_tensor(arg.value, ctx) for arg in node.args):
            ctx.report(self, node)
