"""Input strategies for differential testing: from a signature's type hints, or from examples.

Values are plain Python data (numbers, strings, lists, tuples, dicts, sets, None) so that
they can be written into a test as a Python literal (:func:`python_literal`) and read back
in the sandbox exactly.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from verifiers.errors import SpecError

#: Default sizes of generated values: small values find off-by-one errors and keep a slow
#: reference fast. Pass your own strategy to differential() for anything else.
INT_BOUND = 1000
MAX_ITEMS = 8
MAX_TEXT = 16

_CALLABLE = re.compile(r"^[A-Za-z_]\w*(\(\))?(\.[A-Za-z_]\w*)*$")


def check_callable(fn_name: str, field: str = "fn_name") -> None:
    """Accept ``f``, ``Solution().two_sum`` or ``module.f`` (the call is built from it).

    Raises:
        SpecError: Anything else (it would be pasted into test code).
    """
    if not isinstance(fn_name, str) or not _CALLABLE.match(fn_name):
        raise SpecError(
            field, f"expected a function name such as 'f' or 'Solution().f', got {fn_name!r}"
        )


def python_literal(value: Any, field: str = "inputs", depth: int = 0) -> str:
    """Python source that evaluates to ``value`` (floats exactly, NaN and infinities included).

    Raises:
        SpecError: The value is not plain data (the message names ``field``).
    """
    if depth > 50:
        raise SpecError(field, "value nested more than 50 levels deep")
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, complex):
        return f"complex({python_literal(value.real)}, {python_literal(value.imag)})"
    inner = [python_literal(v, field, depth + 1) for v in _items(value)]
    if isinstance(value, list):
        return "[" + ", ".join(inner) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if isinstance(value, (set, frozenset)):
        body = "{" + ", ".join(sorted(inner)) + "}" if inner else "set()"
        return f"frozenset({body})" if isinstance(value, frozenset) else body
    if isinstance(value, dict):
        pairs = [
            f"{python_literal(k, field, depth + 1)}: {python_literal(v, field, depth + 1)}"
            for k, v in value.items()
        ]
        return "{" + ", ".join(pairs) + "}"
    raise SpecError(field, f"cannot write a {type(value).__name__} value as a Python literal")


def _items(value: Any) -> Sequence[Any]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return []


# --- from type hints ----------------------------------------------------------------------

_SEQUENCES = {"list", "List", "Sequence", "Iterable", "Collection", "MutableSequence"}
_SETS = {"set", "Set", "frozenset", "FrozenSet", "AbstractSet"}
_MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}


def _hint_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr  # typing.List -> List
    return ""


def strategy_for_hint(node: ast.expr, where: str) -> st.SearchStrategy[Any]:
    """A strategy for one annotation (an AST expression, as written in the source).

    Raises:
        SpecError: The hint is not one of the plain data types (``where`` names it).
    """
    if isinstance(node, ast.Constant):
        if node.value is None:
            return st.none()
        if isinstance(node.value, str):  # a string annotation: "list[int]"
            try:
                return strategy_for_hint(ast.parse(node.value, mode="eval").body, where)
            except SyntaxError:
                pass
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return strategy_for_hint(node.left, where) | strategy_for_hint(node.right, where)
    name = _hint_name(node)
    simple: dict[str, st.SearchStrategy[Any]] = {
        "int": st.integers(-INT_BOUND, INT_BOUND),
        "float": st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        "str": st.text(max_size=MAX_TEXT),
        "bool": st.booleans(),
        "bytes": st.binary(max_size=MAX_TEXT),
        "None": st.none(),
        "NoneType": st.none(),
    }
    if name in simple:
        return simple[name]
    if name in ("List", "list", "Tuple", "tuple") and not isinstance(node, ast.Subscript):
        element = st.integers(-INT_BOUND, INT_BOUND)
        out = st.lists(element, max_size=MAX_ITEMS)
        return out if name.lower() == "list" else out.map(tuple)
    if not isinstance(node, ast.Subscript):
        raise SpecError(where, f"cannot generate values for the type hint {ast.unparse(node)!r}")
    base = _hint_name(node.value)
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if base in _SEQUENCES and len(args) == 1:
        return st.lists(strategy_for_hint(args[0], where), max_size=MAX_ITEMS)
    if base in _SETS and len(args) == 1:
        items = st.sets(strategy_for_hint(args[0], where), max_size=MAX_ITEMS)
        return items.map(frozenset) if base.lower() == "frozenset" else items
    if base in ("Tuple", "tuple"):
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
            return st.lists(strategy_for_hint(args[0], where), max_size=MAX_ITEMS).map(tuple)
        return st.tuples(*(strategy_for_hint(a, where) for a in args))
    if base in _MAPPINGS and len(args) == 2:
        return st.dictionaries(
            strategy_for_hint(args[0], where), strategy_for_hint(args[1], where), max_size=5
        )
    if base == "Optional" and len(args) == 1:
        return st.none() | strategy_for_hint(args[0], where)
    if base == "Union":
        return st.one_of(*(strategy_for_hint(a, where) for a in args))
    raise SpecError(where, f"cannot generate values for the type hint {ast.unparse(node)!r}")


def find_function(code: str, fn_name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition ``fn_name`` names in ``code`` (``f``, ``Solution().f``, ``Cls.f``)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    parts = fn_name.replace("()", "").split(".")
    scope: list[ast.stmt] = tree.body
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        for node in scope:
            if last and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name == part:
                    return node
            elif not last and isinstance(node, ast.ClassDef) and node.name == part:
                scope = node.body
                break
        else:
            return None
    return None


def strategy_from_signature(code: str, fn_name: str) -> st.SearchStrategy[tuple[Any, ...]]:
    """Argument tuples for ``fn_name``, from the type hints of its definition in ``code``.

    ``self`` and ``cls`` of a method are skipped. Every other positional parameter needs
    a hint among int, float, str, bool, bytes, None, list/tuple/set/dict of those,
    Optional and unions (``typing`` spellings included).

    Raises:
        SpecError: The function is missing, or a parameter has no usable hint.
    """
    check_callable(fn_name)
    node = find_function(code, fn_name)
    if node is None:
        raise SpecError("reference", f"no definition of {fn_name!r} to infer inputs from")
    params = [*node.args.posonlyargs, *node.args.args]
    if "." in fn_name and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    strategies = []
    for param in params:
        where = f"reference.{fn_name}.{param.arg}"
        if param.annotation is None:
            raise SpecError(where, "parameter has no type hint: pass an input strategy")
        strategies.append(strategy_for_hint(param.annotation, where))
    return st.tuples(*strategies)


# --- from examples ------------------------------------------------------------------------


def strategy_from_values(values: Sequence[Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values like ``values``: same types and shapes, spread around the examples' range."""
    kinds: dict[type, list[Any]] = {}
    for value in values:
        kinds.setdefault(type(value), []).append(value)
    options: list[st.SearchStrategy[Any]] = []
    for kind, seen in kinds.items():
        if kind is bool:
            options.append(st.booleans())
        elif kind is int:
            low, high = min(seen), max(seen)
            span = max(10, high - low)
            options.append(st.integers(low - span, high + span))
        elif kind is float:
            low, high = min(seen), max(seen)
            span = max(10.0, high - low)
            options.append(
                st.floats(low - span, high + span, allow_nan=False, allow_infinity=False)
            )
        elif kind is str:
            alphabet = sorted({c for s in seen for c in s}) or list("ab")
            longest = max(len(s) for s in seen)
            options.append(
                st.text(st.sampled_from(alphabet) | st.characters(), max_size=max(4, longest * 2))
            )
        elif kind in (list, tuple, set, frozenset) and depth < 5:
            items = [item for value in seen for item in value]
            element = strategy_from_values(items, depth + 1) if items else st.integers(-10, 10)
            longest = max(len(v) for v in seen)
            size = max(MAX_ITEMS, longest * 2)
            if kind in (set, frozenset):
                sets = st.sets(element, max_size=size)
                options.append(sets.map(frozenset) if kind is frozenset else sets)
            else:
                lists = st.lists(element, max_size=size)
                options.append(lists.map(tuple) if kind is tuple else lists)
        elif kind is dict and depth < 5:
            keys = [k for value in seen for k in value]
            vals = [v for value in seen for v in value.values()]
            options.append(
                st.dictionaries(
                    strategy_from_values(keys, depth + 1) if keys else st.text(max_size=4),
                    strategy_from_values(vals, depth + 1) if vals else st.integers(-10, 10),
                    max_size=max(5, max(len(v) for v in seen) * 2),
                )
            )
        else:
            options.append(st.sampled_from(seen))
    if not options:
        return st.integers(-10, 10)
    return st.one_of(*options)


def strategy_from_examples(examples: Sequence[Sequence[Any]]) -> st.SearchStrategy[tuple[Any, ...]]:
    """Argument tuples like the given ones (type-aware, in the spirit of EvalPlus's mutation).

    Every example must have the same number of arguments.

    Raises:
        SpecError: No examples, or examples with different numbers of arguments.
    """
    if not examples:
        raise SpecError("inputs", "no example arguments to generate inputs from")
    arity = {len(e) for e in examples}
    if len(arity) != 1:
        raise SpecError("inputs", f"examples have different numbers of arguments: {sorted(arity)}")
    n = arity.pop()
    columns = [[example[i] for example in examples] for i in range(n)]
    return st.tuples(*(strategy_from_values(column) for column in columns))


def literal_calls(source: str, names: set[str]) -> list[tuple[str, tuple[Any, ...]]]:
    """Calls of ``names`` in ``source`` whose arguments are all literals, with the arguments."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, tuple[Any, ...]]] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in names
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            try:
                args = tuple(ast.literal_eval(a) for a in node.args)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            found.append((node.func.id, args))
    return found


__all__ = [
    "check_callable",
    "find_function",
    "literal_calls",
    "python_literal",
    "strategy_for_hint",
    "strategy_from_examples",
    "strategy_from_signature",
    "strategy_from_values",
]
