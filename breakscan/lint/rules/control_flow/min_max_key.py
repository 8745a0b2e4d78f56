import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

_DICT_VIEWS = frozenset({"keys", "values", "items"})


class MinMaxKey(Rule):
    id = "BS208"
    name = "min-max-key"
    gb_ids = ("GB0193",)
    message = ("`max`/`min` with `key=` over tensors, objects or a dict view: TorchDynamo only folds it over "
               "Python constants, so the graph breaks here")
    fix_hint = "stack the candidates and use torch.argmax/argmin on the key values, or pick the item outside"
    docs = """
    ## What it does
    Flags `max(...)` and `min(...)` called with a `key=` function in compiled code when what they
    compare holds tensors (`max(scores, key=lambda k: scores[k])` over a dict of tensors,
    `min([a, b], key=lambda t: t.sum())`) or objects (`max(hyps, key=self._score)` over a list of
    hypotheses, a `ModuleList`), or is a dict's `keys()`, `values()` or `items()`.

    ## Why is this bad?
    TorchDynamo 2.13 handles `max`/`min` with `key=` only by running them on Python constants
    (a list of ints, a literal dict). Anything else has no handler: "invalid call to builtin op
    handler" (GB0193), and the graph breaks. Without `key=`, or over plain numbers, nothing breaks.

    ## Example
    ```python
    losses = {"l1": l1, "l2": l2}
    worst = max(losses, key=lambda name: losses[name])
    ```

    ## Use instead
    ```python
    names = list(losses)
    worst_index = torch.stack([losses[n] for n in names]).argmax()
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scores = {"sum": x.sum(), "mean": x.mean()}
                best = max(scores, key=lambda name: scores[name])  # break
                return x * len(best)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                smallest = min([x, x + 1], key=lambda t: t.sum())  # break
                return smallest * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                sizes = {"a": 1, "bb": 2}
                longest = max(sizes.keys(), key=len)  # break
                return x * len(longest)
        """),
        Example("""
            import torch
            from torch import nn

            class Candidate:
                def __init__(self, tokens, length):
                    self.tokens = tokens
                    self.length = length

            class Picker(nn.Module):
                def forward(self, x):
                    candidates = [Candidate(x, 2), Candidate(x * 2, 3)]
                    longest = max(candidates, key=lambda c: c.length)  # break
                    return longest.tokens + 1
        """, entry="Picker()"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                widest = max([x.shape[0], 3], key=lambda n: -n)
                step = min(range(4), key=lambda k: abs(k - 2))
                return x * widest + step
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return torch.maximum(x, x + 1) * max(x.shape[0], 2)
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) not in ("builtins.max", "builtins.min"):
            return
        if not any(a.keyword is not None and a.keyword.value == "key" for a in node.args):
            return
        compared = [a.value for a in node.args if a.keyword is None]
        if any(_holds_tensors(item, ctx) or _holds_objects(item, ctx) or _is_dict_view(item, ctx)
               for item in compared):
            ctx.report(self, node)


def _holds_tensors(node: cst.BaseExpression, ctx) -> bool:
    value = ctx.value(node)
    return value in (v.TENSOR, v.TENSORS) or (
        isinstance(value, v.Container) and any(held in (v.TENSOR, v.TENSORS) for _, held in value.keys or ()))


def _holds_objects(node: cst.BaseExpression, ctx) -> bool:
    """Objects compared by their key (`max(hyps, key=score)` over a list of hypotheses, a
    ModuleList): not constants, whatever the key gives (probed: an int field breaks too)."""
    value = ctx.value(node)
    element = v.held(value) if v.sort_of(value) in ("list", "tuple") else None
    return isinstance(value, v.ModuleValue) or isinstance(element, v.ModuleValue)


def _is_dict_view(node: cst.BaseExpression, ctx) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args
            and node.func.attr.value in _DICT_VIEWS and v.sort_of(ctx.value(node.func.value)) == "dict")
