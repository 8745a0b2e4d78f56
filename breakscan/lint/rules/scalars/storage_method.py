import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import assigned_values

_STORAGES = frozenset({"untyped_storage", "storage"})
# What TorchDynamo 2.13 answers on a storage without breaking (probed).
_TRACED = frozenset({"size"})


class StorageMethod(Rule):
    id = "BS110"
    name = "storage-method"
    gb_ids = ("GB0156",)
    message = "a method of a tensor's storage: TorchDynamo does not trace storages beyond their size, the graph breaks here"
    fix_hint = "ask the tensor instead: t.data_ptr(), t.nbytes, t.numel() are traced"
    docs = """
    ## What it does
    Flags a method called on a tensor's storage (`x.untyped_storage().nbytes()`,
    `x.untyped_storage().data_ptr()`, or a name bound to `x.untyped_storage()`) in compiled code;
    `.size()` is the one TorchDynamo 2.13 answers.

    ## Why is this bad?
    TorchDynamo models a storage only as far as its size: any other method has no handler,
    "Unsupported method call" (GB0156), and the graph breaks. Getting the storage itself is fine.

    ## Example
    ```python
    if x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr():
        ...
    ```

    ## Use instead
    ```python
    if x.data_ptr() == y.data_ptr():   # the tensor's own data_ptr, nbytes and numel are traced
        ...
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                used = x.untyped_storage().nbytes()  # break
                return x * used
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                storage = x.untyped_storage()
                return x * (storage.data_ptr() > 0)  # break
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return x * x.untyped_storage().size() + x.nbytes
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value in _TRACED:
            return
        if _is_storage(func.value, ctx):
            ctx.report(self, node)


def _is_storage(node: cst.BaseExpression, ctx) -> bool:
    """`t.untyped_storage()` of a tensor, or a local name only ever bound to one."""
    if isinstance(node, cst.Name):
        values = assigned_values(node.value, ctx)
        return bool(values) and all(value is not None and _is_storage(value, ctx) for value in values)
    return (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _STORAGES and ctx.is_tensor(node.func.value))
