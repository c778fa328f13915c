"""Output checkers, run in the trusted parent process on serialised data.

Two families:

* text (stdout) comparison: :func:`outputs_match` with the modes of
  :class:`~verifiers.specs.CompareOptions`;
* value comparison: :func:`decode_value` turns the tagged JSON written by a
  sandboxed harness back into Python data, and :func:`values_equal` compares it
  with an expected value. Nothing the program returns is trusted to compare
  itself: an object whose ``__eq__`` always returns True is just an opaque
  ``$object`` here and equals nothing.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass
from typing import Any

from verifiers.specs import CompareOptions

_WS = re.compile(r"\s+")


def normalise_lines(text: str) -> list[str]:
    """Lines with trailing whitespace removed and trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _tokens_match(expected: list[str], actual: list[str], opts: CompareOptions) -> bool:
    if len(expected) != len(actual):
        return False
    if not opts.has_tolerance:
        return expected == actual
    for e, a in zip(expected, actual, strict=True):
        if e == a:
            continue
        try:
            ev, av = float(e), float(a)
        except ValueError:
            return False
        if not numbers_close(ev, av, opts):
            return False
    return True


def numbers_close(expected: float, actual: float, opts: CompareOptions) -> bool:
    """Numeric equality with the tolerances of ``opts`` (NaN equals NaN)."""
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    return math.isclose(
        expected, actual, rel_tol=opts.float_rel_tol or 0.0, abs_tol=opts.float_abs_tol or 0.0
    )


def outputs_match(expected: str, actual: str, opts: CompareOptions | None = None) -> bool:
    """Whether program output ``actual`` is accepted for ``expected``.

    Modes: ``exact`` compares the strings; ``lines`` compares
    :func:`normalise_lines` of both; ``tokens`` (or any float tolerance)
    compares whitespace-separated tokens, numerically where a tolerance is set;
    ``unordered_lines`` and ``unordered_tokens`` compare them as multisets; ``yes_no``
    compares tokens with ``yes`` and ``no`` in any case.
    """
    opts = opts or CompareOptions()
    if not opts.case_sensitive:
        expected, actual = expected.casefold(), actual.casefold()
    if opts.mode == "exact" and not opts.has_tolerance:
        return expected == actual
    if opts.mode == "unordered_lines":
        return sorted(normalise_lines(expected)) == sorted(normalise_lines(actual))
    if opts.mode == "unordered_tokens":
        return sorted(expected.split()) == sorted(actual.split())
    if opts.mode == "yes_no":
        return _tokens_match(_yes_no(expected.split()), _yes_no(actual.split()), opts)
    if opts.mode == "tokens" or opts.has_tolerance:
        return _tokens_match(expected.split(), actual.split(), opts)
    return normalise_lines(expected) == normalise_lines(actual)


def _yes_no(tokens: list[str]) -> list[str]:
    """Tokens with ``yes`` and ``no`` in any case written one way (Codeforces' convention)."""
    return [t.lower() if t.lower() in ("yes", "no") else t for t in tokens]


# --- values -------------------------------------------------------------------------------


class Opaque:
    """A value the harness could not serialise as plain data (a custom object).

    It is never equal to anything, including another ``Opaque``.
    """

    __slots__ = ("repr", "type_name")

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = type_name
        self.repr = text

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.repr}>"


class DecodeError(ValueError):
    """The serialised value is malformed (the harness channel was tampered with)."""


#: Deepest nesting of a value the host decodes or compares (deeper is malformed).
MAX_DEPTH = 200


def decode_value(data: Any, depth: int = 0) -> Any:
    """Rebuild a value from the tagged JSON the sandboxed harness writes.

    Tags: ``$tuple``, ``$set``, ``$frozenset``, ``$dict`` (a list of pairs),
    ``$bytes`` (base64), ``$float`` (``nan``/``inf``/``-inf``), ``$complex``,
    ``$int`` (hexadecimal string; no digit limit), ``$object`` (opaque, with type name and repr).

    Raises:
        DecodeError: The data is malformed, whatever went wrong: the data comes from the
            sandbox, so no error of its making may escape as another kind of exception
            (which the SDK would take for its own fault).
    """
    try:
        return _decode(data, depth)
    except DecodeError:
        raise
    except Exception as err:  # TypeError, OverflowError, RecursionError, MemoryError...
        raise DecodeError(f"malformed value: {type(err).__name__}: {err}"[:300]) from None


def _decode(data: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise DecodeError("value nested too deeply")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [_decode(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise DecodeError(f"unexpected value {data!r:.80}")
    tag = next(iter(data))
    body = data[tag]
    if tag == "$tuple" and isinstance(body, list):
        return tuple(_decode(v, depth + 1) for v in body)
    if tag in ("$set", "$frozenset") and isinstance(body, list):
        items = check_spread([_freeze(_decode(v, depth + 1)) for v in body])
        return frozenset(items) if tag == "$frozenset" else set(items)
    if tag == "$dict" and isinstance(body, list):
        pairs = []
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise DecodeError("malformed $dict entry")
            pairs.append((_freeze(_decode(pair[0], depth + 1)), _decode(pair[1], depth + 1)))
        check_spread([key for key, _ in pairs])
        return dict(pairs)
    if tag == "$bytes" and isinstance(body, str):
        return base64.b64decode(body.encode("ascii"), validate=True)
    if tag == "$float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$complex" and isinstance(body, list) and len(body) == 2:
        real, imag = (_decode(part, depth + 1) for part in body)
        if not (_is_number(real) and _is_number(imag)):
            raise DecodeError("malformed $complex")
        return complex(real, imag)
    if tag == "$int" and isinstance(body, str):
        return int(body, 16)
    if tag == "$object" and isinstance(body, str):
        return Opaque(body, str(data.get("repr", ""))[:500])
    raise DecodeError(f"unknown tag {tag!r}")


#: Sets and dicts of more items than this are checked for items that share their hashes.
_SPREAD_MIN = 64
#: Distinct values one hash may have before more of them count as colliding: a chain this
#: long costs nothing, and honest values that collide come in small groups (in CPython
#: ``hash(-1) == hash(-2)``, so ``(x, -1)`` and ``(x, -2)`` collide for every ``x``).
_SPREAD_CHAIN = 8


def check_spread(items: list[Any]) -> list[Any]:
    """``items``, refused when many distinct ones share a hash (quadratic time to hash).

    Python's hash of an integer is the integer modulo 2**61 - 1, so a program can return a
    set of thousands of integers that all hash alike, and the host's set (or dict, or
    counter) of them would take seconds to build on its event loop. What costs is a long
    chain of *distinct* values under one hash: equal items are free (a query's rows repeat
    freely), and so are the first :data:`_SPREAD_CHAIN` distinct values of a hash. Past
    that, each new distinct value counts as colliding. The check is linear: one ``hash``
    per item and at most ``_SPREAD_CHAIN`` comparisons (the table is keyed by the hash
    value itself, an integer).

    Raises:
        DecodeError: More than :data:`_SPREAD_MIN` items collide so.
    """
    if len(items) > _SPREAD_MIN:
        chains: dict[int, list[Any]] = {}
        colliding = 0
        try:
            for item in items:
                chain = chains.setdefault(hash(item), [])
                if any(seen is item or seen == item for seen in chain):
                    continue
                if len(chain) < _SPREAD_CHAIN:
                    chain.append(item)
                else:
                    colliding += 1
        except TypeError as err:
            raise DecodeError(f"an unhashable item: {err}"[:300]) from None
        if colliding > _SPREAD_MIN:
            raise DecodeError(
                f"{len(items)} items of which {colliding + _SPREAD_CHAIN} or more distinct "
                "ones share one hash"
            )
    return items


def _freeze(value: Any) -> Any:
    """A hashable form of a decoded value (lists become tuples) for set members and keys."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return frozenset((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, set):
        return frozenset(value)
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, complex)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


class _Nan:
    """The canonical NaN: one object, so that NaN equals NaN in a canonical form."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "nan"


_NAN = _Nan()


@dataclass(frozen=True)
class _Mapping:
    """A dict in canonical form: its (key, value) pairs, never equal to a set of pairs."""

    items: frozenset[Any]


def canonical(value: Any, casefold: bool = False, depth: int = 0) -> Any:
    """A hashable form of a decoded value, for counting values as a multiset.

    Two values have equal forms when :func:`values_equal` (without tolerances) calls them
    equal: lists and tuples become tuples, dicts their (key as JSON writes it, value)
    pairs, sets frozensets, every NaN one marker, strings casefolded when ``casefold``.
    Total on any decoded value: a value nested deeper than ``MAX_DEPTH`` becomes an
    :class:`Opaque`, which equals nothing.
    """
    if depth > MAX_DEPTH:
        return Opaque("value", "nested too deeply")
    if isinstance(value, float) and math.isnan(value):
        return _NAN
    if isinstance(value, str):
        return value.casefold() if casefold else value
    if isinstance(value, list | tuple):
        return tuple(canonical(v, casefold, depth + 1) for v in value)
    if isinstance(value, dict):
        return _Mapping(
            frozenset(
                (canonical(_json_key(k), casefold, depth + 1), canonical(v, casefold, depth + 1))
                for k, v in value.items()
            )
        )
    if isinstance(value, set | frozenset):
        return frozenset(canonical(v, casefold, depth + 1) for v in value)
    try:
        hash(value)
    except TypeError:  # not a decoded value (those are all hashable): equal to nothing
        return Opaque(type(value).__name__, "unhashable")
    return value


def _json_key(key: Any) -> Any:
    """The key a JSON encoder would write for ``key`` (expected data comes from JSON)."""
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int) and key.bit_length() > _KEY_BITS:
        # No decimal text: writing it costs time quadratic in its digits (a returned dict
        # keyed by 100,000-digit integers took seconds of the host's time per key). Equal
        # only to the same integer key.
        return ("$int", key)
    if isinstance(key, int | float):
        try:
            return str(key)
        except ValueError:  # an integer past Python's decimal limit: no JSON key is equal
            return key
    return key


#: Integers as dict keys up to this many bits (about 4,200 digits) compare as JSON text.
_KEY_BITS = 14_000


def values_equal(expected: Any, actual: Any, opts: CompareOptions | None = None) -> bool:
    """Compare an expected value with a decoded actual value.

    Python's equality on plain data, with three adjustments for expected values
    that come from JSON: a tuple equals a list with the same items, dict keys
    are compared as JSON would write them (integer keys past about 4,200 digits as
    numbers), and numbers may use the tolerances of ``opts``; without tolerances they
    compare exactly, an integer with a float as Python does (never rounded to a float
    first). NaN equals NaN. :class:`Opaque` values equal nothing.
    """
    opts = opts or CompareOptions()
    return _eq(expected, actual, opts, 0)


def _eq(e: Any, a: Any, opts: CompareOptions, depth: int) -> bool:
    if depth > 200 or isinstance(a, Opaque) or isinstance(e, Opaque):
        return False
    if _is_number(e) and _is_number(a):
        # bool is an int, so True == 1 as in Python: reference checkers used ==.
        if isinstance(e, int) and isinstance(a, int):
            return bool(e == a)
        if not opts.has_tolerance and not (_is_nan(e) or _is_nan(a)):
            # Exact, as Python compares an int with a float: converting the integer to a
            # float first made 2**53 + 1 equal 2.0**53 (a float answer to an exact count).
            return bool(e == a)
        try:
            return numbers_close(float(e), float(a), opts)
        except OverflowError:  # an integer beyond every float is close to no float
            return False
    if isinstance(e, str) and isinstance(a, str):
        return e == a if opts.case_sensitive else e.casefold() == a.casefold()
    if isinstance(e, list | tuple) and isinstance(a, list | tuple):
        return len(e) == len(a) and all(
            _eq(x, y, opts, depth + 1) for x, y in zip(e, a, strict=True)
        )
    if isinstance(e, dict) and isinstance(a, dict):
        if len(e) != len(a):
            return False
        a_by_key = {_json_key(k): v for k, v in a.items()}
        e_by_key = {_json_key(k): v for k, v in e.items()}
        if a_by_key.keys() != e_by_key.keys():
            return False
        return all(_eq(e_by_key[k], a_by_key[k], opts, depth + 1) for k in e_by_key)
    if isinstance(e, set | frozenset) and isinstance(a, set | frozenset):
        return bool(_freeze(e) == _freeze(a))
    if isinstance(e, complex) or isinstance(a, complex):
        return (
            isinstance(e, complex | int | float)
            and isinstance(a, complex | int | float)
            and (e == a)
        )
    if type(e) is not type(a) and not (e is None or a is None):
        return False
    return bool(e == a)


def describe_value(value: Any, limit: int = 300) -> str:
    """A short repr of a decoded value for feedback; total (any value gets a description).

    Integers too long to print in decimal (Python refuses more than 4300 digits) are shown
    by their size, and a value nested too deeply to print is said to be so.
    """
    try:
        text = repr(_printable(value, 0))
    except (ValueError, RecursionError, MemoryError):
        text = f"<a {type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Shown:
    """A stand-in that prints as given (a huge integer's description)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _printable(value: Any, depth: int) -> Any:
    """``value`` with its huge integers replaced by a description (for ``repr``)."""
    if depth > 200:
        return _Shown("…")
    if type(value) is int:
        if value.bit_length() > 14_000:  # about 4200 decimal digits
            digits = int(value.bit_length() * 0.30103) + 1
            return _Shown(f"<an integer of about {digits} digits>")
        return value
    if type(value) is list:
        return [_printable(v, depth + 1) for v in value[:1000]]
    if type(value) is tuple:
        return tuple(_printable(v, depth + 1) for v in value[:1000])
    if type(value) is dict:
        return {_shown_key(k): _printable(v, depth + 1) for k, v in list(value.items())[:1000]}
    if isinstance(value, set | frozenset):
        return [_printable(v, depth + 1) for v in list(value)[:1000]]
    return value


def _shown_key(key: Any) -> Any:
    shown = _printable(key, 199)
    return repr(shown) if isinstance(shown, _Shown) else shown
