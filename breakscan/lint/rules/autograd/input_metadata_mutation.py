import libcst as cst

from breakscan.lint import catalogue
from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

# The catalogue's probes apply each method to an input of the compiled function: those that
# break there with GB0148 change an input's metadata in place (`t_`, `unsqueeze_`, `detach_`...).
_INPUT_METADATA_BREAK = "GB0148"


def _breaks_on_input(method: str) -> bool:
    entry = catalogue.tensor_method(method)
    return entry is not None and entry.breaks and _INPUT_METADATA_BREAK in entry.gb_ids


class InputMetadataMutation(Rule):
    id = "BS709"
    name = "input-metadata-mutation"
    gb_ids = (_INPUT_METADATA_BREAK,)
    message = ("an in-place change of an input tensor's shape or strides (`t_`, `transpose_`, `unsqueeze_`, "
               "`squeeze_`, `detach_`...) cannot be traced: the graph breaks here")
    fix_hint = "use the out-of-place form and rebind the name (`x = x.t()`, `x = x.unsqueeze(0)`)"
    docs = """
    ## What it does
    Flags the in-place methods that change a tensor's metadata (`t_`, `transpose_`, `swapaxes_`,
    `swapdims_`, `squeeze_`, `unsqueeze_`, `detach_`, `resize_`, `resize_as_`: those the catalogue's
    probes saw break) when
    they are called on a tensor the compiled function receives: a parameter of the function that
    has not been rebound (a warning: it is an input when the function is the compiled one or is
    given one), a parameter or buffer of the module (`self.mask.unsqueeze_(0)`, an error), or
    another object's attribute the analysis cannot type: an error when the object is the
    module's, the class's or a global one (`cls.instances[i].mem.detach_()`: a tensor kept there
    was made before the compiled code ran, and breaks even when the compiled code assigned it
    anew), a warning when it is a local or a parameter.

    ## Why is this bad?
    TorchDynamo 2.13 cannot mutate the metadata of a graph input inside the graph and delays the
    call to a graph break (GB0148 "Unsupported function call (delayed)"). On a tensor the compiled
    code made itself, the same methods are traced, and are not flagged.

    ## Example
    ```python
    def forward(self, x):
        x.unsqueeze_(1)
        return self.conv(x)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        x = x.unsqueeze(1)
        return self.conv(x)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x.t_()  # break
                return x + 1
        """, inputs="torch.randn(2, 3)"),
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("mask", torch.ones(4))

                def forward(self, x):
                    self.mask.unsqueeze_(0)  # break
                    return x * self.mask
        """, entry="Model()", inputs="torch.randn(4)"),
        Example("""
            import torch

            class Neuron:
                instances = []

                def __init__(self):
                    self.mem = torch.zeros(4)
                    Neuron.instances.append(self)

                @classmethod
                def detach_all(cls):
                    for layer in range(len(cls.instances)):
                        cls.instances[layer].mem.detach_()  # break

            Neuron()

            @torch.compile
            def fn(x):
                Neuron.detach_all()
                return x + 1
        """, inputs="torch.randn(4)"),
        Example("""
            import torch
            from torch import nn

            class Voxels(nn.Module):
                def __init__(self, channels=2):
                    super().__init__()
                    self.channels = channels
                    self.register_buffer("scratch", torch.zeros(0), persistent=False)

                def _workspace(self, batch):
                    n = batch * self.channels * 8
                    if self.scratch.numel() != n:
                        self.scratch.resize_(n)  # break
                    return self.scratch.zero_().view(batch, self.channels, -1)

                def forward(self, x):
                    return self._workspace(x.shape[0]) + x.mean()
        """, entry="Voxels()", inputs="torch.randn(2, 4)"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                y.t_()
                x = x.unsqueeze(0)
                x.squeeze_(0)
                return x + y.sum()
        """, inputs="torch.randn(2, 3)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and _breaks_on_input(func.attr.value)):
            return
        receiver = func.value
        if isinstance(receiver, cst.Attribute) and ctx.value(receiver.value) == v.SELF and ctx.is_known_tensor(receiver):
            ctx.report(self, node)  # a parameter or buffer of the module: always an input
        elif ctx.is_passed_in(receiver) and ctx.is_tensor(receiver):
            ctx.report(self, node, unknown=None, severity="warning",
                       message=f"{self.message}, when `{receiver.value}` is an input of the compiled function "
                               "(a parameter: it is when this is the compiled function, or is given one)")
        elif isinstance(receiver, cst.Attribute) and ctx.value(receiver) in (v.UNKNOWN, v.OTHER):
            # Object state the analysis lost track of (`cls.instances[i].mem`): the method names are
            # tensors' own, and a tensor kept in the module's, the class's or a global object was
            # made before the compiled code ran (even one it assigned there anew breaks: probed).
            root = _root_name(receiver)
            if root is not None and (root in ("self", "cls") or ctx.local_value(root) is None):
                ctx.report(self, node, unknown=None,
                           message=f"{self.message}: `{ctx.code(receiver)}` is kept in an object made outside the "
                                   "compiled code (an input)")
            else:
                ctx.report(self, node, unknown=None, severity="warning",
                           message=f"{self.message}, when `{ctx.code(receiver)}` is a tensor made outside the "
                                   "compiled code (an input)")


def _root_name(node: cst.BaseExpression) -> str | None:
    """`cls` in `cls.instances[i].mem`: the name an attribute and subscript chain starts from."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None

