import ast

import libcst as cst

from breakscan.lint.rule import Example, Rule

DYNAMIC_CODE = frozenset({"builtins.exec", "builtins.compile", "builtins.breakpoint", "builtins.globals"})


class DynamicCode(Rule):
    id = "BS506"
    name = "dynamic-code"
    gb_ids = ("GB0059",)
    message = "`exec`/`eval`/`compile`/`globals()`/`breakpoint()` cannot be traced: the graph breaks here"
    fix_hint = "resolve the code or the name once outside the compiled function (a dict of callables, getattr on a module)"
    docs = """
    ## What it does
    Flags `exec(...)`, `compile(...)`, `globals()`, `breakpoint()` and `eval(...)` of anything but
    a constant expression, in compiled code.

    ## Why is this bad?
    These builtins run code or expose namespaces that TorchDynamo cannot model: it ends the graph
    at the call (GB0059 "Failed to trace builtin operator") and runs it eagerly. TorchDynamo
    folds `eval` of a literal (`eval("[1, 2]")`) or of plain arithmetic (`eval("2 * 4")`); an
    `eval` that names anything (`eval("x * 2")`, `eval("ACTIVATIONS")`), calls anything or uses
    `**` breaks.

    ## Example
    ```python
    act = globals()[self.activation_name]
    ```

    ## Use instead
    ```python
    ACTIVATIONS = {"relu": torch.relu, "gelu": F.gelu}
    act = ACTIVATIONS[self.activation_name]
    ```
    """
    invalid = (
        Example("""
            import torch

            def scaled(t):
                return t * 2

            @torch.compile
            def fn(x):
                y = x + 1
                helper = globals()["scaled"]  # break
                return helper(y)
        """),
        Example("""
            import torch

            SCALE = 3

            @torch.compile
            def fn(x):
                y = x.cos()
                return y * eval("SCALE * 2")  # break
        """),
    )
    valid = (
        Example("""
            import torch

            def scaled(t):
                return t * 2

            HELPERS = {"scaled": scaled}

            @torch.compile
            def fn(x):
                return HELPERS["scaled"](x) + eval("1 + 1") * eval("[1, 2]")[0]
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                names = locals()
                return x * len(names)
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if qualified in DYNAMIC_CODE or (qualified == "builtins.eval" and not _is_constant_eval(node)):
            ctx.report(self, node)


_NUMERIC_NODES = (
    ast.Expression, ast.Constant, ast.UnaryOp, ast.BinOp, ast.UAdd, ast.USub, ast.Invert, ast.Add, ast.Sub,
    ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.BitOr, ast.BitXor, ast.BitAnd,
)


def _is_constant_eval(node: cst.Call) -> bool:
    """What TorchDynamo 2.13 folds (BuiltinVariable.call_eval): one literal string holding a
    Python literal, or arithmetic on numbers without `**`, names or calls."""
    if len(node.args) != 1 or not isinstance(node.args[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return False
    text = node.args[0].value.evaluated_value
    if not isinstance(text, str):
        return False
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return False
    if any(isinstance(part, ast.Call) for part in ast.walk(tree)):
        return False
    try:
        ast.literal_eval(tree)
        return True
    except ValueError:
        return all(
            isinstance(part, _NUMERIC_NODES)
            and (not isinstance(part, ast.Constant) or isinstance(part.value, (bool, int, float, complex)))
            for part in ast.walk(tree)
        )
    except (TypeError, SyntaxError, MemoryError, RecursionError):
        return False
