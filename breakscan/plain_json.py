"""Plain-data dataclasses to JSON-able values and back, guided by their type hints.

The lint cache stores results this way rather than with pickle: a cache folder sits in the
scanned project, and unpickling a planted file would run code, which `--static` promises never to do.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing


def to_plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(to_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot store a {type(value).__name__} as JSON")


def from_plain(hint, data):
    """`data` as the type `hint` describes; raises TypeError/ValueError/KeyError on a mismatch."""
    if dataclasses.is_dataclass(hint):
        if not isinstance(data, dict):
            raise TypeError(f"expected an object for {hint.__name__}")
        fields = _field_hints(hint)
        return hint(**{name: from_plain(fields[name], item) for name, item in data.items()})
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if data is None:
            return None
        return from_plain(next(arg for arg in args if arg is not type(None)), data)
    if origin in (list, tuple, set, frozenset):
        return origin(from_plain(args[0], item) for item in data)
    if origin is dict:
        return {key: from_plain(args[1], item) for key, item in data.items()}
    if hint in (str, int, float, bool) and not isinstance(data, hint):
        raise TypeError(f"expected {hint.__name__}, got {type(data).__name__}")
    return data  # str, int, bool, Literal[...]


@functools.cache
def _field_hints(cls) -> dict[str, object]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}
