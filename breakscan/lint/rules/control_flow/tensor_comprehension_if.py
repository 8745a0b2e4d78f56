import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data
from breakscan.lint.traverse import children


class TensorComprehensionIf(Rule):
    id = "BS206"
    name = "tensor-comprehension-if"
    gb_ids = ("GB0170", "GB4347")
    message = "a comprehension filter on a tensor's value: TorchDynamo cannot know which items to keep, the graph breaks"
    fix_hint = "keep every item and mask it (torch.where), or filter outside the compiled code"
    docs = """
    ## What it does
    Flags the `if` clause of a list, set, dict or generator comprehension when it tests tensor
    data: `[f for f in feats if f.abs().sum() > 0]`. Filters on Python values
    (`[t for t in ts if t is not None]`, `if t.dim() == 4`) are fine, and so are tests on the
    keys of a dict (`{k: v for k, v in outputs.items() if k != "aux"}`): keys are Python values.

    ## Why is this bad?
    Which items are kept depends on values only known at run time, so TorchDynamo ends the graph
    at the test (GB0170 "Data-dependent branching") and the output's length is data-dependent.
    Over `zip(...)` it cannot even resume the half-consumed iterator (GB4347 "Missing
    tp_iternext") and the rest of the function runs eagerly.

    ## Example
    ```python
    kept = [box for box in boxes if box[4] > self.threshold]
    ```

    ## Use instead
    ```python
    keep = boxes[:, 4] > self.threshold     # a mask; apply it outside the compiled code
    scores = torch.where(keep, boxes[:, 4], 0.0)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                rows = x.view(4, 2)
                kept = [r for r in rows if r.sum() > -100]  # break
                return torch.stack(kept) * 2
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x, mask=None):
                parts = [x * 2, None, x - 1]
                kept = [p for p in parts if p is not None and p.dim() == 1]
                return torch.stack(kept).sum(0)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(outputs):
                main = {k: v for k, v in outputs.items() if k != "aux"}
                names = [k for k in outputs.keys() if k.startswith("lo")]
                return main["logits"] * 2 + len(names)
        """, inputs='({"logits": torch.randn(4), "aux": torch.randn(4)},)'),
    )

    def on_ListComp(self, node: cst.ListComp, ctx) -> None:
        self._note_key_tests(node)

    def on_SetComp(self, node: cst.SetComp, ctx) -> None:
        self._note_key_tests(node)

    def on_GeneratorExp(self, node: cst.GeneratorExp, ctx) -> None:
        self._note_key_tests(node)

    def on_DictComp(self, node: cst.DictComp, ctx) -> None:
        self._note_key_tests(node)

    def _note_key_tests(self, node) -> None:
        # runs before the `if` clauses are visited; remember the ones that only test dict keys
        comp = node.for_in
        while comp is not None:
            keys = _dict_key_names(comp)
            for clause in comp.ifs if keys else ():
                if _names_in(clause.test) <= keys:
                    self._key_tests()[id(clause)] = clause
            comp = comp.inner_for_in

    def on_CompIf(self, node: cst.CompIf, ctx) -> None:
        if self._key_tests().pop(id(node), None) is node:
            return  # a test on dict keys only: Python values
        if holds_tensor_data(node.test, ctx):
            ctx.report(self, node.test)

    def _key_tests(self) -> dict[int, cst.CompIf]:
        if "_key_tests_by_id" not in self.__dict__:
            self._key_tests_by_id: dict[int, cst.CompIf] = {}
        return self._key_tests_by_id


def _dict_key_names(node: cst.CompFor) -> set[str]:
    """Names a `for` over `d.items()` / `d.keys()` binds to the dict's keys (`for k, v in d.items()`)."""
    it = node.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and not it.args):
        return set()
    method, target = it.func.attr.value, node.target
    if method == "keys" and isinstance(target, cst.Name):
        return {target.value}
    if method == "items" and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
        first = target.elements[0].value
        return {first.value} if isinstance(first, cst.Name) else set()
    return set()


def _names_in(expr: cst.CSTNode) -> set[str]:
    """Bare names read by an expression (attribute names and call keywords excluded)."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, (cst.Attribute, cst.Arg)):
        return _names_in(expr.value)
    return set().union(*(_names_in(child) for child in children(expr)))
