"""JSON and Python text for values of any size the SDK accepts: big integers, deep nesting.

CPython refuses to convert integers of more than 4300 decimal digits to or from text
(``sys.set_int_max_str_digits``: the conversion is quadratic), so a trusted spec whose
expected value is ``factorial(2000)`` (5736 digits) failed in ``json.dumps``, ``repr`` and
``ast.parse``. Inside :func:`big_ints` the limit is :data:`INT_DIGITS` instead (reading
such an integer took 0.09 s here, writing it 0.26 s); sandboxes run Python with the same
limit (``PYTHONINTMAXSTRDIGITS``), so what a program returns round-trips.

The limit is process-wide, so :func:`big_ints` only ever raises it (never lowers a limit
the caller chose), counts its users and puts the caller's value back when the last one
leaves; other threads see the raised limit meanwhile, which only lets them convert more.

Nesting: :data:`MAX_DEPTH` bounds the values of a spec (pydantic's serialiser, which hashes
specs, stops at 254 levels); a deeper spec is refused with a clear error
(:func:`check_depth`) instead of failing inside the pipeline.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

#: Decimal digits of the largest integer converted to or from text (0 would be unlimited).
INT_DIGITS = 100_000
#: Nesting of the deepest value in a spec, in lists, dicts and models (pydantic serialises
#: 254 levels; the spec's own models take a few).
MAX_DEPTH = 200


class _Lift:
    """Who holds the raised limit now, and what to put back."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.saved = 0


_lift = _Lift()


@contextlib.contextmanager
def big_ints() -> Iterator[None]:
    """Inside, integers up to :data:`INT_DIGITS` digits convert to and from text."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:  # pragma: no cover - Pythons without the limit
        yield
        return
    with _lift.lock:
        if _lift.users == 0:
            _lift.saved = get()
            if 0 < _lift.saved < INT_DIGITS:
                sys.set_int_max_str_digits(INT_DIGITS)
        _lift.users += 1
    try:
        yield
    finally:
        with _lift.lock:
            _lift.users -= 1
            if _lift.users == 0 and get() != _lift.saved:
                sys.set_int_max_str_digits(_lift.saved)


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply lists, tuples, dicts and models nest in ``value`` (up to ``limit + 1``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, BaseModel):
            children: Any = item.__dict__.values()
        elif isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        if level > limit:
            return deepest
        stack.extend((child, level) for child in children)
    return deepest


def check_depth(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """Why ``value`` is too deep to read or write, or None."""
    if depth(value, limit) > limit:
        return f"nested more than {limit} levels deep"
    return None


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` with big integers (see :func:`big_ints`)."""
    with big_ints():
        return json.dumps(value, **options)


def loads(text: str | bytes, **options: Any) -> Any:
    """``json.loads`` with big integers (see :func:`big_ints`)."""
    with big_ints():
        return json.loads(text, **options)
