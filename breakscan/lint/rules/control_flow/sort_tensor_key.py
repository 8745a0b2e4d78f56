import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class SortTensorKey(Rule):
    id = "BS213"
    name = "sort-tensor-key"
    gb_ids = ("GB0207",)
    message = ("sorting by tensors: TorchDynamo sorts only by constant keys (Python numbers, strings, shapes), "
               "so the graph breaks here")
    fix_hint = ("sort the values with torch.sort/torch.argsort and index with the result, or sort by a Python "
                "key (a name, a shape)")
    docs = """
    ## What it does
    Flags `sorted(items, key=...)` and `items.sort(key=...)` in compiled code when the key gives a
    tensor for an item (`key=lambda t: t.sum()`, `key=torch.norm`, `key=scores.get` over a dict of
    tensors, `key=scores.__getitem__` of a tensor), and `sorted(...)` without a key over tensors or
    over tuples holding them (`sorted(losses.items())`, a dict of tensors).

    ## Why is this bad?
    TorchDynamo 2.13 runs a sort only when every key is a constant it can compare while tracing:
    "sort with non-constant keys" (GB0207), and the graph breaks. Sorting by a Python key (a
    name, `len`, `t.shape[0]`) is traced; so is sorting a dict's string keys.

    ## Example
    ```python
    experts = sorted(self.experts, key=lambda e: e.load.sum())
    ranked = sorted(losses.items())
    ```

    ## Use instead
    ```python
    order = torch.argsort(torch.stack([e.load.sum() for e in self.experts]))
    ranked = sorted(losses)   # the names; look the losses up by name
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                parts = list(x.unbind(0))
                parts.sort(key=lambda t: t.sum())  # break
                return torch.stack(parts)
        """, inputs="torch.randn(4, 3)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scores = {"sum": x.sum(), "mean": x.mean()}
                order = sorted(scores, key=lambda name: scores[name])  # break
                ranked = sorted(scores.items())  # break
                return x * len(order[0]), ranked[0][1]
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                parts = list(x.unbind(0))
                return torch.stack(sorted(parts, key=torch.sum))  # break
        """, inputs="torch.randn(4, 3)"),
        Example("""
            import torch

            def top_indices(scores: torch.Tensor, k: int):
                order = sorted(range(scores.shape[0]), key=scores.__getitem__, reverse=True)  # break
                return torch.as_tensor(order[:k])

            @torch.compile
            def fn(x):
                return x[top_indices(x.sum(-1), 2)]
        """, inputs="torch.randn(4, 3)"),
        Example("""
            import torch
            from dataclasses import dataclass

            @dataclass
            class Hypothesis:
                tokens: list
                score: torch.Tensor

            def expand(hyp, logp):
                top, index = logp.topk(2)
                return [Hypothesis(hyp.tokens + [i], hyp.score + lp) for i, lp in zip(range(2), top)]

            @torch.compile
            def beam_search(logp):
                beams = [Hypothesis([0], logp.new_zeros(()))]
                for _ in range(2):
                    candidates = []
                    for hyp in beams:
                        candidates.extend(expand(hyp, logp))
                    candidates = sorted(candidates, key=lambda h: h.score, reverse=True)  # break
                    beams = candidates[:2]
                return torch.stack([h.score for h in beams])
        """, entry="beam_search", inputs="torch.randn(8)"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                parts = list(x.split([1, 3], dim=0))
                widest = sorted(parts, key=lambda t: t.shape[0])[-1]
                sizes = {"bb": 2, "a": 1}
                names = sorted(sizes, key=sizes.get) + sorted(["bb", "a"], key=len)
                return widest * len(names), sorted(sizes.items())[0][1]
        """, inputs="torch.randn(4, 3)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        named = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if named not in ("sorted", "sort"):
            return
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if ctx.qualname(func) == "builtins.sorted" and positional:
            items = positional[0]
        elif (isinstance(func, cst.Attribute) and named == "sort" and not positional
              and v.sort_of(ctx.value(func.value)) == "list"):
            items = func.value
        else:
            return
        key = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "key"), None)
        if isinstance(key, cst.Name) and key.value == "None":
            key = None
        if _non_constant(ctx.sort_keys(items, key)):
            ctx.report(self, node)


def _non_constant(keys: v.Value) -> bool:
    return keys in (v.TENSOR, v.TENSORS) or (
        isinstance(keys, v.Container) and any(_non_constant(held) for held in keys.items or ()))
