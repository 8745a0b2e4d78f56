"""`[tool.breakscan]` from pyproject.toml or breakscan.toml, merged under command-line options."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

from breakscan.lint.dynamo_settings import NO_SETTINGS, DynamoSettings, from_config_table
from breakscan.model import FailOn
from breakscan.selectors import selector_problem


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unreachable: bool = False
    # Import roots besides the project's own (as `sys.path` entries), relative to the config's folder.
    src: tuple[str, ...] = ()
    # Installed packages whose code compiled calls are followed into (`--follow` follows every one).
    follow: tuple[str, ...] = ()
    # `[tool.breakscan.dynamo]`: TorchDynamo settings the project makes at run time, outside the
    # scanned code (`capture_scalar_outputs = true`, `reorderable_logging_functions = ["builtins.print"]`).
    dynamo: DynamoSettings = NO_SETTINGS
    # Which findings give exit code 1: "warning" (any finding) or "error" (only certain breaks).
    fail_on: FailOn = "warning"
    path: str | None = None  # where it was read from
    # Where relative `exclude` and `per-file-ignores` patterns are anchored.
    base: str = "."

    def ignored_for(self, path: str) -> tuple[str, ...]:
        import fnmatch

        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.base)).replace(os.sep, "/")
        codes: list[str] = []
        for pattern, ids in self.per_file_ignores.items():
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
                codes.extend(ids)
        return tuple(codes)

    @property
    def src_roots(self) -> tuple[str, ...]:
        return tuple(os.path.join(os.path.abspath(self.base), root) for root in self.src)


_KEYS = {"select", "ignore", "exclude", "roots", "per-file-ignores", "extend-select", "extend-ignore", "unreachable",
         "src", "follow", "dynamo", "fail-on"}


def find_config(start: str) -> str | None:
    """The nearest breakscan.toml, or pyproject.toml with a [tool.breakscan] table, at or above `start`."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        for name in ("breakscan.toml", "pyproject.toml"):
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate) and (name == "breakscan.toml" or _may_have_table(candidate)):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _may_have_table(path: str) -> bool:
    """A pyproject.toml that does not parse may hold the [tool.breakscan] table: it is found, so
    that loading it reports the error instead of silently dropping its settings."""
    try:
        with open(path, "rb") as handle:
            return "breakscan" in tomllib.load(handle).get("tool", {})
    except OSError:
        return False
    except tomllib.TOMLDecodeError:
        return True


def _toml_problem(path: str, error: tomllib.TOMLDecodeError) -> str:
    """`FILE:LINE:COLUMN: invalid TOML: PROBLEM`, from tomllib's "PROBLEM (at line L, column C)"."""
    message = str(error)
    at = re.search(r" \(at line (\d+), column (\d+)\)$", message)
    if at:
        return f"{path}:{at.group(1)}:{at.group(2)}: invalid TOML: {message[:at.start()]}"
    return f"{path}: invalid TOML: {message.replace(' (at end of document)', ' at the end of the file')}"


def load_config(path: str) -> Config:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(_toml_problem(path, error)) from None
    table = data.get("tool", {}).get("breakscan", {})
    if os.path.basename(path) != "pyproject.toml" and not table:
        # breakscan.toml, or any other file given with --config (`ci.toml`): its top-level keys.
        table = {k: v for k, v in data.items() if k != "tool"}
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.breakscan] keys: {', '.join(sorted(unknown))}")

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: `{key}` must be a list of strings")
        return tuple(value)

    unreachable = table.get("unreachable", "ignore")
    if unreachable not in ("ignore", "info"):
        raise ConfigError(f'{path}: `unreachable` must be "ignore" or "info"')
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: `per-file-ignores` must be a table of pattern = [rule ids]")
    per_file_ignores = {}
    for pattern, ids in per_file.items():
        ids = [ids] if isinstance(ids, str) else ids
        if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
            raise ConfigError(f"{path}: per-file-ignores `{pattern}` must be a list of rule ids")
        per_file_ignores[pattern] = tuple(ids)
    selections = {f"`{key}`": strings(key) for key in ("select", "extend-select", "ignore", "extend-ignore")}
    selections.update({f"per-file-ignores `{pattern}`": ids for pattern, ids in per_file_ignores.items()})
    for where, selectors in selections.items():
        problem = selector_problem(selectors)
        if problem:
            raise ConfigError(f"{path}: {where}: {problem}")
    dynamo = table.get("dynamo", {})
    if not isinstance(dynamo, dict) or not all(
            isinstance(value, bool) or (isinstance(value, list) and all(isinstance(f, str) for f in value))
            for value in dynamo.values()):
        raise ConfigError(f"{path}: `dynamo` must be a table of setting = true/false or [qualified function names]")
    fail_on = table.get("fail-on", "warning")
    if fail_on not in ("error", "warning"):
        raise ConfigError(f'{path}: `fail-on` must be "error" or "warning"')
    select = strings("select")
    return Config(
        # No `select` means every rule, which `extend-select` cannot add to; with one, it adds.
        select=select + strings("extend-select") if select else (),
        ignore=strings("ignore") + strings("extend-ignore"),
        exclude=strings("exclude"),
        roots=strings("roots"),
        per_file_ignores=per_file_ignores,
        unreachable=unreachable == "info",
        src=strings("src"),
        follow=strings("follow"),
        dynamo=from_config_table(dynamo),
        fail_on=fail_on,
        path=path,
        base=os.path.dirname(os.path.abspath(path)),
    )
