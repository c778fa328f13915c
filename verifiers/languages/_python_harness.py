"""Python test harness: the program's side and the judge's side of one test, in the sandbox.

Stdlib only (it runs on the sandbox's interpreter). The same file is loaded in two places
that never share memory:

* in the **zygote** (the process that forks programs and never holds a test), where
  ``candidate_main`` runs the candidate's code: ``stdio`` runs ``solution.py`` as
  ``__main__`` (stdout is judged outside); ``serve`` runs it as a module and then answers
  calls from the judge over the call channel (descriptors 5 in, 6 out) until the judge
  hangs up. It is told nothing but its own code (and a trusted prelude such as LeetCode's
  helper classes): no test, no expected value, no token.
* in the **supervisor**, where ``judge_main`` runs in a forked process of the judge's own
  uid (not dumpable): it holds the tests, runs them with the program's functions bound to
  proxies that call over the channel, compares in its own interpreter (real builtins, real
  modules) and writes the verdict on descriptor 3, which only it holds.

Values cross the channel as plain data (tagged JSON: numbers, strings, bytes, lists,
tuples, dicts, sets, ranges, decimals, fractions, numpy values, nested and shared, cycles
included). Objects of the program's classes stay in the program's process and reach the
judge as opaque handles: the judge may call them and read their attributes, items, length
and iteration (each answer is data again), but an opaque value equals nothing and has no
truth value, so no comparison is ever decided by the program's code. Callables the tests
pass in are called back across the channel. Arguments the program changes in place are
changed in the judge too (every mutable argument's new state comes back with the answer).
Exceptions the program raises are raised again in the judge with the same builtin class
(the program's own classes become subclasses of their nearest builtin base), so
``pytest.raises``/``assertRaises`` style tests keep working.
"""

from __future__ import annotations

import ast
import base64
import builtins
import fcntl
import io
import json
import math
import operator
import os
import re
import struct
import sys
import time
import traceback
import types
import warnings
from collections.abc import Callable
from typing import Any

VERDICT_FD = 3
CALLS_IN_FD = 5
CALLS_OUT_FD = 6
SOLUTION_NAME = "solution.py"
HARNESS_FILE = os.path.abspath(__file__)
#: Most values one answer may hold, and the deepest nesting.
MAX_NODES = 5_000_000
MAX_DEPTH = 400
#: The largest message on the call channel.
MAX_MESSAGE = 512 * 1024 * 1024

#: The program's files by absolute path when a warm sandbox keeps them in memory (the
#: sandbox agent sets this after loading the harness); otherwise they are on disk.
PROGRAM_FILES: dict[str, bytes] = {}
#: The judge's files by name (only in the supervisor's processes; set by the agent).
JUDGE_FILES: dict[str, bytes] = {}


def program_file(directory: str, name: str) -> bytes:
    path = os.path.join(directory, name)
    data = PROGRAM_FILES.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    return data


def emit(record: dict[str, Any], fd: int = VERDICT_FD) -> None:
    """One JSON line on a result channel (descriptor 3)."""
    data = (json.dumps(record, default=repr) + "\n").encode("utf-8", errors="surrogatepass")
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass


# --- the call channel ------------------------------------------------------------------------


class ChannelClosed(Exception):
    """The other side hung up (or sent something that is not a message)."""


def send(message: dict[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=True, allow_nan=False).encode("ascii")
    payload = memoryview(struct.pack(">I", len(data)) + data)
    try:
        while payload:
            payload = payload[os.write(CALLS_OUT_FD, payload) :]
    except OSError as exc:
        raise ChannelClosed(str(exc)) from None


def _read_exact(n: int) -> bytes:
    chunks = []
    while n > 0:
        try:
            chunk = os.read(CALLS_IN_FD, min(n, 1 << 20))
        except OSError as exc:
            raise ChannelClosed(str(exc)) from None
        if not chunk:
            raise ChannelClosed("end of the channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive() -> dict[str, Any]:
    (size,) = struct.unpack(">I", _read_exact(4))
    if size > MAX_MESSAGE:
        raise ChannelClosed(f"a message of {size} bytes")
    try:
        message = json.loads(_read_exact(size))
    except (ValueError, RecursionError) as exc:
        raise ChannelClosed(f"a malformed message ({type(exc).__name__})") from None
    if not isinstance(message, dict):
        raise ChannelClosed("a message that is not an object")
    return message


# --- values ------------------------------------------------------------------------------------

_PLAIN = (bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset)
_MUTABLE = (list, dict, set, bytearray)
_SCALARS = frozenset({int, float, str, bool, type(None)})


def _is_deque(v: Any) -> bool:
    t = type(v)
    return t.__module__ == "collections" and t.__name__ == "deque"


def _numpy(load: bool = False) -> Any:
    """numpy if it is loaded (no value can be numpy's otherwise), or, with ``load``, loaded.

    A numpy value that arrives is decoded as one whatever this process imported before (a
    warm judge that had imported numpy for an earlier program's tests decoded arrays as
    arrays, a new one as lists).
    """
    np = sys.modules.get("numpy")
    if np is None and load:
        try:
            import numpy as np
        except ImportError:
            return None
    return np


#: numpy types that cross as arrays and scalars: a kind and a size, never a structure.
_PLAIN_DTYPE = re.compile(r"\A(?:object|[<>|=]?[a-zA-Z]{1,12}[0-9]{0,4}(?:\[[a-zA-Z]{1,2}\])?)\Z")


def prelude_classes(values: dict[str, Any], module: str) -> dict[str, type]:
    """The classes a trusted prelude defines itself (LeetCode's ``ListNode``, ``TreeNode``),
    by name: their objects cross between the program and the judge as data.

    Only those whose module is the one the prelude ran in: the classes it imports (its
    ``from collections import *`` brings ``UserList``, whose ``__eq__`` calls a method an
    instance attribute could replace) are the library's, and cross as any other object.
    """
    return {k: v for k, v in values.items() if isinstance(v, type) and v.__module__ == module}


class Codec:
    """Values to tagged JSON and back, on one side of the channel.

    ``handles`` are objects of the other kind this side keeps (the program's objects in
    the program, the tests' callables in the judge), referred to by number; ``remote`` makes
    a local stand-in for a handle the other side sent; ``classes`` are trusted classes both
    sides define (a prelude's), sent by their attributes.
    """

    def __init__(
        self,
        keep: Callable[[Any], dict[str, Any] | None],
        remote: Callable[[dict[str, Any]], Any],
        lookup: Callable[[dict[str, Any]], Any],
        classes: Callable[[], dict[str, type]],
    ) -> None:
        self.keep = keep
        self.remote = remote
        self.lookup = lookup
        self.classes = classes
        #: Classes of the other side's values that defined comparison methods of their own.
        self.suspects: set[str] = set()

    # encoding

    def encode(
        self,
        value: Any,
        track: dict[int, Any] | None = None,
        args: dict[int, int] | None = None,
    ) -> Any:
        """``value`` as tagged JSON.

        With ``track``, every mutable container gets an id, recorded there (arguments whose
        changes come back). ``args`` maps objects (by ``id()``) to such ids: below the top
        they are sent as references to the other side's own objects.
        """
        shared = self._shared(value) if track is None else None
        ids: dict[int, int] = {}
        budget = [MAX_NODES]
        self._args = args or {}
        try:
            return self._encode(value, ids, shared, track, budget, 0)
        finally:
            self._args = {}

    _args: dict[int, int] = {}  # noqa: RUF012 (set per call, never shared)

    def _shared(self, value: Any) -> set[int]:
        """Containers reached more than once (so that identity and cycles survive)."""
        seen: set[int] = set()
        twice: set[int] = set()
        stack = [value]
        nodes = 0
        while stack:
            v = stack.pop()
            nodes += 1
            if nodes > MAX_NODES:
                raise ValueError("the value is too large to send")
            if type(v) in _SCALARS:
                continue
            base = _base(v)
            if base is None and not self._trusted(v):
                continue
            if base in (int, float, bool, str, complex, bytes):
                continue
            if id(v) in seen:
                twice.add(id(v))
                continue
            seen.add(id(v))
            stack.extend(_children(v, base) if base is not None else vars(v).values())
        return twice

    def _trusted(self, v: Any) -> bool:
        cls = self.classes().get(type(v).__name__)
        return cls is not None and hasattr(v, "__dict__")

    def _encode(
        self,
        v: Any,
        ids: dict[int, int],
        shared: set[int] | None,
        track: dict[int, Any] | None,
        budget: list[int],
        depth: int,
    ) -> Any:
        # Exact scalars in a function of their own: they are most of any value, never shared
        # or tracked, and this small frame costs a fraction of the one below.
        t = type(v)
        if (
            (t is int and -(2**53) < v < 2**53)
            or t is str
            or t is bool
            or v is None
            or (t is float and math.isfinite(v))
        ):
            budget[0] -= 1
            if budget[0] < 0 or depth > MAX_DEPTH:
                raise ValueError("the value is too large or too deeply nested to send")
            return v
        return self._encode_other(v, ids, shared, track, budget, depth)

    def _encode_other(
        self,
        v: Any,
        ids: dict[int, int],
        shared: set[int] | None,
        track: dict[int, Any] | None,
        budget: list[int],
        depth: int,
    ) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise ValueError("the value is too large or too deeply nested to send")
        if v is None:
            return None
        if id(v) in ids:
            return {"$ref": ids[id(v)]}
        if depth and id(v) in self._args:
            return {"$arg": self._args[id(v)]}
        base = _base(v)
        if base is not None and base is not type(v) and _overrides_comparisons(type(v)):
            # Sent as its base type's data (its methods take no part): a sign of a hack.
            self.suspects.add(f"{type(v).__module__}.{type(v).__qualname__}")

        def own_id(tag: dict[str, Any]) -> dict[str, Any]:
            if (track is not None and (isinstance(v, _MUTABLE) or _is_deque(v))) or (
                shared is not None and id(v) in shared
            ):
                ids[id(v)] = len(ids)
                tag["$id"] = ids[id(v)]
                if track is not None:
                    track[tag["$id"]] = v
            return tag

        def each(items: Any) -> list[Any]:
            return [self._encode(x, ids, shared, track, budget, depth + 1) for x in items]

        if base is bool:
            return bool(v)
        if base is int:
            n = int.__index__(v)
            return n if -(2**53) < n < 2**53 else {"$int": hex(n)}
        if base is float:
            f = float.__float__(v)
            if math.isfinite(f):
                return f
            return {"$float": "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")}
        if base is str:
            return str.__str__(v)
        if base is complex:
            c = complex(complex.real.__get__(v), complex.imag.__get__(v))
            return {"$complex": [_float(c.real), _float(c.imag)]}
        if base is bytes:
            return {"$bytes": base64.b64encode(bytes(memoryview(v))).decode("ascii")}
        if base is bytearray:
            tag = own_id({})
            tag["$bytearray"] = base64.b64encode(bytes(v)).decode("ascii")
            return tag
        if base is list:
            tag = own_id({})
            items = each(list.__iter__(v))
            if len(tag) == 0:
                return items
            tag["$list"] = items
            return tag
        if base is tuple:
            tag = own_id({})
            tag["$tuple"] = each(tuple.__iter__(v))
            fields = getattr(type(v), "_fields", None)
            if isinstance(fields, tuple) and all(type(f) is str for f in fields):
                tag["$namedtuple"] = [type(v).__name__, list(fields)]
            return tag
        if base is dict:
            tag = own_id({})
            pairs = [
                [
                    self._encode(k, ids, shared, track, budget, depth + 1),
                    self._encode(x, ids, shared, track, budget, depth + 1),
                ]
                for k, x in dict.items(v)
            ]
            tag["$dict"] = pairs
            kind = _dict_kind(v)
            if kind:
                tag["$kind"] = kind
            return tag
        if base is set:
            tag = own_id({})
            tag["$set"] = each(set.__iter__(v))
            return tag
        if base is frozenset:
            return {"$frozenset": each(frozenset.__iter__(v))}
        t = type(v)
        if t is range:
            return {"$range": [v.start, v.stop, v.step]}
        if t.__module__ == "decimal" and t.__name__ == "Decimal":
            return {"$decimal": str(v)}
        if t.__module__ == "fractions" and t.__name__ == "Fraction":
            return {"$fraction": [hex(v.numerator), hex(v.denominator)]}
        if t.__module__ == "collections" and t.__name__ == "deque":
            tag = own_id({})
            tag["$deque"] = each(list(v))
            return tag
        np = _numpy()
        if np is not None and isinstance(v, (np.ndarray, np.generic)):
            if isinstance(v, np.ndarray):
                if v.dtype.kind == "O":
                    return {"$ndarray": each(v.tolist()), "dtype": "object"}
                return {"$ndarray": each(v.tolist()), "dtype": str(v.dtype)}
            return {
                "$npscalar": self._encode(v.item(), ids, shared, track, budget, depth + 1),
                "dtype": str(v.dtype),
            }
        if t in (type(dict().keys()), type(dict().values()), type(dict().items())):
            return {"$list": each(list(v))}
        if self._trusted(v):
            tag = own_id({})
            attrs = [
                [name, self._encode(x, ids, shared, track, budget, depth + 1)]
                for name, x in vars(v).items()
                if type(name) is str
            ]
            tag["$obj"] = t.__name__
            tag["attrs"] = attrs
            return tag
        kept = self.keep(v)
        if kept is None:
            return {"$opaque": f"{t.__module__}.{t.__qualname__}"}
        return kept

    # decoding

    def decode(
        self, data: Any, track: dict[int, Any] | None = None, known: dict[int, Any] | None = None
    ) -> Any:
        """The value of tagged JSON.

        ``track`` receives the objects that came with an id (arguments, whose changes are
        sent back); ``known`` maps ids of this side's own objects that ``$arg`` refers to.
        """
        ids: dict[int, Any] = track if track is not None else {}
        budget = [MAX_NODES]
        self._known = known or {}
        try:
            return self._decode(data, ids, budget, 0)
        finally:
            self._known = {}

    _known: dict[int, Any] = {}  # noqa: RUF012 (set per call, never shared)

    def _decode(self, d: Any, ids: dict[int, Any], budget: list[int], depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise ValueError("the value is too large or too deeply nested")
        if d is None or type(d) in (bool, int, float, str):
            return d
        if type(d) is list:
            return [self._decode(x, ids, budget, depth + 1) for x in d]
        if type(d) is not dict:
            raise ValueError(f"unexpected {type(d).__name__} in a value")
        return self._decode_tagged(d, ids, budget, depth)

    def _decode_tagged(
        self, d: dict[str, Any], ids: dict[int, Any], budget: list[int], depth: int
    ) -> Any:
        """A tagged value (the closures below make this frame dear: scalars never come here)."""

        def each(items: Any) -> list[Any]:
            if type(items) is not list:
                raise ValueError("a malformed value")
            return [self._decode(x, ids, budget, depth + 1) for x in items]

        def register(obj: Any) -> Any:
            if "$id" in d:
                key = d["$id"]
                if type(key) is not int:
                    raise ValueError("a malformed id")
                ids[key] = obj
            return obj

        if "$ref" in d:
            try:
                return ids[d["$ref"]]
            except (KeyError, TypeError):
                raise ValueError("a reference to nothing") from None
        if "$arg" in d:
            try:
                return self._known[d["$arg"]]
            except (KeyError, TypeError):
                raise ValueError("a reference to no argument") from None
        if "$name" in d:
            return self.lookup(d)
        if "$int" in d:
            return int(str(d["$int"]), 16)
        if "$float" in d:
            return float(str(d["$float"]))
        if "$complex" in d:
            re_, im = d["$complex"]
            return complex(_unfloat(re_), _unfloat(im))
        if "$bytes" in d:
            return base64.b64decode(str(d["$bytes"]), validate=True)
        if "$bytearray" in d:
            return register(bytearray(base64.b64decode(str(d["$bytearray"]), validate=True)))
        if "$list" in d:
            out: list[Any] = register([])
            out.extend(each(d["$list"]))
            return out
        if "$tuple" in d:
            items = each(d["$tuple"])
            nt = d.get("$namedtuple")
            if isinstance(nt, list) and len(nt) == 2:
                import collections

                name, fields = nt
                try:
                    made = collections.namedtuple(str(name), [str(f) for f in fields])  # type: ignore[misc]
                    return register(made(*items))
                except (TypeError, ValueError):
                    pass
            return register(tuple(items))
        if "$dict" in d:
            kind = d.get("$kind")
            target: dict[Any, Any] = register(_new_dict(kind))
            pairs = d["$dict"]
            if type(pairs) is not list:
                raise ValueError("a malformed dict")
            for pair in pairs:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("a malformed dict")
                key = self._decode(pair[0], ids, budget, depth + 1)
                target[key] = self._decode(pair[1], ids, budget, depth + 1)
            return target
        if "$set" in d:
            s: set[Any] = register(set())
            s.update(each(d["$set"]))
            return s
        if "$frozenset" in d:
            return frozenset(each(d["$frozenset"]))
        if "$range" in d:
            start, stop, step = d["$range"]
            return range(int(start), int(stop), int(step))
        if "$decimal" in d:
            import decimal

            return decimal.Decimal(str(d["$decimal"]))
        if "$fraction" in d:
            import fractions

            num, den = d["$fraction"]
            return fractions.Fraction(int(str(num), 16), int(str(den), 16))
        if "$deque" in d:
            import collections

            dq: Any = register(collections.deque())
            dq.extend(each(d["$deque"]))
            return dq
        if "$ndarray" in d:
            items = each(d["$ndarray"])
            np = _numpy(load=True)
            if np is None:
                return items
            dtype = str(d.get("dtype") or "")
            if not _PLAIN_DTYPE.match(dtype):
                # A structured or subarray type ("(100000000,)i8") would make each item an
                # array the judge allocates: only a plain type crosses.
                raise ValueError(f"an array of a type that is not plain: {dtype[:40]!r}")
            return np.array(items, dtype=None if dtype == "object" else dtype)
        if "$npscalar" in d:
            value = self._decode(d["$npscalar"], ids, budget, depth + 1)
            np = _numpy(load=True)
            if np is None:
                return value
            if not _PLAIN_DTYPE.match(str(d.get("dtype"))):
                raise ValueError("a scalar of a type that is not plain")
            return np.dtype(str(d.get("dtype"))).type(value)
        if "$obj" in d:
            known = self.classes().get(str(d["$obj"]))
            if known is None:
                raise ValueError(f"an object of an unknown class {d['$obj']!r}")
            obj = register(object.__new__(known))
            attrs = d.get("attrs")
            if type(attrs) is not list:
                raise ValueError("a malformed object")
            for pair in attrs:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                    raise ValueError("a malformed object")
                name = pair[0]
                # Plain data attributes only: an instance attribute named like one of the
                # class's (a method, `_UserList__cast`) would take its place in the judge.
                if not name.isidentifier() or name.startswith("_") or hasattr(known, name):
                    raise ValueError(f"an object with an attribute its class has: {name!r}")
                obj.__dict__[name] = self._decode(pair[1], ids, budget, depth + 1)
            return obj
        if "$handle" in d or "$callback" in d:
            return register(self.lookup(d) if self._ours(d) else self.remote(d))
        if "$opaque" in d:
            return register(Opaque(str(d["$opaque"])))
        raise ValueError("an unknown tag in a value")

    def _ours(self, d: dict[str, Any]) -> bool:
        return bool(d.get("back"))


def _float(f: float) -> Any:
    if math.isfinite(f):
        return f
    return "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")


def _unfloat(x: Any) -> float:
    return float(x) if type(x) in (int, float, str) else float("nan")


def _base(v: Any) -> type | None:
    """The builtin data type ``v`` is (or derives from); None for anything else.

    A subclass of a builtin is sent as its base type's data, read with the base type's own
    methods, so none of the subclass's methods take part.
    """
    t = type(v)
    if t in _PLAIN:
        return t
    for klass in t.__mro__[1:]:
        if klass in _PLAIN:
            return klass
    return None


def _children(v: Any, base: type) -> list[Any]:
    if base is dict:
        return [*dict.keys(v), *dict.values(v)]
    if base is list:
        return list(list.__iter__(v))
    if base is tuple:
        return list(tuple.__iter__(v))
    if base is set:
        return list(set.__iter__(v))
    if base is frozenset:
        return list(frozenset.__iter__(v))
    return []


def _dict_kind(v: Any) -> str:
    import collections

    t = type(v)
    if t is collections.Counter:
        return "Counter"
    if t is collections.OrderedDict:
        return "OrderedDict"
    if t is collections.defaultdict:
        factory = v.default_factory
        for name, known in _FACTORIES.items():
            if factory is known:
                return f"defaultdict:{name}"
        return "defaultdict"
    return ""


#: The default factories a defaultdict crosses the channel with, by name. The name is the
#: sender's data: looking it up anywhere else (``builtins``) would let the program choose a
#: callable that the tests then call (``exit``, whose SystemExit(0) once passed a test).
_FACTORIES: dict[str, type] = {
    "int": int,
    "list": list,
    "set": set,
    "dict": dict,
    "str": str,
    "float": float,
    "tuple": tuple,
}


def _new_dict(kind: Any) -> dict[Any, Any]:
    import collections

    if kind == "Counter":
        return collections.Counter()
    if kind == "OrderedDict":
        return collections.OrderedDict()
    if isinstance(kind, str) and kind.startswith("defaultdict"):
        return collections.defaultdict(_FACTORIES.get(kind.partition(":")[2]))
    return {}


class Opaque:
    """A value the other side could not send (an object of an unknown kind): equals nothing."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def _sync_state(obj: Any, state: Any) -> None:
    """Make ``obj`` (a mutable argument) hold ``state`` (its decoded new contents)."""
    if isinstance(obj, list) and isinstance(state, list):
        obj[:] = state
    elif (isinstance(obj, dict) and isinstance(state, dict)) or (
        isinstance(obj, set) and isinstance(state, set)
    ):
        obj.clear()
        obj.update(state)
    elif isinstance(obj, bytearray) and isinstance(state, (bytes, bytearray)):
        obj[:] = state
    elif type(obj).__name__ == "deque" and hasattr(state, "__iter__"):
        obj.clear()
        obj.extend(state)
    elif hasattr(obj, "__dict__") and hasattr(state, "__dict__"):
        obj.__dict__.clear()
        obj.__dict__.update(state.__dict__)


# --- the program's side ------------------------------------------------------------------------


_MISSING = object()


class _ProgramSide:
    """What ``serve`` keeps: the program's namespace, its objects by handle, the trusted classes."""

    def __init__(self, namespace: dict[str, Any], trusted: dict[str, type]) -> None:
        self.namespace = namespace
        self.trusted = trusted
        self.handles: list[Any] = []
        self.handle_of: dict[int, int] = {}
        self.codec = Codec(self.keep, self.callback, self.lookup, lambda: self.trusted)
        # The zygote's copy when it prepared the program (before any of it ran): a copy made
        # here would cost this process a copy of every page a builtin is on.
        self._builtins = _BUILTINS or dict(vars(builtins))

    def signs(self) -> dict[str, Any]:
        """What looks like an attempt at a hack so far: it changes nothing here, it is reported.

        The program's process is its own: patched builtins, trace functions or lying
        comparisons cannot reach the judge. Saying they were tried helps whoever reads the
        logs (``hack_suspected``).
        """
        out: dict[str, Any] = {}
        current = vars(builtins)
        changed = [k for k, v in self._builtins.items() if current.get(k, _MISSING) is not v]
        if changed:
            out["tamper"] = f"the program modified builtins.{changed[0]}"
        elif sys.gettrace() is not None or sys.getprofile() is not None:
            out["tamper"] = "the program set a tracing or profiling hook"
        if self.codec.suspects:
            out["suspects"] = sorted(self.codec.suspects)[:10]
        return out

    def keep(self, v: Any) -> dict[str, Any]:
        callback = getattr(v, "_vf_callback", None) if isinstance(v, types.FunctionType) else None
        if type(callback) is int:
            return {"$callback": callback, "back": True}
        key = self.handle_of.get(id(v))
        if key is None:
            key = self.handle_of[id(v)] = len(self.handles)
            self.handles.append(v)
        t = type(v)
        kind = "object"
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            kind = "function"
        elif isinstance(v, type):
            kind = "class"
        elif hasattr(t, "__next__"):
            kind = "iterator"
        return {
            "$handle": key,
            "kind": kind,
            "type": f"{getattr(t, '__module__', '?')}.{getattr(t, '__qualname__', '?')}",
            "name": str(getattr(v, "__name__", ""))[:200] if kind in ("function", "class") else "",
            "suspect": _overrides_comparisons(t),
            "truth": _truth(v),
        }

    def lookup(self, d: dict[str, Any]) -> Any:
        if "$name" in d:
            return _target(self, {"name": d["$name"]})
        try:
            return self.handles[int(d["$handle"])]
        except (KeyError, IndexError, TypeError, ValueError):
            raise ValueError("a handle to nothing") from None

    def callback(self, d: dict[str, Any]) -> Any:
        key = d.get("$callback")
        if type(key) is not int:
            raise ValueError("a malformed callback")
        name = str(d.get("name") or "callback")

        def call_back(*args: Any, **kwargs: Any) -> Any:
            return _program_request(
                self,
                {
                    "op": "callback",
                    "id": key,
                    "args": self.codec.encode(list(args)),
                    "kwargs": self.codec.encode(kwargs),
                },
            )

        call_back.__name__ = call_back.__qualname__ = name
        call_back._vf_callback = key  # type: ignore[attr-defined]
        return call_back


def _truth(v: Any) -> bool | None:
    """The object's truth, decided now, as it is returned (like returning True or False)."""
    try:
        return bool(v)
    except Exception:
        return None


def _overrides_comparisons(t: type) -> bool:
    """Whether a class of the program defines comparison or truth methods (a hack's sign)."""
    names = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__")
    try:
        return any(n in vars(k) for k in t.__mro__ if k is not object for n in names)
    except Exception:
        return True


def _program_request(side: _ProgramSide, message: dict[str, Any]) -> Any:
    """Call back into the judge, serving its requests meanwhile, and return its answer."""
    send(message)
    while True:
        reply = receive()
        if "op" in reply:
            _serve_one(side, reply)
            continue
        if "raise" in reply:
            info = reply["raise"] if isinstance(reply["raise"], dict) else {}
            raise RuntimeError(str(info.get("message", "the callback raised"))[:2000])
        return side.codec.decode(reply.get("value"))


def _describe_exception(exc: BaseException, codec: Codec) -> dict[str, Any]:
    t = type(exc)
    bases = [k.__name__ for k in t.__mro__ if k.__module__ == "builtins" and k is not object]
    try:
        args = codec.encode(list(exc.args))
    except Exception:
        args = [str(a)[:2000] for a in exc.args[:8]]
    try:
        text = str(exc)[:2000]
    except Exception:
        text = "<unprintable>"
    return {
        "type": t.__name__,
        "module": str(getattr(t, "__module__", "")),
        "bases": bases,
        "args": args,
        "message": text,
        "traceback": _traceback(exc),
    }


def _traceback(exc: BaseException) -> str:
    try:
        te = traceback.TracebackException.from_exception(exc, limit=-30)
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if os.path.abspath(f.filename) != HARNESS_FILE]
        )
        return "".join(te.format())[-4000:]
    except Exception:
        return f"{type(exc).__name__}"


def _serve_one(side: _ProgramSide, message: dict[str, Any]) -> None:
    """Answer one request of the judge (a call, an attribute, an item, the next value)."""
    op = message.get("op")
    track: dict[int, Any] = {}
    codec = side.codec
    try:
        target = _target(side, message.get("target"))
        if op == "call":
            args = codec.decode(message.get("args") or [], track)
            kwargs = codec.decode(message.get("kwargs") or {}, track)
            if type(args) is not list or type(kwargs) is not dict:
                raise ValueError("malformed arguments")
            value = target(*args, **{str(k): v for k, v in kwargs.items()})
        elif op == "value":
            value = target
        elif op == "getattr":
            value = getattr(target, str(message.get("name")))
        elif op == "next":
            value = next(target)
        elif op == "iter":
            value = iter(target)
        elif op == "len":
            value = operator.index(len(target))
        elif op == "getitem":
            value = target[codec.decode(message.get("key"), track)]
        else:
            raise ValueError(f"unknown request {op!r}")
    except StopIteration:
        send({"stop": True, "sync": _sync(codec, track)})
        return
    except SystemExit as exc:
        send({"exit": _exit_code(exc)})
        _finish_interpreter()
        os._exit(0)
    except ChannelClosed:
        raise
    except BaseException as exc:
        send({"raise": _describe_exception(exc, codec), "sync": _sync(codec, track)})
        return
    try:
        encoded = codec.encode(value)
    except (ValueError, RecursionError) as exc:
        send({"raise": _describe_exception(exc, codec), "sync": _sync(codec, track)})
        return
    send({"value": encoded, "sync": _sync(codec, track), **side.signs()})


def _sync(codec: Codec, track: dict[int, Any]) -> list[Any]:
    """The new state of every mutable argument of a call, as [id, state] pairs.

    An argument inside another one is sent as a reference (``$arg``) to the judge's own
    object, so that what the tests hold stays the same object, with new contents.
    """
    if not track:
        return []
    refs = {id(obj): key for key, obj in track.items()}
    out = []
    for key, obj in track.items():
        try:
            state = codec.encode(obj, args=refs)
        except (ValueError, RecursionError):
            continue
        out.append([key, state])
    return out


def _target(side: _ProgramSide, ref: Any) -> Any:
    if isinstance(ref, dict) and "name" in ref:
        name = str(ref["name"])
        if name not in side.namespace:
            raise NameError(f"name {name!r} is not defined by the program")
        return side.namespace[name]
    if isinstance(ref, dict) and "$handle" in ref:
        return side.lookup(ref)
    raise ValueError("a request without a target")


# The program's code, compiled in the zygote before it forks the tests (see
# ``candidate_prepare``): compiling never runs any of it, and a large program is compiled
# once rather than once per test.
_COMPILED: dict[bytes, types.CodeType] = {}
_COMPILE_ONCE_MAX = 64 * 1024


def _compile_solution(source: bytes) -> types.CodeType | dict[str, Any]:
    compiled = _COMPILED.get(source)
    if compiled is not None:
        return compiled
    try:
        return compile(source, SOLUTION_NAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return {
            "message": exc.msg,
            "line": exc.lineno or 0,
            "column": exc.offset or 0,
            "text": (exc.text or "").rstrip("\n")[:500],
            # As Python prints it (SandboxFusion's clients read this text).
            "native": "".join(traceback.format_exception_only(type(exc), exc))[-2000:],
        }
    except ValueError as exc:  # null bytes
        native = "".join(traceback.format_exception_only(type(exc), exc))[-2000:]
        return {"message": str(exc), "line": 0, "column": 0, "text": "", "native": native}


#: The program's configuration, parsed once in the zygote (by its file's bytes).
_CONFIG: dict[bytes, dict[str, Any]] = {}
#: The builtins as the zygote had them (no program code ever runs there).
_BUILTINS: dict[str, Any] = {}


def _config(program_dir: str) -> dict[str, Any]:
    raw = program_file(program_dir, "candidate.json")
    config = _CONFIG.get(raw)
    if config is None:
        config = json.loads(raw)
    return config


def candidate_prepare(argv: list[str]) -> int:
    """Compile the program once in the zygote (compiling runs none of it).

    What every test's process would otherwise do for itself is done here once: parsing the
    configuration, copying the builtins to notice a program that changes them.
    """
    _COMPILED.clear()
    _CONFIG.clear()
    if not _BUILTINS:
        _BUILTINS.update(vars(builtins))
    try:
        raw = program_file(argv[0], "candidate.json")
        _CONFIG[raw] = json.loads(raw)
    except (OSError, ValueError):
        pass  # each test reports it
    source = program_file(argv[0], SOLUTION_NAME)
    if len(source) <= _COMPILE_ONCE_MAX:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # each test shows the program's warnings
                _COMPILED[source] = compile(source, SOLUTION_NAME, "exec", dont_inherit=True)
        except Exception:  # each test reports the error itself
            pass
    return 0


def _module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = SOLUTION_NAME
    module.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules[name] = module
    return module


def _finish_interpreter() -> None:
    """What a normal interpreter exit does: join non-daemon threads, run atexit handlers."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except Exception:
            pass
    _run_exit_handlers()


def _run_exit_handlers() -> None:
    """Run (and forget) the program's ``atexit`` handlers, as an interpreter's exit does."""
    try:
        import atexit

        atexit._run_exitfuncs()
    except Exception:
        pass


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)  # unittest.main exits with a bool
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:
        pass
    return 1


def _channel_record(record: dict[str, Any]) -> None:
    """A record on the program's own channel: it explains failures, never proves a pass."""
    emit(record, VERDICT_FD)


def candidate_main(argv: list[str]) -> int:
    """The program's side of one test: ``[program_dir, "stdio" | "serve" | "warm"]``."""
    program_dir, mode = argv[0], argv[1]
    config = _config(program_dir)
    code = _compile_solution(program_file(program_dir, SOLUTION_NAME))
    if mode == "warm":
        return _Runner(code).serve()
    if mode == "stdio":
        if isinstance(code, dict):
            _channel_record({"event": "syntax_error", **code})
            return 1
        module = _module("__main__")
        sys.argv = [SOLUTION_NAME]
        sys.path.insert(0, os.getcwd())
        status = 0
        try:
            exec(code, module.__dict__)
        except SystemExit as exc:
            status = _exit_code(exc)
        except BaseException as exc:
            status = _report_error(exc, "solution")
        _finish_interpreter()
        return status
    return _serve(config, code)


# --- the warm runner: a program's stdin/stdout tests in one process ---------------------------
#
# The sandbox agent starts it like a test (forked from the zygote, the program's uid and
# limits) and sends each test on descriptor 5: a 4-byte length, a JSON header
# (``stdin_bytes``, ``max_output_bytes``), the test's input; each reply on 6 is a 4-byte
# length, a JSON header (``exit_code``, ``cpu_s``, ``stdout_bytes``, ``stderr_bytes``,
# ``channel_bytes``, ``retire``) and those bytes. Each test runs as a test run alone does:
# the compiled program in a new ``__main__``, its own memory files at descriptors 0 to 3
# (input, output, errors, the channel), new ``sys`` streams. It is the program's own process:
# the agent bounds its replies, time and output, and what it says is the program's output
# and nothing more. Programs whose source names process-wide state a test would leave
# behind (threads, signals, exits that skip the flush, processes) run a test per process
# instead (``languages/python.py``: ``COLD_ONLY``).

#: A runner retires (the next test gets a new one) once its resident memory passes this
#: share of the memory limit: one test's garbage must not be a later test's memory limit.
_RUNNER_RSS_SHARE = 0.5
#: The most of a test's channel records a reply carries (the agent refuses more).
_RUNNER_CHANNEL_MAX = 1 << 20


def _memory_file(data: bytes = b"") -> int:
    """A memory file holding ``data``, at its start (closed by its caller)."""
    fd = os.memfd_create("test", 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _file_head(fd: int, limit: int) -> tuple[bytes, int]:
    """The first ``limit`` bytes of a memory file, and its whole size."""
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    chunks, want = [], min(size, limit)
    while want > 0:
        chunk = os.read(fd, min(want, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        want -= len(chunk)
    return b"".join(chunks), size


class _CappedRaw(io.RawIOBase):
    """Descriptor 1 or 2 under ``sys.stdout``/``sys.stderr``: past the cap, the test ends.

    A test run alone is stopped by its supervisor when its output passes the cap; here
    the count is kept as the program writes, and the runner replies at once (its memory
    files then hold the first cap bytes, which is what the agent keeps).
    """

    def __init__(self, runner: _Runner, fd: int, name: str) -> None:
        super().__init__()
        self.runner, self.fd, self.name = runner, fd, name

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        n = len(view)
        self.runner.written[self.name] += n
        if self.runner.written[self.name] > self.runner.cap:
            self.runner.exceeded(self.name)
        while view:
            view = view[os.write(self.fd, view) :]
        return n


class _Runner:
    """Serves the program's tests until the agent closes descriptor 5 (or it retires)."""

    def __init__(self, code: types.CodeType | dict[str, Any]) -> None:
        self.code = code
        self.cap = 0
        self.written = {"stdout": 0, "stderr": 0}
        self.cwd = os.getcwd()
        self.recursion = sys.getrecursionlimit()
        self.digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
        self.environ = dict(os.environ)
        self.builtins = dict(builtins.__dict__)
        self.started = 0.0
        self.files: dict[int, int] = {}  # descriptor in the test -> the runner's copy
        self.memory = 0  # the tightest of the memory limits, bytes (0: none)
        try:
            import resource

            found = [resource.getrlimit(r)[0] for r in (resource.RLIMIT_DATA, resource.RLIMIT_AS)]
            self.memory = min((m for m in found if m > 0), default=0)
        except (ImportError, OSError, ValueError):
            pass
        sys.path.insert(0, self.cwd)

    def serve(self) -> int:
        self.reply({"ready": True})
        while True:
            try:
                header = receive()
                stdin = _read_exact(int(header["stdin_bytes"]))
            except ChannelClosed:
                return 0
            self.cap = int(header["max_output_bytes"])
            self.written = {"stdout": 0, "stderr": 0}
            status = self.test(stdin)
            retire = self.left_behind()
            self.answer(status, retire)
            if retire:
                return 0

    def test(self, stdin: bytes) -> int:
        """One test, as :func:`candidate_main` runs it in a process of its own."""
        for fd in self.files.values():
            os.close(fd)
        self.files = {}
        for target, data in ((0, stdin), (1, b""), (2, b""), (VERDICT_FD, b"")):
            # Kept at a number of its own too: what the test does to 0 to 3 (closes them,
            # say) leaves what it wrote readable here.
            made = _memory_file(data)
            fd = fcntl.fcntl(made, fcntl.F_DUPFD_CLOEXEC, 64)
            os.close(made)  # (it may have been given the target's number: dup2 below)
            os.dup2(fd, target, inheritable=True)
            self.files[target] = fd
        sys.stdin = io.TextIOWrapper(
            io.BufferedReader(io.FileIO(0, "r", closefd=False)),
            encoding="utf-8",
            errors="surrogateescape",
        )
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(_CappedRaw(self, 1, "stdout")),
            encoding="utf-8",
            errors="surrogateescape",
        )
        sys.stderr = io.TextIOWrapper(
            io.BufferedWriter(_CappedRaw(self, 2, "stderr")),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
        )
        for name in ("stdin", "stdout", "stderr"):
            setattr(sys, f"__{name}__", getattr(sys, name))
        self.started = time.process_time()
        if isinstance(self.code, dict):
            _channel_record({"event": "syntax_error", **self.code})
            return 1
        module = _module("__main__")
        sys.argv = [SOLUTION_NAME]
        status = 0
        try:
            exec(self.code, module.__dict__)
        except SystemExit as exc:
            status = _exit_code(exc)
        except BaseException as exc:
            status = _report_error(exc, "solution")
        self.finish()
        return status

    def finish(self) -> None:
        """What an interpreter's exit does, for this test: threads joined, handlers run."""
        threading = sys.modules.get("threading")
        if threading is not None:
            for thread in threading.enumerate():
                if thread is not threading.main_thread() and not thread.daemon:
                    try:
                        thread.join()
                    except Exception:
                        pass
        _run_exit_handlers()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass

    def left_behind(self) -> bool:
        """Whether the test changed what the next one would inherit (it then retires)."""
        threading = sys.modules.get("threading")
        if threading is not None and threading.active_count() > 1:
            return True
        if os.environ != self.environ or builtins.__dict__ != self.builtins:
            return True
        try:
            os.chdir(self.cwd)
            sys.setrecursionlimit(self.recursion)
            if self.digits:
                sys.set_int_max_str_digits(self.digits)
        except (OSError, ValueError, RecursionError):
            return True
        gc = sys.modules.get("gc")
        if gc is not None and not gc.isenabled():
            gc.enable()
        if self.memory:
            try:
                with open("/proc/self/statm") as f:
                    resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError):
                return True
            if resident > self.memory * _RUNNER_RSS_SHARE:
                return True
        return False

    def exceeded(self, name: str) -> None:
        """The test wrote more than the cap on ``name``: reply now, and end."""
        self.answer(1, True, exceeded=name)
        os._exit(0)

    def answer(self, status: int, retire: bool, exceeded: str | None = None) -> None:
        out, _ = _file_head(self.files[1], self.cap + 1)
        err, _ = _file_head(self.files[2], self.cap + 1)
        channel, _ = _file_head(self.files[VERDICT_FD], _RUNNER_CHANNEL_MAX)
        header: dict[str, Any] = {
            "exit_code": status & 0xFF,
            "cpu_s": max(0.0, time.process_time() - self.started),
            "stdout_bytes": len(out),
            "stderr_bytes": len(err),
            "channel_bytes": len(channel),
            "retire": retire,
        }
        if exceeded is not None:
            header["output_exceeded"] = exceeded
        self.reply(header, out, err, channel)

    @staticmethod
    def reply(header: dict[str, Any], *blobs: bytes) -> None:
        data = json.dumps(header).encode()
        payload = memoryview(b"".join((struct.pack(">I", len(data)), data, *blobs)))
        try:
            while payload:
                payload = payload[os.write(CALLS_OUT_FD, payload) :]
        except OSError:
            os._exit(1)  # the agent is gone, or the program closed the channel


def _report_error(exc: BaseException, stage: str) -> int:
    record = {
        "event": "error",
        "stage": stage,
        "type": type(exc).__name__,
        "message": str(exc)[:2000] if not isinstance(exc, MemoryError) else "out of memory",
        "traceback": _traceback(exc),
    }
    _channel_record(record)
    try:
        sys.stderr.write(record["traceback"])
        sys.stderr.flush()
    except Exception:
        pass
    return 1


def _serve(config: dict[str, Any], code: types.CodeType | dict[str, Any]) -> int:
    """Load the program as a module, greet the judge with its names, then answer calls."""
    module = _module("solution")
    ns = module.__dict__
    trusted: dict[str, type] = {}
    prelude_values: dict[str, Any] = {}
    prelude = config.get("prelude")
    if prelude:
        before = set(ns)
        exec(compile(prelude, "<prelude>", "exec", dont_inherit=True), ns)
        prelude_values = {k: v for k, v in ns.items() if k not in before}
        trusted = prelude_classes(prelude_values, module.__name__)
    side = _ProgramSide(ns, trusted)
    if isinstance(code, dict):
        _channel_record({"event": "syntax_error", **code})
        send({"hello": {"syntax_error": code}})
        return 1
    try:
        exec(code, ns)
    except SystemExit as exc:
        send({"hello": {"exit": _exit_code(exc)}})
        return 1
    except BaseException as exc:
        _report_error(exc, "solution")
        send({"hello": {"error": _describe_exception(exc, side.codec)}})
        return 1
    # The program's names: what it defined, and what it redefined of the prelude.
    names = {}
    for name, value in list(ns.items()):
        if name.startswith("__") or (name in prelude_values and prelude_values[name] is value):
            continue
        if isinstance(value, type):
            names[name] = "class"
        elif isinstance(value, types.ModuleType):
            # The judge imports the same module itself (its own, untouched copy).
            names[name] = "module:" + str(getattr(value, "__name__", ""))[:200]
        else:
            names[name] = "function" if callable(value) else "value"
    send({"hello": {"names": names, **side.signs()}})
    try:
        while True:
            _serve_one(side, receive())
    except ChannelClosed:
        pass
    _finish_interpreter()
    return 0


# --- the judge's side --------------------------------------------------------------------------


class ProgramGone(BaseException):
    """The program ended (or broke the channel) before the test finished.

    A ``BaseException``: a test's own ``except Exception`` cannot swallow it, and once
    raised the test can never pass (see ``_Judge.gone``).
    """


class OpaqueValueError(TypeError):
    """A test asked for the truth or order of an object of the program's class."""


class _Remote:
    """An object of the program (a function, class, instance, iterator), seen from the judge.

    Calls, attributes, items, length and iteration are asked of the program and answered
    with data. Comparisons and truth are never asked: an object of the program's class
    equals nothing here and has no truth value.
    """

    __slots__ = (
        "__weakref__",
        "_vf_kind",
        "_vf_name",
        "_vf_ref",
        "_vf_suspect",
        "_vf_truth",
        "_vf_type",
    )

    def __init__(
        self,
        ref: dict[str, Any],
        kind: str,
        type_name: str,
        name: str,
        suspect: bool,
        truth: bool | None = None,
    ) -> None:
        object.__setattr__(self, "_vf_truth", truth)
        object.__setattr__(self, "_vf_ref", ref)
        object.__setattr__(self, "_vf_kind", kind)
        object.__setattr__(self, "_vf_type", type_name)
        object.__setattr__(self, "_vf_name", name)
        object.__setattr__(self, "_vf_suspect", suspect)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _JUDGE.request("call", self, args=list(args), kwargs=kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            if name == "__name__" and self._vf_name:
                return self._vf_name
            raise AttributeError(name)
        return _JUDGE.request("getattr", self, name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the tests cannot set attributes of the program's objects")

    def __iter__(self) -> Any:
        if self._vf_kind == "iterator":
            return self
        return _JUDGE.iterate(self)

    def __next__(self) -> Any:
        return _JUDGE.request("next", self)

    def __len__(self) -> int:
        value = _JUDGE.request("len", self)
        if type(value) is not int:
            raise TypeError("len() of the program's object is not an integer")
        return value

    def __getitem__(self, key: Any) -> Any:
        return _JUDGE.request("getitem", self, key=key)

    def __eq__(self, other: object) -> bool:
        _JUDGE.note_opaque(self)
        return False

    def __ne__(self, other: object) -> bool:
        _JUDGE.note_opaque(self)
        return True

    def _refuse(self, *args: Any) -> Any:
        _JUDGE.note_opaque(self)
        raise OpaqueValueError(
            f"an object of the program's class {self._vf_type} has no truth value or order "
            "here (return plain data: numbers, strings, lists, dicts, ...)"
        )

    def __bool__(self) -> bool:
        # Decided by the program when it returned the object (no test data in sight), as if
        # it had returned True or False; an object that had none has no truth here.
        if self._vf_truth is None:
            return bool(self._refuse())
        return bool(self._vf_truth)

    __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        if self._vf_kind in ("function", "class") and self._vf_name:
            return f"<the program's {self._vf_kind} {self._vf_name}>"
        return f"<{self._vf_type} object of the program>"


#: Requests that read a program object's state without calling its methods explicitly.
_READS = frozenset({"getattr", "getitem", "len", "value"})


class _Judge:
    """The judge's end of the channel: requests to the program, callbacks from it."""

    def __init__(self) -> None:
        self.callbacks: list[Any] = []
        self.callback_of: dict[int, int] = {}
        self.remotes: dict[int, _Remote] = {}
        self.trusted: dict[str, type] = {}
        self.codec = Codec(self._keep, self._remote, self._lookup, lambda: self.trusted)
        self.gone: str | None = None
        self.exit_code: Any = None
        self.opaque: list[_Remote] = []
        self.signs: dict[str, Any] = {}
        #: The first assertion of the tests' own code that failed inside a callback: the
        #: program gets it as an exception, and may catch it, but the test has failed.
        self.failed: dict[str, Any] | None = None
        #: Answers to reads (an attribute, an item, a length) since the tests last ran any
        #: of the program's code otherwise (a call, an iteration): a read asked again gets
        #: the same answer. A program object's state changes only when its code runs, so
        #: this is what reading plain data would give; a getter that answered each read
        #: differently (so that ``r[0] + r[1] == s and r[0] * r[1] == p`` held) cannot.
        self.reads: dict[str, dict[str, Any]] = {}
        #: The items of a program object's iteration (as sent), once one ran to its end:
        #: iterated again before the program's code runs otherwise, it gives the same items
        #: (an ``__iter__`` that yielded ``[s]`` for ``sum(r)`` and ``[p]`` for ``prod(r)``
        #: cannot). Kept like ``reads``, but iterating does not forget them.
        self.iterated: dict[str, list[Any]] = {}
        #: For each request in flight, the first assertion of the tests that failed in a
        #: callback it made: raised again in the judge if the program let the error through,
        #: final (``failed``) if the program answered as if nothing had failed.
        self.pending: list[BaseException | None] = []

    def note_signs(self, message: dict[str, Any]) -> None:
        """Keep what the program's side reported as looking like a hack."""
        if isinstance(message.get("tamper"), str):
            self.signs.setdefault("tamper", message["tamper"][:300])
        if isinstance(message.get("suspects"), list) and message["suspects"]:
            self.signs.setdefault("suspects", [str(x)[:200] for x in message["suspects"][:10]])

    def _keep(self, v: Any) -> dict[str, Any] | None:
        if isinstance(v, _Remote):
            ref = v._vf_ref
            if "name" in ref:
                return {"$name": ref["name"], "back": True}
            return {**ref, "back": True}
        if callable(v):
            key = self.callback_of.get(id(v))
            if key is None:
                key = self.callback_of[id(v)] = len(self.callbacks)
                self.callbacks.append(v)
            return {"$callback": key, "name": str(getattr(v, "__name__", "callback"))[:200]}
        return None

    def _remote(self, d: dict[str, Any]) -> Any:
        if "$callback" in d:  # a callback of ours came back
            return self._lookup(d)
        key = d.get("$handle")
        if type(key) is not int:
            raise ValueError("a malformed handle")
        found = self.remotes.get(key)
        if found is None:
            found = self.remotes[key] = _Remote(
                {"$handle": key},
                str(d.get("kind") or "object"),
                str(d.get("type") or "object")[:200],
                str(d.get("name") or "")[:200],
                bool(d.get("suspect")),
                d.get("truth") if type(d.get("truth")) is bool else None,
            )
        return found

    def _lookup(self, d: dict[str, Any]) -> Any:
        if "$callback" in d:
            try:
                return self.callbacks[int(d["$callback"])]
            except (IndexError, TypeError, ValueError):
                raise ValueError("a callback that does not exist") from None
        return self._remote(d)

    def note_opaque(self, remote: _Remote) -> None:
        self.opaque.append(remote)

    def named(self, name: str, kind: str) -> _Remote:
        """A proxy for a top-level name of the program."""
        return _Remote({"name": name}, kind, f"the program's {name}", name, False)

    def request(self, op: str, target: _Remote, raw: list[Any] | None = None, **fields: Any) -> Any:
        """Ask the program (a call, a read, an iteration step); ``raw`` keeps the answer sent."""
        if self.gone is not None:
            raise ProgramGone(self.gone)
        message: dict[str, Any] = {"op": op, "target": target._vf_ref}
        track: dict[int, Any] = {}
        try:
            if "args" in fields:
                message["args"] = self.codec.encode(fields["args"], track)
                message["kwargs"] = self.codec.encode(dict(fields["kwargs"]), track)
            if "name" in fields:
                message["name"] = fields["name"]
            if "key" in fields:
                message["key"] = self.codec.encode(fields["key"], track)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"the test's arguments cannot be sent: {exc}") from None
        read = json.dumps(message, sort_keys=True) if op in _READS else None
        remembered = self.reads.get(read) if read is not None else None
        reply: dict[str, Any] = {}
        failed: BaseException | None = None
        if remembered is not None:
            reply = remembered
        else:
            if read is None:
                self.forget(iterations=op not in ("iter", "next"))
            served = False
            self.pending.append(None)
            try:
                send(message)
                while True:
                    reply = receive()
                    if "op" in reply:
                        served = True
                        self._serve_callback(reply)
                        continue
                    break
            except ChannelClosed as exc:
                self.gone = f"the program ended before the test finished ({exc})"
                raise ProgramGone(self.gone) from None
            finally:
                failed = self.pending.pop()
            if served:
                self.forget()  # the program's code ran around the callbacks
            elif read is not None and "exit" not in reply:
                # Its argument changes are applied once, below; asked again, none come.
                self.reads[read] = {k: v for k, v in reply.items() if k != "sync"}
        if raw is not None and "value" in reply:
            raw.append(reply["value"])
        self.note_signs(reply)
        if "exit" in reply:
            code = reply.get("exit")
            self.gone = f"the program called exit({code}) before the test finished"
            self.exit_code = code
            raise ProgramGone(self.gone)
        error: BaseException | None = None
        value: Any = None
        try:
            for pair in reply.get("sync") or []:
                if type(pair) is not list or len(pair) != 2 or pair[0] not in track:
                    raise ValueError("a malformed change of an argument")
                _sync_state(track[pair[0]], self.codec.decode(pair[1], known=track))
            if "raise" in reply and failed is not None:
                error = failed  # the tests' own assertion, come back through the program
            elif "raise" in reply:
                error = _remote_exception(reply["raise"])
            elif reply.get("stop"):
                # Only the next value of an iterator may end an iteration: a call, an
                # attribute or an item that raised StopIteration would otherwise end the
                # tests' own loop (``all(map(...))``) early, as PEP 479 forbids generators.
                if op == "next":
                    error = StopIteration()
                else:
                    error = RuntimeError(f"the program raised StopIteration (in {op})")
            else:
                value = self.codec.decode(reply.get("value"))
        except (ValueError, TypeError, RecursionError, KeyError) as exc:
            self.gone = f"the program sent a malformed answer ({type(exc).__name__}: {exc})"
            raise ProgramGone(self.gone) from None
        if failed is not None and error is failed:
            raise error
        if failed is not None and self.failed is None:
            # The program caught the tests' failed assertion and answered otherwise.
            self.failed = {
                "event": "fail",
                "message": f"an assertion of the tests failed in a callback: {failed}"[:2000],
            }
            if isinstance(failed, TestFailure):
                self.failed["line"] = failed.line
        if error is not None:
            raise error
        return value

    def forget(self, iterations: bool = True) -> None:
        """The program's code runs: what its objects answered before may have changed."""
        self.reads.clear()
        if iterations:
            self.iterated.clear()

    def iterate(self, target: _Remote) -> Any:
        """An iterator over a program object (not an iterator itself): see ``iterated``."""
        key = json.dumps(target._vf_ref, sort_keys=True)
        items = self.iterated.get(key)
        if items is not None:
            return iter([self.codec.decode(item) for item in items])
        return _Recorded(self, key, self.request("iter", target))

    def _serve_callback(self, message: dict[str, Any]) -> None:
        self.forget()  # the program's code ran up to this call
        try:
            function = self.callbacks[int(message.get("id"))]  # type: ignore[arg-type]
            args = self.codec.decode(message.get("args") or [])
            kwargs = self.codec.decode(message.get("kwargs") or {})
            value = function(*args, **{str(k): v for k, v in kwargs.items()})
            send({"value": self.codec.encode(value)})
        except ProgramGone:
            raise
        except ChannelClosed:
            raise
        except BaseException as exc:
            if (
                isinstance(exc, AssertionError)
                and not isinstance(exc, _RemoteMarker)
                and self.pending
                and self.pending[-1] is None
            ):
                self.pending[-1] = exc
            send({"raise": {"type": type(exc).__name__, "message": str(exc)[:2000]}})
        finally:
            self.forget()  # the program's code runs on from here


class _Recorded:
    """A program object's iteration, its items kept (as sent) until it ends."""

    def __init__(self, judge: _Judge, key: str, live: Any) -> None:
        self.judge, self.key, self.live = judge, key, live
        self.items: list[Any] = []

    def __iter__(self) -> _Recorded:
        return self

    def __next__(self) -> Any:
        try:
            return self.judge.request("next", self.live, raw=self.items)
        except StopIteration:
            self.judge.iterated[self.key] = self.items
            raise


class _RemoteMarker:
    """Exceptions raised again in the judge from the program carry this mixin."""

    vf_traceback = ""


_REMOTE_CLASSES: dict[tuple[str, str, str], type] = {}


def _remote_exception(info: Any) -> BaseException:
    """The program's exception, raised again here with its builtin class (or a subclass of it)."""
    if not isinstance(info, dict):
        info = {}
    name = str(info.get("type") or "Exception")[:200]
    module = str(info.get("module") or "")[:200]
    bases = [b for b in info.get("bases") or [] if isinstance(b, str)]
    base = next(
        (
            getattr(builtins, b)
            for b in bases
            if isinstance(getattr(builtins, b, None), type)
            and issubclass(getattr(builtins, b), Exception)
            and b not in ("StopIteration", "StopAsyncIteration", "GeneratorExit")
        ),
        Exception,
    )
    key = (module, name, base.__name__)
    cls = _REMOTE_CLASSES.get(key)
    if cls is None:
        # The program's ValueError is a ValueError here (and marked as the program's).
        cls = _REMOTE_CLASSES[key] = type(name, (base, _RemoteMarker), {"__module__": module})
    try:
        args = _JUDGE.codec.decode(info.get("args") or [])
        if type(args) is not list:
            args = [str(info.get("message", ""))]
    except (ValueError, RecursionError, TypeError):
        args = [str(info.get("message", ""))]
    try:
        exc: BaseException = cls(*args)
    except Exception:
        exc = cls(str(info.get("message", "")))
    exc.vf_traceback = str(info.get("traceback") or "")[:4000]  # type: ignore[attr-defined]
    return exc


_JUDGE = _Judge()


# --- trusted comparisons (for the failure message) ---------------------------------------------

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
    "Is": operator.is_,
    "IsNot": operator.is_not,
}
_SYMBOLS = {
    "Eq": "==",
    "NotEq": "!=",
    "Lt": "<",
    "LtE": "<=",
    "Gt": ">",
    "GtE": ">=",
    "In": "in",
    "NotIn": "not in",
    "Is": "is",
    "IsNot": "is not",
}
_last_compare: list[str] = []


def _short(value: Any, limit: int = 200) -> str:
    try:
        text = repr(value)
    except Exception:
        text = "<unrepresentable>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compare(ops: tuple[str, ...], left: Any, *rights: Callable[[], Any]) -> bool:
    """A comparison chain of the tests, remembered for the failure message."""
    for op, right_thunk in zip(ops, rights, strict=True):
        right = right_thunk()
        outcome = _OPS[op](left, right)
        _last_compare[:] = [f"{_short(left)} {_SYMBOLS[op]} {_short(right)}"]
        if not outcome:
            return False
        left = right
    return True


class TestFailure(AssertionError):
    """An assert of the tests failed (a wrong answer, not a crash)."""

    __test__ = False

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def fail(line: int, source: str, message: Any = None) -> TestFailure:
    detail = f"assertion failed: {source}"
    if _last_compare:
        detail += f" (compared {_last_compare[0]})"
    if message is not None:
        detail += f": {_short(message, 500)}"
    _last_compare.clear()
    return TestFailure(detail, line)


#: A line and its end, as ``ast.get_source_segment`` splits source (not at form feeds).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _source_lines(source: str) -> list[str]:
    """The source's lines with their ends, as ``ast.get_source_segment`` sees them.

    The standard library splits the whole source character by character on every call,
    which made rewriting a test's asserts quadratic (2 ms for a HumanEval test); the lines
    are split once here instead.
    """
    return _LINE.findall(source)


def _segment(lines: list[str], node: ast.AST) -> str | None:
    """``ast.get_source_segment`` over lines split once (column offsets are UTF-8 bytes)."""
    start: int | None = getattr(node, "lineno", None)
    end: int | None = getattr(node, "end_lineno", None)
    col: int | None = getattr(node, "col_offset", None)
    end_col: int | None = getattr(node, "end_col_offset", None)
    if start is None or end is None or col is None or end_col is None or end > len(lines):
        return None
    if start == end:
        return lines[start - 1].encode()[col:end_col].decode()
    first = lines[start - 1].encode()[col:].decode()
    last = lines[end - 1].encode()[:end_col].decode()
    return "".join([first, *lines[start : end - 1], last])


def _call(name: str, at: dict[str, Any], *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load(), **at), list(args), [], **at)


def _where(node: ast.AST) -> dict[str, Any]:
    """A node's location, given to the nodes that replace it (no tree-wide location pass)."""
    return {
        "lineno": node.lineno,  # type: ignore[attr-defined]
        "col_offset": node.col_offset,  # type: ignore[attr-defined]
        "end_lineno": node.end_lineno,  # type: ignore[attr-defined]
        "end_col_offset": node.end_col_offset,  # type: ignore[attr-defined]
    }


def _no_arguments() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


class _Rewriter:
    """Asserts and comparisons of the tests report what they compared.

    A walk of its own rather than ``ast.NodeTransformer`` (and new nodes located as they are
    made rather than by ``ast.fix_missing_locations``): those walk every field of every node
    in Python, most of a test's preparation (about 2 ms of a HumanEval test's 3.7).
    """

    def __init__(self, source: str) -> None:
        self.lines = _source_lines(source)

    def visit(self, node: ast.Module) -> ast.Module:
        """The module, rewritten in place."""
        self._children(node)
        return node

    def _visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Assert):
            return self._assert(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        self._children(node)
        return node

    def _children(self, node: ast.AST) -> None:
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        value[i] = self._visit(item)
            elif isinstance(value, ast.AST):
                setattr(node, field, self._visit(value))

    def _compare(self, node: ast.Compare) -> ast.AST:
        self._children(node)
        at = _where(node)
        ops = ast.Tuple(
            [ast.Constant(type(op).__name__, **at) for op in node.ops], ast.Load(), **at
        )
        thunks = [ast.Lambda(_no_arguments(), c, **at) for c in node.comparators]
        return _call("__vf_compare__", at, ops, node.left, *thunks)

    def _assert(self, node: ast.Assert) -> ast.AST:
        source = _segment(self.lines, node.test) or "<condition>"
        self._children(node)
        at = _where(node)
        failure = _call(
            "__vf_fail__",
            at,
            ast.Constant(node.lineno, **at),
            ast.Constant(source[:300], **at),
            node.msg or ast.Constant(None, **at),
        )
        raise_ = ast.Raise(failure, None, **at)
        return ast.If(ast.UnaryOp(ast.Not(), node.test, **at), [raise_], [], **at)


HELPERS = {"__vf_compare__": compare, "__vf_fail__": fail}


class PreparedTests:
    """The tests of a case, compiled once, and the names they read but do not define."""

    def __init__(self, test_source: str, prelude: str, prompt: str) -> None:
        tree = ast.parse(test_source, "<tests>")
        # These read the tree as written: before the rewriter changes it.
        self.free, self.modules = _name_uses(tree)
        _under_test(test_source, tree)
        rewritten = _Rewriter(test_source).visit(tree)
        self.test_code = compile(rewritten, "<tests>", "exec")
        self.prelude_code = compile(prelude, "<prelude>", "exec") if prelude else None
        self.prompt_code: types.CodeType | None = None
        if prompt:
            try:
                self.prompt_code = compile(prompt, "<prompt>", "exec")
            except (SyntaxError, ValueError):
                self.prompt_code = None


def _name_uses(tree: ast.AST) -> tuple[set[str], set[str]]:
    """``(free, modules)`` of :func:`_free_names` and :func:`_module_names`, in one walk."""
    used: set[str] = set()
    defined: set[str] = set()
    bases: set[str] = set()
    other: set[str] = set()
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store | ast.Del) else used).add(node.id)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                bases.add(node.value.id)
        elif isinstance(node, ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            if not isinstance(node, ast.Lambda):
                defined.add(node.name)
            defined.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, ast.alias):
            defined.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
        attribute_base = node.value if isinstance(node, ast.Attribute) else None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and child is not attribute_base:
                other.add(child.id)
            todo.append(child)
    return used - defined, bases - other


def _free_names(tree: ast.AST) -> set[str]:
    """Names the code reads without binding them anywhere (definitions, assignments, imports)."""
    return _name_uses(tree)[0]


def _module_names(tree: ast.AST) -> set[str]:
    """Names the code uses only as ``name.attribute``: never called, assigned or passed on."""
    return _name_uses(tree)[1]


def _called(node: ast.AST) -> set[str]:
    """Names called as functions anywhere under ``node`` (``f(x)``, not ``obj.f(x)``)."""
    return {
        n.func.id
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }


_UNDER_TEST: dict[str, frozenset[str]] = {}


def _under_test(source: str, tree: ast.AST | None = None) -> frozenset[str]:
    """The names an assert-style task tests when its function is named like a builtin.

    They are the names every assert calls (the task's function; a helper such as ``abs`` or
    ``set`` wraps some asserts only), and of those, the ones whose calls take no call of
    another such name as an argument: in ``assert abs(max(xs) - 1.5) < 1e-9`` that is
    ``max``, never ``abs``, whose result alone would decide the assert. ``tree`` is the
    source parsed already, if it is.
    """
    found = _UNDER_TEST.get(source)
    if found is not None:
        return found
    try:
        tree = ast.parse(source) if tree is None else tree
        asserts = [n for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    except (SyntaxError, ValueError, RecursionError):
        asserts = []
    common = set.intersection(*(_called(a.test) for a in asserts)) if asserts else set()
    inner = set(common)
    for a in asserts:
        for n in ast.walk(a.test):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in common:
                inside = set().union(*(_called(x) for x in [*n.args, *n.keywords]))
                if inside & (common - {n.func.id}):
                    inner.discard(n.func.id)
    found = frozenset(inner)
    if len(_UNDER_TEST) >= 1024:
        _UNDER_TEST.clear()
    _UNDER_TEST[source] = found
    return found


# Compiled tests by source. The agent fills it before forking judges (see ``judge_prepare``),
# so every test of a program, and every program with the same tests, shares one compilation.
_PREPARED: dict[tuple[str, str, str], PreparedTests] = {}


def _prepared(test_source: str, prelude: str, prompt: str) -> PreparedTests:
    key = (test_source, prelude, prompt)
    prepared = _PREPARED.get(key)
    if prepared is None:
        prepared = PreparedTests(test_source, prelude, prompt)
        if len(_PREPARED) >= 1024:
            _PREPARED.clear()
        _PREPARED[key] = prepared
    return prepared


#: The tests' spec, parsed once in the supervisor (``judge_prepare``) by its file's bytes.
_SPECS: dict[bytes, dict[str, Any]] = {}


def _judge_spec() -> dict[str, Any]:
    raw = JUDGE_FILES["spec.json"]
    spec = _SPECS.get(raw)
    if spec is None:
        spec = json.loads(raw)
        _SPECS.clear()
        _SPECS[raw] = spec
    return spec


def _judge_case(offset: int, length: int) -> Any:
    return json.loads(JUDGE_FILES["cases.bin"][offset : offset + length]) if length else None


def _assert_source(spec: dict[str, Any], case: Any) -> tuple[str, str, str]:
    test_source = case if isinstance(case, str) else spec["test"]
    entry_point = spec.get("entry_point")
    if entry_point:
        test_source = f"{test_source}\n\ncheck({entry_point})\n"
    return test_source, spec.get("prelude") or "", spec.get("prompt") or ""


def judge_prepare(argv: list[str]) -> int:
    """Compile every test of a program once, in the supervisor, before judges are forked."""
    spec = _judge_spec()
    if spec.get("mode") != "assert":
        return 0
    bounds = [int(a) for a in argv]
    for offset, length in zip(bounds[::2], bounds[1::2], strict=False):
        try:
            source = _assert_source(spec, _judge_case(offset, length))
            _prepared(*source)
            _under_test(spec.get("tested") or source[0])
        except SyntaxError:
            pass
    return 0


def _hello() -> dict[str, Any]:
    """The program's first message: the names it defines, or why it could not load."""
    try:
        message = receive()
    except ChannelClosed as exc:
        return {"gone": f"the program ended before the test started ({exc})"}
    hello = message.get("hello")
    return hello if isinstance(hello, dict) else {"gone": "the program sent no greeting"}


def _load_failure(hello: dict[str, Any]) -> dict[str, Any] | None:
    """The verdict of a program that did not load, or None when it did."""
    if "gone" in hello:
        return {"event": "ended", "stage": "solution", "message": str(hello["gone"])}
    if "syntax_error" in hello:
        info = hello["syntax_error"] if isinstance(hello["syntax_error"], dict) else {}
        return {
            "event": "syntax_error",
            **{k: info.get(k) for k in ("message", "line", "column", "text", "native")},
        }
    if "exit" in hello:
        return {"event": "exit", "code": hello["exit"], "stage": "solution"}
    if "error" in hello:
        info = hello["error"] if isinstance(hello["error"], dict) else {}
        return {
            "event": "error",
            "stage": "solution",
            "type": str(info.get("type", "Error"))[:200],
            "message": str(info.get("message", ""))[:2000],
            "traceback": str(info.get("traceback", ""))[:4000],
            "remote": True,
        }
    return None


def _program_names(hello: dict[str, Any]) -> dict[str, str]:
    names = hello.get("names")
    if not isinstance(names, dict):
        return {}
    return {str(k): str(v) for k, v in list(names.items())[:100_000] if isinstance(k, str)}


def judge_main(argv: list[str]) -> int:
    """The judge's side of one test: ``[offset, length]`` of its case in ``cases.bin``."""
    global _JUDGE
    # A judge process serves one test after another (the agent keeps it between them, and
    # between programs): each starts with nothing of the one before.
    _JUDGE = _Judge()
    _REMOTE_CLASSES.clear()
    _last_compare.clear()
    spec = _judge_spec()
    case = _judge_case(int(argv[0]), int(argv[1]))
    mode = spec["mode"]
    try:
        if mode == "assert":
            record = _judge_assert(spec, case)
        else:
            # The most values a returned value may hold (the host's bound: more than the
            # expected value could hold, which no answer holding more can equal).
            nodes = min(int(argv[2]), MAX_NODES) if len(argv) > 2 else MAX_NODES
            record = _judge_value(spec, case, mode, nodes)
    except ProgramGone:
        record = _gone_record()
    if _JUDGE.gone is not None and record.get("event") == "pass":
        record = _gone_record()  # the test swallowed the program's end: never a pass
    if _JUDGE.failed is not None and record.get("event") in ("pass", "return", "error"):
        # An assertion of the tests failed first: whether the program caught it (a pass
        # would be forged) or it ended the test as the program's error, the test failed.
        record = _JUDGE.failed
    emit(record)
    return 0


def _gone_record() -> dict[str, Any]:
    if _JUDGE.exit_code is not None:
        return {"event": "exit", "code": _JUDGE.exit_code, "stage": "call"}
    return {"event": "ended", "stage": "call", "message": _JUDGE.gone or "the program ended"}


def _error_record(exc: BaseException, stage: str) -> dict[str, Any]:
    remote = isinstance(exc, _RemoteMarker)
    if remote:
        text = getattr(exc, "vf_traceback", "") or f"{type(exc).__name__}: {exc}"
    else:
        text = _traceback(exc)
    return {
        "event": "error",
        "stage": stage,
        "type": type(exc).__name__,
        "message": str(exc)[:2000],
        "traceback": text[-4000:],
        "remote": remote,
        "opaque": _opaque_hack(),
    }


def _opaque_hack() -> str:
    """Why a failed test looks like an attempt at a hack (empty when it does not)."""
    if _JUDGE.signs.get("tamper"):
        return str(_JUDGE.signs["tamper"])
    suspects = [r._vf_type for r in _JUDGE.opaque if r._vf_suspect]
    suspects += list(_JUDGE.signs.get("suspects") or [])
    if suspects:
        return (
            f"the program answered with a value of its class {suspects[0]}, "
            "which defines its own comparison or truth methods"
        )
    return ""


def _judge_assert(spec: dict[str, Any], case: Any) -> dict[str, Any]:
    test_source, prelude, prompt = _assert_source(spec, case)
    try:
        prepared = _prepared(test_source, prelude, prompt)
    except SyntaxError as exc:
        return {
            "event": "error",
            "stage": "tests",
            "type": "SyntaxError",
            "message": f"the tests do not compile: {exc}",
            "traceback": "",
        }
    hello = _hello()
    failure = _load_failure(hello)
    if failure is not None:
        return failure
    names = _program_names(hello)
    _JUDGE.note_signs(hello)
    # The tests run as the judge's __main__, as a test script run by itself would:
    # ``if __name__ == "__main__": unittest.main()`` runs them, and unittest.main() finds
    # their TestCase classes (under another name it ran no test and exited 0, a pass).
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    sys.argv = ["tests"]  # the agent's own arguments are none of the tests' business
    ns: dict[str, Any] = main.__dict__
    ns["__builtins__"] = builtins
    if prepared.prelude_code is not None:
        exec(prepared.prelude_code, ns)
        _JUDGE.trusted = prelude_classes(ns, "__main__")
    trusted_names = set(ns)
    entry_point = spec.get("entry_point")
    if prepared.prompt_code is not None:
        try:
            exec(prepared.prompt_code, ns)
        except Exception:
            pass
        trusted_names = set(ns) - {entry_point}
    under_test = _under_test(spec.get("tested") or test_source)
    allowed = frozenset(spec.get("importable") or ())
    for name in _proxied(prepared.free, names, trusted_names, entry_point, under_test):
        ns[name] = _binding(name, names[name], prepared.modules, allowed)
    ns.update(HELPERS)
    try:
        exec(prepared.test_code, ns)
    except TestFailure as exc:
        return {
            "event": "fail",
            "line": exc.line,
            "message": str(exc)[:2000],
            "hack": _opaque_hack(),
        }
    except OpaqueValueError as exc:
        return {"event": "fail", "message": str(exc)[:2000], "hack": _opaque_hack()}
    except SystemExit as exc:
        # Trusted test code ending the interpreter (unittest.main): its status is the verdict.
        if _exit_code(exc) == 0:
            return {"event": "pass"}
        return {"event": "fail", "message": f"the tests exited with status {_exit_code(exc)}"}
    except ProgramGone:
        raise
    except BaseException as exc:
        return _error_record(exc, "tests")
    return {"event": "pass"}


def _proxied(
    free: set[str],
    names: dict[str, str],
    trusted: set[str],
    entry_point: Any,
    under_test: frozenset[str],
) -> list[str]:
    """The program's names the tests use: read by them, defined by the program, not trusted.

    Trusted definitions (the prelude, the prompt) win. A name that is also a builtin is the
    program's only as the entry point, or, in a task without one whose tests call no other
    name of the program, as the function under test (MBPP's ``sum``: see ``_under_test``).
    Every other builtin the tests use stays the real one: a program's ``abs`` returning 0
    would otherwise decide ``assert abs(f(x) - y) < 1e-6``.
    """
    wanted = {n for n in free if n in names and n not in trusted}
    plain = {n for n in wanted if not hasattr(builtins, n)}
    if isinstance(entry_point, str) and entry_point:
        return sorted(plain | ({entry_point} if entry_point in names else set()))
    if plain:
        return sorted(plain)
    return sorted(n for n in wanted if n in under_test and names[n] in ("function", "class"))


def _importable(module: str, allowed: frozenset[str]) -> bool:
    """Whether the judge may import ``module`` because the program says it imported it.

    The program names the module, so its name decides nothing alone: only a module the
    language offers programs (``allowed``: the standard library's usual modules and the
    offered packages, none of which runs anything when imported) or a public submodule of
    one. ``unittest.__main__``, a private module, or any other name was a way to make the
    judge run code of the program's choosing (unittest's discovery imported a file the
    program wrote into its working directory).
    """
    parts = module.split(".")
    return (
        parts[0] in allowed
        and all(p.isidentifier() and not p.startswith("_") for p in parts)
        and len(parts) <= 3
    )


def _binding(name: str, kind: str, modules: set[str], allowed: frozenset[str]) -> Any:
    """What a name of the program is in the tests' namespace.

    A function or class: a proxy that calls the program. A module the program imported (one
    the language offers, see :func:`_importable`), or a standard-library module's name that
    the tests use as a module (``math.isclose``, whatever the program bound to it): the
    judge's own import of that module (real, untouched). Any other value: its data, fetched
    once.
    """
    module = ""
    if name in modules and name in getattr(sys, "stdlib_module_names", ()):
        module = name  # the tests' own text names it
    elif kind.startswith("module:") and _importable(kind.partition(":")[2], allowed):
        module = kind.partition(":")[2]
    elif kind.startswith("module:"):
        return _JUDGE.named(name, "value")
    if module:
        import importlib

        try:
            return importlib.import_module(module)
        except Exception:
            return _JUDGE.named(name, "value")
    remote = _JUDGE.named(name, kind)
    if kind == "value":
        return _JUDGE.request("value", remote)
    return remote


def _judge_value(
    spec: dict[str, Any], case: Any, mode: str, nodes: int = MAX_NODES
) -> dict[str, Any]:
    hello = _hello()
    failure = _load_failure(hello)
    if failure is not None:
        return failure
    names = _program_names(hello)
    try:
        if mode == "call":
            name = spec["fn_name"]
            if names.get(name) in ("function", "class", "value"):
                target: Any = _JUDGE.named(name, names[name])
            elif names.get("Solution") == "class":
                target = getattr(_JUDGE.named("Solution", "class")(), name)
            else:
                return {
                    "event": "error",
                    "stage": "solution",
                    "type": "NameError",
                    "message": f"function {name!r} is not defined (neither top-level nor a "
                    "method of class Solution)",
                    "traceback": "",
                }
            value = target(*case)
        else:
            ns: dict[str, Any] = {"__builtins__": builtins}
            tree = ast.parse(case)
            free, modules = _name_uses(tree)
            allowed = frozenset(spec.get("importable") or ())
            for name in _proxied(free, names, set(), None, _under_test(f"assert {case}")):
                ns[name] = _binding(name, names[name], modules, allowed)
            value = eval(compile(case, "<test>", "eval"), ns)
    except ProgramGone:
        raise
    except BaseException as exc:
        return _error_record(exc, "call")
    try:
        encoded = _host_value(value, nodes)
    except _TooLarge:
        # A wrong answer, told without sending it: the host's work stays the expected
        # value's size, whatever the program returned (a list of one row a million times).
        return {
            "event": "return",
            "too_large": nodes,
            "shown": _brief(value),
            "hack": _opaque_hack(),
        }
    except (ValueError, RecursionError) as exc:
        return {"event": "error", "stage": "value", "type": "ValueError", "message": str(exc)}
    return {"event": "return", "value": encoded, "hack": _opaque_hack()}


class _TooLarge(ValueError):
    """A returned value holds more values than the host's bound."""


def _brief(value: Any) -> str:
    """A short description of a value of any size (its first items, a few levels deep)."""
    import reprlib  # here: the zygote, whose size every fork pays for, never needs it

    brief = reprlib.Repr()
    brief.maxlevel, brief.maxstring, brief.maxother = 3, 80, 80
    brief.maxlist = brief.maxtuple = brief.maxdict = brief.maxset = brief.maxfrozenset = 6
    try:
        return brief.repr(value)[:300]
    except Exception:
        return f"<a {type(value).__name__}>"


def _host_value(value: Any, nodes: int = MAX_NODES) -> Any:
    """A returned value in the host's tagged form (see ``verifiers.compare.decode_value``)."""
    budget = [nodes]
    return _to_host(value, budget, 0, set())


def _to_host(v: Any, budget: list[int], depth: int, active: set[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge("the value holds more values than the expected one could")
    if depth > MAX_DEPTH:
        raise ValueError("the value is too deeply nested to compare")
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -(2**53) < v < 2**53 else {"$int": hex(v)}
    if t is float:
        if math.isfinite(v):
            return v
        return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if t is bytes or t is bytearray:
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if t is complex:
        return {"$complex": [_to_host(x, budget, depth, active) for x in (v.real, v.imag)]}

    def each(items: Any) -> list[Any]:
        if id(v) in active:
            raise ValueError("the value contains itself")
        inner = active | {id(v)}
        return [_to_host(x, budget, depth + 1, inner) for x in items]

    if t is list or t is range or t.__name__ == "deque":
        return each(v)
    if isinstance(v, tuple):
        return {"$tuple": each(v)}
    if isinstance(v, dict):
        return {"$dict": [each(pair) for pair in list(v.items())]}
    if t is set or t is frozenset:
        return {"$set" if t is set else "$frozenset": each(v)}
    np = _numpy()
    if np is not None and isinstance(v, (np.ndarray, np.generic)):
        plain = v.tolist() if isinstance(v, np.ndarray) else v.item()
        return _to_host(plain, budget, depth + 1, active)
    if t.__module__ in ("decimal", "fractions") and t.__name__ in ("Decimal", "Fraction"):
        # Exact when whole (an integer past any float keeps its digits), else the nearest
        # float: as exact as an expected value that came from JSON.
        try:
            if v == int(v):
                return _to_host(int(v), budget, depth, active)
        except (ValueError, OverflowError, ArithmeticError):
            pass
        try:
            return _to_host(float(v), budget, depth, active)
        except OverflowError:  # a fraction past every float: equal to no expected value
            return {"$object": f"{t.__module__}.{t.__name__}", "repr": "<too large>"}
    if isinstance(v, _Remote):
        return {"$object": v._vf_type, "repr": repr(v)[:200]}
    if isinstance(v, Opaque):
        return {"$object": v.type_name, "repr": repr(v)[:200]}
    return {"$object": f"{t.__module__}.{t.__qualname__}", "repr": object.__repr__(v)[:200]}


# --- the program's side as a script (an interpreter per test, no zygote) ----------------------

if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape")
    sys.exit(candidate_main(sys.argv[1:]))
