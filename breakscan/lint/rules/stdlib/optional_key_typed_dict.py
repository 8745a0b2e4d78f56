import libcst as cst

from breakscan.lint.index import ClassInfo
from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, Rule

_TYPED_DICT = frozenset({"typing.TypedDict", "typing_extensions.TypedDict"})
_NOT_REQUIRED = frozenset({"typing.NotRequired", "typing_extensions.NotRequired"})


class OptionalKeyTypedDict(Rule):
    id = "BS511"
    name = "optional-key-typed-dict"
    gb_ids = ("GB0257",)
    message = "building a TypedDict with optional keys cannot be traced: the graph breaks here"
    fix_hint = ("build a plain dict (`{\"type\": \"sample\", ...}`: a TypedDict is one at run time), or declare "
                "every key required")
    docs = """
    ## What it does
    Flags calls, in compiled code, that build an object of a scanned `TypedDict` class with
    optional keys: declared with `total=False` (on it or on a TypedDict base) or with a
    `NotRequired[...]` field.

    ## Why is this bad?
    TorchDynamo 2.13 does not trace such a class's constructor (GB0257 "TypedDict with optional
    keys"): the graph ends at the call, which runs eagerly, and a new graph starts after it, on
    every call. A TypedDict whose keys are all required is traced, and so is a dict literal.

    ## Example
    ```python
    class Message(TypedDict, total=False):
        name: str
        value: torch.Tensor

    def forward(self, x):
        msg = Message(name="x", value=x)
    ```

    ## Use instead
    ```python
    msg: Message = {"name": "x", "value": x}
    ```
    """
    invalid = (
        Example("""
            from typing import TypedDict
            import torch

            class Message(TypedDict, total=False):
                name: str
                value: torch.Tensor

            @torch.compile
            def fn(x):
                y = x * 2
                msg = Message(name="x", value=y)  # break
                return msg["value"] + 1
        """),
        Example("""
            from typing import TypedDict
            from typing_extensions import NotRequired
            import torch

            class Options(TypedDict):
                scale: float
                shift: NotRequired[float]

            @torch.compile
            def fn(x):
                y = x * 2
                options = Options(scale=2.0)  # break
                return y * options["scale"]
        """),
    )
    valid = (
        Example("""
            from typing import TypedDict
            import torch

            class Options(TypedDict):
                scale: float

            class Message(TypedDict, total=False):
                value: torch.Tensor

            @torch.compile
            def fn(x):
                options = Options(scale=2.0)
                msg: Message = {"value": x}
                return msg["value"] * options["scale"]
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        info = ctx.find_class(qualified) if qualified else None
        if info is None:
            return
        lineage = ctx.class_lineage(info)
        if any(base in _TYPED_DICT for c in lineage for base in c.bases) and any(map(_declares_optional_keys, lineage)):
            ctx.report(self, node)


def _declares_optional_keys(info: ClassInfo) -> bool:
    """`total=False` in its class statement, or a `NotRequired[...]` field."""
    if any(k.keyword is not None and k.keyword.value == "total" and isinstance(k.value, cst.Name)
           and k.value.value == "False" for k in info.node.keywords):
        return True
    body = info.node.body.body if isinstance(info.node.body, cst.IndentedBlock) else ()
    for line in body:
        for statement in (line.body if isinstance(line, cst.SimpleStatementLine) else ()):
            if isinstance(statement, cst.AnnAssign):
                annotation = statement.annotation.annotation
                head = annotation.value if isinstance(annotation, cst.Subscript) else annotation
                if info.module.qualify(dotted_name(head)) in _NOT_REQUIRED:
                    return True
    return False
