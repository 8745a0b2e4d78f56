import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import find_nodes


class GlobalNumberUpdated(Rule):
    id = "BR010"
    name = "global-number-updated"
    kind = "recompile"
    gb_ids = ()
    message = ("a module-level int is read here and updated later by the compiled code (`global`): TorchDynamo "
               "guards on a global number's value, so every call recompiles (until the recompile limit, then "
               "the function runs eagerly)")
    fix_hint = ("count outside the compiled code (in its caller), or keep the count in a 0-d tensor "
                "(`COUNT = torch.zeros((), dtype=torch.long)`, updated in place)")
    docs = """
    ## What it does
    Flags the first read, in a compiled function, of a module-level number (`CALLS = 0`,
    `SCALE = 1.0`, `FIRST = True` at module level) that the function declares `global` and
    updates afterwards (`CALLS += 1`, `SCALE = SCALE * 0.9`, `FIRST = False`); or one (or a
    string: `BACKEND = "sdpa"`) that a function called by a step between the calls
    `BREAKSCAN_TARGETS` declares sets
    (`"[x, lambda m: set_fast_gelu(False), x]"`, read, never run), or a module-level dict whose
    entries such a function, or the step itself (`lambda m: CONFIG.update(revin=False)`), changes
    (`FLAGS[name] = value`, `FLAGS.update(...)`), read anywhere in
    compiled code (a warning): each entry the steps set, where it is first read
    (`set_flag("fused", False)` sets `FLAGS["fused"]`, the function's parameter read as the step
    gives it), or the dict's first read where which entries they set is not known; or an entry of a module-level dict that the compiled code counts up
    itself (`STATE["step"] += 1`: a warning, as the entry may hold a tensor). Reported where
    TorchDynamo installs its guard: the read.

    ## Why is this bad?
    TorchDynamo treats a global int, float or bool as a constant and guards on its value
    (`G['CALLS'] == 0`). The compiled code changing it fails that guard on the next call. An int
    counted up on every call recompiles on every call, and after 8 recompiles
    (`torch._dynamo.config.recompile_limit`) the function runs eagerly: an error. A float is made
    dynamic after its first recompile, and a bool has two values: a warning.

    ## Example
    ```python
    CALLS = 0

    @torch.compile
    def fn(x):
        global CALLS
        CALLS += 1
        return x * CALLS
    ```

    ## Use instead
    ```python
    CALLS = 0

    @torch.compile
    def fn(x, calls):
        return x * calls

    CALLS += 1                 # in the caller
    fn(x, torch.tensor(CALLS)) # a tensor: no guard on its value
    ```
    """
    invalid = (
        Example("""
            import torch

            FAST_GELU = True

            def set_fast_gelu(enabled):
                global FAST_GELU
                FAST_GELU = enabled

            def gelu(x):
                if FAST_GELU:  # recompile
                    return x * torch.sigmoid(1.702 * x)
                return torch.nn.functional.gelu(x)

            BREAKSCAN_TARGETS = {"gelu": "[torch.ones(4), lambda f: set_fast_gelu(False), torch.ones(4)]"}
        """, entry="gelu", inputs="[torch.ones(4), lambda f: set_fast_gelu(False), torch.ones(4)]"),
        Example("""
            import torch

            TEMPERATURE = 4.0

            def set_temperature(t):
                global TEMPERATURE
                TEMPERATURE = t

            def soften(logits):
                t = TEMPERATURE  # read where `t` is first used
                return (logits / t).softmax(-1)  # recompile

            BREAKSCAN_TARGETS = {"soften": "[torch.ones(4), lambda f: set_temperature(2.0), torch.ones(4)]"}
        """, entry="soften", inputs="[torch.ones(4), lambda f: set_temperature(2.0), torch.ones(4)]"),
        Example("""
            import torch

            BACKEND = "fast"

            def set_backend(name):
                global BACKEND
                BACKEND = name

            def attend(x):
                if BACKEND == "fast":  # recompile
                    return x.softmax(-1)
                return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)

            BREAKSCAN_TARGETS = {"attend": "[torch.ones(4), lambda f: set_backend('slow'), torch.ones(4)]"}
        """, entry="attend", inputs="[torch.ones(4), lambda f: set_backend('slow'), torch.ones(4)]"),
        Example("""
            import torch

            FLAGS = {"fused": True, "scale": 1.0}

            def set_flag(name, value):
                FLAGS[name] = value

            def block(x):
                if FLAGS["fused"]:  # recompile
                    return torch.addcmul(x, x, x) * FLAGS["scale"]
                return (x + x * x) * FLAGS["scale"]  # an entry the step leaves as it is

            BREAKSCAN_TARGETS = {"block": "[torch.ones(4), lambda f: set_flag('fused', False), torch.ones(4)]"}
        """, entry="block", inputs="[torch.ones(4), lambda f: set_flag('fused', False), torch.ones(4)]"),
        Example("""
            import torch
            from torch import nn

            CONFIG = {"revin": True, "eps": 1e-5}

            class Forecaster(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(8, 8)

                def forward(self, x):
                    if CONFIG["revin"]:  # recompile
                        x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + CONFIG["eps"])
                    return self.head(x)

            BREAKSCAN_TARGETS = {"Forecaster()": "[torch.randn(2, 8), lambda m: CONFIG.update(revin=False), torch.randn(2, 8)]"}
        """, entry="Forecaster()", inputs="[torch.randn(2, 8), lambda m: CONFIG.update(revin=False), torch.randn(2, 8)]"),
        Example("""
            import torch

            CALLS = 0

            @torch.compile
            def fn(x):
                global CALLS
                CALLS += 1  # recompile
                return x * CALLS
        """, inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            FIRST = True

            @torch.compile
            def fn(x):
                global FIRST
                if FIRST:  # recompile
                    FIRST = False
                    return x * 2
                return x
        """, inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            STATE = {"step": 0}

            @torch.compile
            def fn(x):
                STATE["step"] += 1  # recompile
                return x * 2
        """, inputs="[torch.randn(4), torch.randn(4), torch.randn(4)]"),
    )
    valid = (
        Example("""
            import torch

            SCALE = 2.0

            @torch.compile
            def fn(x):
                return x * SCALE  # read, never changed
        """, inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            CALLS = 0

            @torch.compile
            def fn(x):
                global CALLS
                CALLS = 1  # set, not read first
                return x * 2
        """, inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
    )

    def __init__(self) -> None:
        self.first_reads: dict[str, cst.Name] = {}
        self.stores: set[int] = set()
        self.reported: set[str] = set()
        self.copies: dict[str, str] = {}  # local -> the module-level name it was set from
        self.copied: set[int] = set()  # the reads of those assignments, which read nothing yet
        self.between: dict[str, tuple[str, bool]] | None = None  # the globals the declared steps set (asked once)
        self.keys: dict[str, dict[str, str] | None] | None = None  # the entries they set, by dict (asked once)
        self.keyed: set[int] = set()  # globals read under a literal key, judged by that entry
        self.reported_entries: set[tuple[str, str]] = set()
        self.declared: dict[str, v.Value] | None = None

    def _between_calls(self, ctx) -> dict[str, tuple[str, bool]]:
        if self.between is None:
            self.between = _set_between_calls(ctx)
        return self.between

    def _declared(self, ctx) -> dict[str, v.Value]:
        """The function's `global` names that hold a module-level number (asked once per walk)."""
        if self.declared is None:
            numbers = ctx.module.plain_globals
            self.declared = {name: numbers[name] for name in ctx.memoised(_global_names, ctx.function.node)
                             if numbers.get(name) in _SPECIALISED}
        return self.declared

    def on_Subscript(self, node: cst.Subscript, ctx) -> None:
        """`FLAGS["use_sdpa"]` where a step sets some entries of `FLAGS`: TorchDynamo guards each
        entry read, where it is first read; one the steps do not set is not guarded against them."""
        table = node.value
        index = node.slice[0].slice if len(node.slice) == 1 else None
        key = index.value if isinstance(index, cst.Index) else None
        if not (isinstance(table, cst.Name) and isinstance(key, cst.SimpleString) and isinstance(
                key.evaluated_value, str)) or ctx.local_value(table.value) is not None:
            return
        between = self._between_calls(ctx)
        if table.value not in between or not between[table.value][1]:
            return
        if self.keys is None:
            self.keys = _keys_set_between_calls(ctx)
        keys = self.keys.get(table.value)
        if keys is None:
            return  # which entries the steps set is not known: the dict's first read stands for them
        self.keyed.add(id(table))
        entry = (table.value, key.evaluated_value)
        if entry[1] in keys and entry not in self.reported_entries:
            self.reported_entries.add(entry)
            step = keys[entry[1]]
            ctx.report(self, node, f"`{step}`, a step BREAKSCAN_TARGETS declares between calls, sets the entry "
                                   f"`{table.value}[{key.value}]` of a module-level dict: TorchDynamo guards on its "
                                   "value here, so the call after the step recompiles", severity="warning")

    def on_Global(self, node: cst.Global, ctx) -> None:
        self.stores.update(id(item.name) for item in node.names)  # `global CALLS` reads nothing

    def on_Name(self, node: cst.Name, ctx) -> None:
        if id(node) in self.stores or id(node) in self.keyed:
            return
        if node.value in self._declared(ctx):
            self.first_reads.setdefault(node.value, node)
            return
        if id(node) in self.copied or (node.value not in self.copies and ctx.local_value(node.value) is not None):
            return  # the copy's read, or a local of that name
        name = self.copies.get(node.value, node.value)
        if name in self.reported or name not in (between := self._between_calls(ctx)):
            return
        step, changed = between[name]
        if changed:  # `FLAGS[name] = value` in the step: an entry the code reads
            what = f"changes an entry of the module-level `{name}`"
        elif ctx.module.plain_globals.get(name) in (*_SPECIALISED, v.STR):  # a string's value is guarded too
            what = f"sets the module-level {ctx.module.plain_globals[name].name} `{name}`"
        else:
            return
        self.reported.add(name)
        ctx.report(self, node, f"`{step}`, a step BREAKSCAN_TARGETS declares between calls, {what}: TorchDynamo "
                               "guards on its value here, so the call after the step recompiles", severity="warning")

    def on_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        target = node.target
        if isinstance(target, cst.Subscript) and _counted_entry(node, ctx):
            ctx.report(self, target, f"an entry of the module-level dict `{ctx.code(target.value)}` is read here and "
                                     "counted up by the compiled code: TorchDynamo guards on the entry's value (a "
                                     "number held in a dict is never made dynamic), so every call recompiles, until "
                                     f"the recompile limit ({ctx.dynamo.number('recompile_limit')}), if the entry "
                                     "holds a Python number", severity="warning")
            return
        if isinstance(target, cst.Name) and target.value in self._declared(ctx):
            self.first_reads.setdefault(target.value, target)  # `CALLS += 1` reads it first
            self.stores.add(id(target))
            self._written(target.value, ctx, from_itself=True)

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        value, targets = node.value, [t.target for t in node.targets]
        if isinstance(value, cst.Name) and len(targets) == 1 and isinstance(targets[0], cst.Name) and (
                ctx.local_value(value.value) is None and value.value in self._between_calls(ctx)):
            # `t = TEMPERATURE`: TorchDynamo reads the global lazily, where the local is first used
            self.copies[targets[0].value] = value.value
            self.copied.add(id(value))
            self.stores.add(id(targets[0]))
            return
        declared = self._declared(ctx)
        names = [t.target for t in node.targets if isinstance(t.target, cst.Name) and t.target.value in declared]
        if not names:
            return
        reads = {n.value for n in find_nodes(node.value, (cst.Name,)) if n.value in declared}
        for name in find_nodes(node.value, (cst.Name,)):
            if name.value in declared:
                self.first_reads.setdefault(name.value, name)
        for target in names:
            self.stores.add(id(target))
            self._written(target.value, ctx, from_itself=target.value in reads)

    def _written(self, name: str, ctx, *, from_itself: bool) -> None:
        read = self.first_reads.get(name)
        if read is None or name in self.reported:
            return
        self.reported.add(name)
        kind = self._declared(ctx)[name]
        if kind == v.INT and from_itself:
            ctx.report(self, read)
        else:
            effect = ("a call recompiles whenever the value stored differs from the one read" if kind == v.INT else
                      "the next call recompiles once, and the float is made dynamic after it" if kind == v.FLOAT
                      else "the next call recompiles once (a bool has two values)")
            ctx.report(self, read, f"a module-level {kind.name} is read here and set later by the compiled code "
                                   f"(`global`): TorchDynamo guards on its value, so {effect}", severity="warning")


_SPECIALISED = (v.INT, v.FLOAT, v.BOOL)


def _counted_entry(node: cst.AugAssign, ctx) -> bool:
    """`STATE["step"] += 1`: an entry, under a literal key, of a dict the module binds at its top
    level (no local of that name), counted up by a number."""
    target = node.target
    assert isinstance(target, cst.Subscript)
    return (isinstance(target.value, cst.Name) and target.value.value in ctx.module.assignments
            and ctx.local_value(target.value.value) is None and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)
            and isinstance(target.slice[0].slice.value, (cst.SimpleString, cst.Integer))
            and isinstance(node.value, (cst.Integer, cst.Float)))


def _set_between_calls(ctx) -> dict[str, tuple[str, bool]]:
    """The module-level names that the functions the steps between the declared calls call
    (`lambda m: set_fast_gelu(False)`) declare `global` and set, or whose entries they change
    (`FLAGS[name] = value`, `FLAGS.update(...)`): each with its step, and whether it is an entry."""
    stored: dict[str, tuple[str, bool]] = {}
    for qualified, step in ctx.module.declared_step_functions.items():
        function = ctx.find_function(qualified)
        changed = _dict_changed_by_step(qualified, ctx)
        if changed is not None:
            stored.setdefault(changed, (step, True))  # `lambda m: CONFIG.update(revin=False)`
        if function is None:
            continue
        for name in ctx.memoised(_global_names, function.node):
            stored.setdefault(name, (step, False))
        for name in ctx.memoised(_changed_globals, function.node):
            if name in ctx.module.assignments:
                stored.setdefault(name, (step, True))
    return stored


def _keys_set_between_calls(ctx) -> dict[str, dict[str, str] | None]:
    """For each module-level dict whose entries the steps change, the string keys they set, each
    with the first step setting it (`set_flag("use_sdpa", False)` calling `def set_flag(name,
    value): FLAGS[name] = value`); None where a key is not known (the step gives it by a name,
    an `update(other)`)."""
    keys: dict[str, dict[str, str] | None] = {}
    for qualified in ctx.module.declared_step_functions:
        function = ctx.find_function(qualified)
        changed = _dict_changed_by_step(qualified, ctx)
        if function is None and changed is None:
            continue
        for step, positional, keywords in ctx.module.declared_step_arguments.get(qualified, []):
            entries = ({changed: _keys_given(qualified, positional, keywords)} if changed is not None
                       else _entry_keys(function.node, [(positional, keywords)]) if function is not None else {})
            for name, written in entries.items():
                known = keys.setdefault(name, {})
                if known is None or written is None:
                    keys[name] = None
                else:
                    for key in sorted(written):
                        known.setdefault(key, step)
    return keys


def _dict_changed_by_step(qualified: str, ctx) -> str | None:
    """The module-level name whose entries a step changes by calling one of its dict methods
    itself (`lambda m: CONFIG.update(revin=False)`); None for any other call."""
    owner, _, method = qualified.rpartition(".")
    module, _, name = owner.rpartition(".")
    if module == ctx.module.name and method in _DICT_CHANGES and name in ctx.module.assignments:
        return name
    return None


# The methods that change a dict's entries.
_DICT_CHANGES = frozenset({"update", "__setitem__", "setdefault", "pop", "popitem", "clear", "__delitem__"})


def _keys_given(qualified: str, positional: dict[int, object], keywords: dict[str, object]) -> frozenset[str] | None:
    """The keys a dict method a step calls sets, as its literal arguments give them (`update(revin=
    False)`, `update({"revin": False})`, `__setitem__("revin", False)`); None when not known."""
    method = qualified.rpartition(".")[2]
    if method == "update" and set(positional) <= {0} and isinstance(positional.get(0, {}), dict):
        return frozenset(str(key) for key in (*dict(positional.get(0, {})), *keywords))
    if method in ("__setitem__", "setdefault") and isinstance(positional.get(0), str):
        return frozenset({str(positional[0])})
    return None


def _entry_keys(function: cst.FunctionDef, calls: list[tuple[dict[int, object], dict[str, object]]]
                ) -> dict[str, frozenset[str] | None]:
    """The keys a function stores under in dicts it does not bind (`TABLE[key] = value`), its
    parameters read as the calls give them; None for a dict given a key not known here."""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    found: dict[str, frozenset[str] | None] = {}
    for name in _changed_globals(function):
        found[name] = frozenset()
    for node in find_nodes(function.body, (cst.AssignTarget, cst.AugAssign, cst.Del, cst.Call), prune=(cst.FunctionDef,)):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in found:
                found[func.value.value] = None  # `FLAGS.update(...)`, `FLAGS.pop(k)`: any key
            continue
        target = node.target
        if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value in found):
            continue
        name = target.value.value
        index = target.slice[0].slice if len(target.slice) == 1 else None
        key = index.value if isinstance(index, cst.Index) else None
        given: list[object] = []
        if isinstance(key, cst.SimpleString):
            given = [key.evaluated_value]
        elif isinstance(key, cst.Name) and key.value in params and calls:
            position = params.index(key.value)
            given = [keywords.get(key.value, positional.get(position)) for positional, keywords in calls]
        known = found[name]
        if known is None or not given or not all(isinstance(g, str) for g in given):
            found[name] = None
        else:
            found[name] = known | frozenset(str(g) for g in given)
    return found


def _changed_globals(function: cst.FunctionDef) -> frozenset[str]:
    """Names, not bound in the function, whose entries it changes: `TABLE[key] = value`,
    `TABLE[key] += 1`, `TABLE.update(...)`, `del TABLE[key]`."""
    bound = {name.value for target in find_nodes(function, (cst.Param, cst.AssignTarget, cst.For), prune=(cst.Lambda,))
             for name in find_nodes(target.name if isinstance(target, cst.Param) else target.target, (cst.Name,),
                                    prune=(cst.Subscript, cst.Attribute))}
    changed: set[str] = set()
    for node in find_nodes(function.body, (cst.AssignTarget, cst.AugAssign, cst.Del, cst.Call), prune=(cst.FunctionDef,)):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                    func.attr.value in v.CONTAINER_ADDING_METHODS | v.CONTAINER_REMOVING_METHODS):
                changed.add(func.value.value)
            continue
        target = node.target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            changed.add(target.value.value)
    return frozenset(changed - bound)


def _global_names(function: cst.FunctionDef) -> frozenset[str]:
    return frozenset(item.name.value for statement in find_nodes(function.body, (cst.Global,), prune=(cst.FunctionDef,))
                     for item in statement.names)
