"""Frozen dataclasses to JSON-ready data and back, driven by their type hints.

The pipeline run (``qa.pipeline.flow.run``) is stored as JSON in the database and
read back in another process. Writing a reader and a writer by hand for every
stage value would let the two drift apart; this module derives both from the
field annotations, so a new stage result is a new dataclass and one new field.

Supported annotations: nested frozen dataclasses, ``X | None``, ``tuple[X, ...]``,
``dict[str, X]``, ``Literal[...]`` and the JSON scalars. Reading fills a field
missing from the data with its default (older runs of the same version), and
ignores keys it does not know (runs written by newer code).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")


def to_data(value: Any) -> Any:
    """JSON-ready data: dataclasses become dicts, tuples lists, numpy scalars plain numbers."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_data(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_data(item) for key, item in value.items()}
    if isinstance(value, bool | str | int) or value is None:
        return value
    if hasattr(value, "item"):  # numpy scalars: json cannot write float32
        return value.item()
    return float(value)


def from_data(cls: type[T], data: Any) -> T:
    """The ``cls`` value that ``to_data`` wrote as ``data``."""
    return _read(cls, data)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _read(hint: Any, data: Any) -> Any:
    if hint is Any:
        return data
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if data is None:
            return None
        return _read(options[0], data) if len(options) == 1 else data
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_read(args[0], item) for item in data)
        return tuple(_read(arg, item) for arg, item in zip(args, data, strict=True))
    if origin is dict:
        _, value_hint = typing.get_args(hint)
        return {key: _read(value_hint, item) for key, item in data.items()}
    if origin is typing.Literal:
        return data
    if dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        known = {f.name for f in dataclasses.fields(hint) if f.init}
        return hint(**{name: _read(hints[name], data[name]) for name in known if name in data})
    if hint is float and isinstance(data, int):
        return float(data)
    return data
