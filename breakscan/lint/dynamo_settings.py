"""How the code is compiled: the TorchDynamo settings a compiled region runs under.

Read from the source without running it: `torch._dynamo.config.NAME = VALUE` and set mutations
(`torch._dynamo.config.reorderable_logging_functions.add(print)`, `.update({...})`, `|=`) anywhere
in the root's module or the module holding the code, `@torch._dynamo.config.patch(NAME=VALUE)` on
a compiled function, `torch.compile(..., fullgraph=True)`, and `[tool.breakscan.dynamo]` in config
for settings the project makes at run time elsewhere. Rules ask `ctx.dynamo`; a rule whose
construct a setting captures (`Rule.captured_by`) is silenced centrally when the setting is on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONFIG_PREFIX = "torch._dynamo.config."
# Defaults in TorchDynamo 2.13 for the boolean settings rules depend on.
_DEFAULTS = {
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "trace_numpy": True,
    "allow_rnn": False,
    "automatic_dynamic_shapes": True,
}
# Defaults of the number settings rules quote; `cache_size_limit` is the older name of `recompile_limit`.
_NUMBER_DEFAULTS = {"recompile_limit": 8}
_NUMBER_ALIASES = {"cache_size_limit": "recompile_limit"}
# `fullgraph=True` captures scalar outputs and dynamic output shapes for that compile (2.13).
_FULLGRAPH_CAPTURES = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})
# Set-valued settings that hold functions; `ignore_logger_methods` is an alias in 2.13.
_FUNCTION_SETS = {
    "reorderable_logging_functions": "reorderable_logging_functions",
    "ignore_logging_functions": "ignore_logging_functions",
    "ignore_logger_methods": "ignore_logging_functions",
}


def set_name(name: str) -> str | None:
    """The function-set setting a config attribute names, after aliases; None for others."""
    return _FUNCTION_SETS.get(name)


@dataclass(frozen=True)
class DynamoSettings:
    # Boolean settings given a value (`True`/`False` as written), by name.
    values: frozenset[tuple[str, bool]] = frozenset()
    # Function-set settings: (setting, qualified function name) pairs added.
    functions: frozenset[tuple[str, str]] = frozenset()
    fullgraph: bool = False
    # Int settings given a value (`recompile_limit = 64`), by name.
    numbers: frozenset[tuple[str, int]] = frozenset()

    def number(self, name: str) -> int:
        return dict(self.numbers).get(name, _NUMBER_DEFAULTS.get(name, 0))

    def enabled(self, name: str) -> bool:
        if self.fullgraph and name in _FULLGRAPH_CAPTURES:
            return True
        given = dict(self.values)
        return given.get(name, _DEFAULTS.get(name, False))

    def holds(self, setting: str, function: str | None) -> bool:
        """Whether `function` (a qualified name) was added to the function-set `setting`."""
        return function is not None and (setting, function) in self.functions

    def merged(self, other: "DynamoSettings") -> "DynamoSettings":
        """Both sources together; `other`'s boolean values win where both give one."""
        names = {name for name, _ in other.values}
        values = frozenset(item for item in self.values if item[0] not in names) | other.values
        given = {name for name, _ in other.numbers}
        numbers = frozenset(item for item in self.numbers if item[0] not in given) | other.numbers
        return DynamoSettings(values, self.functions | other.functions, self.fullgraph or other.fullgraph, numbers)

    def common(self, other: "DynamoSettings") -> "DynamoSettings":
        """What holds under both (code reached from two compiled roots runs under each)."""
        return DynamoSettings(self.values & other.values, self.functions & other.functions,
                              self.fullgraph and other.fullgraph, self.numbers & other.numbers)


# The defaults: nothing set.
NO_SETTINGS = DynamoSettings()


@dataclass
class SettingsBuilder:
    """Collects settings while a module is indexed."""

    values: dict[str, bool] = field(default_factory=dict)
    functions: set[tuple[str, str]] = field(default_factory=set)
    numbers: dict[str, int] = field(default_factory=dict)

    def assign(self, name: str, value: str) -> None:
        if value in ("True", "False"):
            self.values[name] = value == "True"
        elif value.isdigit() and _NUMBER_ALIASES.get(name, name) in _NUMBER_DEFAULTS:
            self.numbers[_NUMBER_ALIASES.get(name, name)] = int(value)

    def add(self, name: str, qualified: str | None) -> None:
        setting = set_name(name)
        if setting is not None and qualified:
            self.functions.add((setting, qualified))

    def build(self, fullgraph: bool = False) -> DynamoSettings:
        return DynamoSettings(frozenset(self.values.items()), frozenset(self.functions), fullgraph,
                              frozenset(self.numbers.items()))


def from_config_table(table: dict) -> DynamoSettings:
    """`[tool.breakscan.dynamo]`: booleans by name, and lists of qualified function names."""
    builder = SettingsBuilder()
    for name, value in table.items():
        if isinstance(value, bool):
            builder.assign(name, str(value))
        elif isinstance(value, list):
            for function in value:
                builder.add(name, str(function))
    return builder.build()
