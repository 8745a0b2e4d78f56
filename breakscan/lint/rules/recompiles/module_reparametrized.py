import libcst as cst

from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, FunctionRule
from breakscan.lint.semantics.steps import step_code
from breakscan.lint.traverse import find_nodes

# torch functions that change which parameters, buffers and hooks a module has: pruning (a
# `weight_orig` parameter, a `weight_mask` buffer and a pre-hook instead of `weight`, or back),
# parametrizations, weight and spectral norm (probed: each recompiles the next call).
REPARAMETRIZING = frozenset({
    "torch.nn.utils.parametrize.register_parametrization", "torch.nn.utils.parametrize.remove_parametrizations",
    "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm", "torch.nn.utils.remove_weight_norm",
    "torch.nn.utils.remove_spectral_norm"})
REPARAMETRIZING_PACKAGES = ("torch.nn.utils.prune.", "torch.nn.utils.parametrizations.")
NOT_REPARAMETRIZING = frozenset({"torch.nn.utils.prune.is_pruned"})


class ModuleReparametrizedBetweenCalls(FunctionRule):
    id = "BR021"
    name = "module-reparametrized-between-calls"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("a step between the declared calls prunes or reparametrizes the module's parameters: TorchDynamo "
               "guards on which parameters, buffers and hooks each submodule has, so the call after the step "
               "recompiles")
    fix_hint = ("prune or reparametrize the module once, before its first compiled call (or compile it again "
                "after each round, knowing each round compiles once)")
    docs = """
    ## What it does
    Flags a compiled module's `forward` when a step that `BREAKSCAN_TARGETS` declares between its
    calls (`"[x, prune_round, x]"`, read, never run) prunes or reparametrizes it: a function of
    `torch.nn.utils.prune` (`l1_unstructured`, `global_unstructured`, `remove`...),
    `torch.nn.utils.parametrize.register_parametrization` or `remove_parametrizations`, the
    `torch.nn.utils.parametrizations` (`weight_norm`, `spectral_norm`, `orthogonal`) or the older
    `torch.nn.utils.weight_norm` / `spectral_norm` and their removals; written in the step, in a
    function of the module it calls, or in a method of the module it calls. Reported where
    TorchDynamo reports the recompile: for pruning, the compiled function's first line (it
    guards the parameters there); for a parametrization, which changes the submodule's class,
    where `forward` first uses that submodule.

    ## Why is this bad?
    Pruning replaces a submodule's `weight` parameter by a `weight_orig` parameter, a
    `weight_mask` buffer and a forward pre-hook (and `prune.remove` puts a parameter back);
    a parametrization moves the parameter under `parametrizations`. TorchDynamo 2.13 guards on
    the module's parameters and buffers (`KeyError on ..._parameters['weight']`), so the next
    call compiles the whole model again: once per pruning round in iterative pruning.

    ## Example
    ```python
    model = torch.compile(Net())
    for round in range(rounds):
        train(model)
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.2)  # recompiles
    ```

    ## Use instead
    Prune and reparametrize before compiling, then fine-tune with the masks in place; or accept one
    compile per pruning round.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn
            import torch.nn.utils.prune as prune

            class Spotter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
                    self.head = nn.Linear(8, 2)

                def forward(self, x):  # recompile
                    return self.head(self.body(x))

            def prune_round(model, amount=0.3):  # a step: given the object alone
                prune.global_unstructured([(model.body[0], "weight"), (model.head, "weight")],
                                          pruning_method=prune.L1Unstructured, amount=amount)

            BREAKSCAN_TARGETS = {"Spotter()": "[torch.randn(2, 8), prune_round, torch.randn(2, 8)]"}
        """, entry="Spotter()", inputs="[torch.randn(2, 8), prune_round, torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn
            import torch.nn.utils.prune as prune

            class Critic(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)

                def forward(self, x):  # recompile
                    return self.fc(x * 2)

                def sparsify(self, amount):
                    prune.l1_unstructured(self.fc, "weight", amount)

            BREAKSCAN_TARGETS = {"Critic()": "[torch.randn(2, 8), lambda m: m.sparsify(0.5), torch.randn(2, 8)]"}
        """, entry="Critic()", inputs="[torch.randn(2, 8), lambda m: m.sparsify(0.5), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Critic(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)

                def forward(self, x):
                    y = x * 2
                    return self.fc(y)  # recompile

            BREAKSCAN_TARGETS = {"Critic()": "[torch.randn(2, 8), lambda m: nn.utils.parametrizations.spectral_norm(m.fc), torch.randn(2, 8)]"}
        """, entry="Critic()",
            inputs="[torch.randn(2, 8), lambda m: nn.utils.parametrizations.spectral_norm(m.fc), torch.randn(2, 8)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn
            import torch.nn.utils.prune as prune

            class Spotter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
                    prune.l1_unstructured(self.body[0], "weight", amount=0.3)  # before any call

                def forward(self, x):
                    return self.body(x)

            def report(model):
                print(prune.is_pruned(model))

            BREAKSCAN_TARGETS = {"Spotter()": "[torch.randn(2, 8), report, torch.randn(2, 8)]"}
        """, entry="Spotter()", inputs="[torch.randn(2, 8), report, torch.randn(2, 8)]"),
    )

    def check_function(self, ctx) -> None:
        if not ctx.is_root or ctx.function.node.name.value != "forward" or ctx.function.class_name is None:
            return
        found: list[tuple[cst.CSTNode, str]] = []
        for code in step_code(ctx, ctx.function.class_name):
            for call in find_nodes(code.node, (cst.Call,)):
                qualified = code.module.qualify(dotted_name(call.func))
                if _reparametrizing(qualified):
                    found.append((self._guarded_at(ctx, call, code.given, qualified or ""), code.step))
        if found:
            node, step = found[0]
            ctx.report(self, node, f"`{step}`, a step BREAKSCAN_TARGETS declares between calls, prunes or "
                                   "reparametrizes the module: TorchDynamo guards on which parameters, buffers and "
                                   "hooks each submodule has, so the call after the step recompiles")

    @staticmethod
    def _guarded_at(ctx, call: cst.Call, given: str, qualified: str) -> cst.CSTNode:
        """Where TorchDynamo reports the recompile (probed): pruning changes the parameters it
        guards as the frame starts; a parametrization changes the submodule's class, guarded where
        `forward` first uses the submodule (`self.fc` of `spectral_norm(m.fc)`)."""
        if qualified.startswith("torch.nn.utils.prune.") or not call.args:
            return ctx.function_start
        path = (dotted_name(call.args[0].value) or "").split(".")
        if len(path) < 2 or path[0] != given:
            return ctx.function_start
        uses = [node for node in find_nodes(ctx.function.node.body, (cst.Attribute,)) if isinstance(node, cst.Attribute)
                and node.attr.value == path[1] and isinstance(node.value, cst.Name) and node.value.value == "self"]
        return uses[0] if uses else ctx.function_start


def _reparametrizing(qualified: str | None) -> bool:
    return qualified is not None and qualified not in NOT_REPARAMETRIZING and (
        qualified in REPARAMETRIZING or qualified.startswith(REPARAMETRIZING_PACKAGES))
