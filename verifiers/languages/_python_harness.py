"""Python test harness: runs one test of a candidate program inside the sandbox.

Stdlib only (it runs on the sandbox's interpreter). Called as
``main([program_dir, offset, length])``, either in a child forked from the
sandbox agent or as a script. It reads ``spec.json`` (the test style) and its
own case from ``cases.bin`` (bytes ``offset:offset+length``), then:

* ``stdio``: runs ``solution.py`` as ``__main__``; stdout is judged outside.
* ``call`` / ``expression``: runs the solution as a module, calls the function or
  evaluates the expression, and writes the value as tagged JSON on the result
  channel (fd 3). The value is compared outside the sandbox, so an object with
  a forged ``__eq__`` cannot pass.
* ``assert``: runs trusted prelude, the solution, then the test code, whose AST
  is rewritten so that every comparison and every assert accepts only plain
  data (builtins, numpy values, classes defined by the tests): an object that
  claims equality with everything fails. Builtins, the modules the tests
  import and tracing hooks are checked for tampering. The test passes only if
  the harness reaches its end and echoes the nonce the sandbox offers on fd 4
  after the program started, so ``exit(0)`` or ``os._exit(0)`` before the
  asserts can never pass.

Records are JSON lines on fd 3 with an ``event`` key.
"""

from __future__ import annotations

import ast
import base64
import builtins
import io
import json
import math
import operator
import os
import sys
import traceback
import types
import warnings
from collections.abc import Callable
from typing import Any

CHANNEL_FD = 3
NONCE_FD = 4
SOLUTION_NAME = "solution.py"
HARNESS_FILE = os.path.abspath(__file__)

#: The program's files by absolute path when a warm sandbox keeps them in memory (the
#: sandbox agent sets this after loading the harness); otherwise they are on disk.
PROGRAM_FILES: dict[str, bytes] = {}


def program_file(directory: str, name: str) -> bytes:
    path = os.path.join(directory, name)
    data = PROGRAM_FILES.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    return data


MAX_NODES = 5_000_000


class TestFailure(AssertionError):
    """An assert of the tests failed (a wrong answer, not a crash)."""

    __test__ = False

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class Untrusted(TestFailure):
    """The tests compared a value that is not plain data."""


# --- channel ---------------------------------------------------------------------------------


def emit(record: dict[str, Any]) -> None:
    data = (json.dumps(record, default=repr) + "\n").encode("utf-8", errors="surrogatepass")
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(CHANNEL_FD, view) :]
    except OSError:
        pass


def take_nonce() -> str:
    """The sandbox's nonce, read before any of the program runs; its descriptor is closed.

    The program never gets the descriptor, so it cannot forge a pass record with it
    (``os.read(4)`` then a record on fd 3 used to be enough).
    """
    chunks = []
    try:
        while True:
            chunk = os.read(NONCE_FD, 64)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return ""
    finally:
        try:
            os.close(NONCE_FD)
        except OSError:
            pass
    return b"".join(chunks).decode(errors="replace")


# --- values ----------------------------------------------------------------------------------

_NUMPY_TYPES: frozenset[type] | None = None


def _numpy_types() -> frozenset[type]:
    global _NUMPY_TYPES
    if _NUMPY_TYPES is None:
        np = sys.modules.get("numpy")
        if np is None:
            return frozenset()
        found: set[type] = {np.ndarray}
        for value in vars(np).values():
            if isinstance(value, type) and issubclass(value, np.generic):
                found.add(value)
        _NUMPY_TYPES = frozenset(found)
    return _NUMPY_TYPES


def encode(value: Any) -> Any:
    budget = [MAX_NODES]
    return _encode(value, budget, 0)


_ENCODABLE = (bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset)


def _encode(v: Any, budget: list[int], depth: int) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > 400:
        raise ValueError("the value is too large or too deeply nested to compare")
    t = type(v)
    if _is_python_class(t) and isinstance(v, _ENCODABLE) and _clean_class(t):
        # A subclass that overrides nothing (a namedtuple, say) is its base type's data.
        t = next(base for base in t.__mro__ if base in _ENCODABLE)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -(2**53) < v < 2**53 else {"$int": hex(v)}
    if t is float:
        if math.isfinite(v):
            return v
        return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if t is list:
        return [_encode(x, budget, depth + 1) for x in list.__iter__(v)]
    if t is tuple:
        return {"$tuple": [_encode(x, budget, depth + 1) for x in tuple.__iter__(v)]}
    if t is dict:
        pairs = dict.items(v)
        return {
            "$dict": [
                [_encode(k, budget, depth + 1), _encode(x, budget, depth + 1)] for k, x in pairs
            ]
        }
    if t is set or t is frozenset:
        tag = "$set" if t is set else "$frozenset"
        return {tag: [_encode(x, budget, depth + 1) for x in t.__iter__(v)]}
    if t is bytes or t is bytearray:
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if t is complex:
        return {"$complex": [_encode(v.real, budget, depth), _encode(v.imag, budget, depth)]}
    if t in _numpy_types():
        if t.__name__ == "ndarray":
            if v.dtype.kind == "O" and unsafe_type(v) is not None:
                return _opaque(v)
            return _encode(v.tolist(), budget, depth + 1)
        return _encode(v.item(), budget, depth + 1)
    if t.__module__ in ("decimal", "fractions") and t.__name__ in ("Decimal", "Fraction"):
        return _encode(float(v), budget, depth)
    return _opaque(v)


def _opaque(v: Any) -> dict[str, str]:
    t = type(v)
    try:
        text = object.__repr__(v)
    except Exception:
        text = "<unrepresentable>"
    return {"$object": f"{t.__module__}.{t.__qualname__}", "repr": text[:200]}


# --- trusted comparisons ---------------------------------------------------------------------
#
# Test code is trusted; values that come from the program are not. A value is
# *safe* when its behaviour in comparisons, truth tests and arithmetic cannot
# have been written by the program: instances of C-implemented (static) types
# such as int, str, list, dict, re.Match, generators and numpy arrays (Python
# code cannot create or change such a type), whose contents are
# checked recursively; instances of classes without any of those special
# methods (a plain class, a namedtuple, a list subclass that overrides
# nothing); a few standard-library classes; and classes defined by the tests.
# The rewritten test code refuses unsafe values in comparisons, asserts and
# other truth tests, boolean and arithmetic operators and numeric built-ins,
# so a "universal" answer (equal to everything, truthy, 0 after subtraction)
# fails instead of passing.

_HEAPTYPE = 1 << 9
_IMMUTABLETYPE = 1 << 8  # set on C extension types since 3.10; never on a class statement's type
_CONTAINERS = (list, tuple, set, frozenset, dict)
_SENSITIVE = frozenset(
    [
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__bool__",
        "__len__",
        "__contains__",
        "__iter__",
        "__getitem__",
        "__getattr__",
        "__getattribute__",
        "__add__",
        "__radd__",
        "__sub__",
        "__rsub__",
        "__mul__",
        "__rmul__",
        "__truediv__",
        "__rtruediv__",
        "__floordiv__",
        "__rfloordiv__",
        "__mod__",
        "__rmod__",
        "__pow__",
        "__rpow__",
        "__divmod__",
        "__rdivmod__",
        "__matmul__",
        "__rmatmul__",
        "__neg__",
        "__pos__",
        "__abs__",
        "__invert__",
        "__round__",
        "__trunc__",
        "__floor__",
        "__ceil__",
        "__float__",
        "__int__",
        "__index__",
        "__complex__",
        "__and__",
        "__rand__",
        "__or__",
        "__ror__",
        "__xor__",
        "__rxor__",
        "__lshift__",
        "__rlshift__",
        "__rshift__",
        "__rrshift__",
    ]
)
_TRUSTED_CLASSES: set[type] = set()


def _stdlib_trusted() -> None:
    import collections
    import fractions

    _TRUSTED_CLASSES.update({collections.Counter, fractions.Fraction})


_stdlib_trusted()


def trust(cls: Any) -> Any:
    """Class decorator injected into trusted code: instances of ``cls`` are safe."""
    if isinstance(cls, type):
        _TRUSTED_CLASSES.add(cls)
    return cls


def _is_python_class(t: type) -> bool:
    """Whether Python code created ``t`` (a class statement), as opposed to C code."""
    return bool(t.__flags__ & _HEAPTYPE) and not t.__flags__ & _IMMUTABLETYPE


def _clean_class(t: type) -> bool:
    """A class that defines none of the special methods comparisons use."""
    for klass in t.__mro__:
        if not _is_python_class(klass):
            return True
        if klass in _TRUSTED_CLASSES:
            return True
        if not _SENSITIVE.isdisjoint(vars(klass)):
            return False
    return True


def _children(v: Any) -> Any:
    """Contents of a container, read the way the C comparison code reads them."""
    if isinstance(v, dict):
        return [*dict.keys(v), *dict.values(v)]
    if isinstance(v, list):
        return list.__iter__(v)
    if isinstance(v, tuple):
        return tuple.__iter__(v)
    if isinstance(v, set):
        return set.__iter__(v)
    if isinstance(v, frozenset):
        return frozenset.__iter__(v)
    return ()


def unsafe_type(value: Any) -> type | None:
    """The first type inside ``value`` that could forge a comparison, or None."""
    stack = [value]
    seen: set[int] = set()
    nodes = 0
    while stack:
        v = stack.pop()
        t = type(v)
        if t is int or t is str or t is float or t is bool or v is None:
            continue
        if _is_python_class(t) and t not in _TRUSTED_CLASSES and not _clean_class(t):
            return t
        if isinstance(v, _CONTAINERS) or (t.__name__ == "ndarray" and v.dtype.kind == "O"):
            if id(v) in seen:
                continue
            seen.add(id(v))
            items = list(v.flat) if t.__name__ == "ndarray" else list(_children(v))
            nodes += len(items)
            if nodes > MAX_NODES:
                return t
            stack.extend(items)
    return None


def _short(value: Any, limit: int = 200) -> str:
    try:
        text = repr(value) if unsafe_type(value) is None else object.__repr__(value)
    except Exception:
        text = "<unrepresentable>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refuse(line: int, bad: type, what: str) -> Untrusted:
    return Untrusted(
        f"the tests {what} a {bad.__module__}.{bad.__qualname__} object, whose class "
        "overrides comparison or arithmetic methods (it could claim any answer)",
        line,
    )


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


def compare(line: int, ops: tuple[str, ...], left: Any, *rights: Callable[[], Any]) -> bool:
    """A comparison chain of the tests, evaluated only on safe values."""
    for op, right_thunk in zip(ops, rights, strict=True):
        right = right_thunk()
        if op not in ("Is", "IsNot"):
            for side in (left, right):
                bad = unsafe_type(side)
                if bad is not None:
                    raise _refuse(line, bad, "compared")
        outcome = _OPS[op](left, right)
        if type(outcome) is not bool:
            # numpy comparisons give arrays or numpy bools: their truth is computed by numpy.
            outcome = bool(outcome) if unsafe_type(outcome) is None else False
        _last_compare[:] = [f"{_short(left)} {_SYMBOLS[op]} {_short(right)}"]
        if not outcome:
            return False
        left = right
    return True


def truth(line: int, value: Any) -> bool:
    """The truth of a condition of the tests, accepted only from a safe value."""
    if type(value) is bool:
        return value
    bad = unsafe_type(value)
    if bad is not None:
        raise _refuse(line, bad, "tested the truth of")
    return bool(value)


def safe(line: int, value: Any) -> Any:
    """``value`` itself, after checking it is safe (operands of arithmetic and built-ins)."""
    t = type(value)
    if t is int or t is float or t is str or t is bool:
        return value
    bad = unsafe_type(value)
    if bad is not None:
        raise _refuse(line, bad, "computed with")
    return value


def fail(line: int, source: str, message: Any = None) -> TestFailure:
    detail = f"assertion failed: {source}"
    if _last_compare:
        detail += f" (compared {_last_compare[0]})"
    if message is not None:
        detail += f": {_short(message, 500)}"
    _last_compare.clear()
    return TestFailure(detail, line)


#: Built-ins whose result comes from the argument's special methods.
_NUMERIC_CALLS = frozenset({"abs", "round", "float", "int", "complex", "divmod", "pow"})


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


class _Rewriter(ast.NodeTransformer):
    """Routes comparisons, truth tests and arithmetic of trusted code through the checks."""

    def __init__(self, source: str) -> None:
        self.source = source

    def _truth(self, node: ast.expr) -> ast.expr:
        return ast.copy_location(_call("__vf_truth__", ast.Constant(node.lineno), node), node)

    def _safe(self, node: ast.expr) -> ast.expr:
        return ast.copy_location(_call("__vf_safe__", ast.Constant(node.lineno), node), node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        node.decorator_list.append(ast.Name(id="__vf_trust__", ctx=ast.Load()))
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        ops = ast.Tuple(elts=[ast.Constant(type(op).__name__) for op in node.ops], ctx=ast.Load())
        thunks = [
            ast.Lambda(
                args=ast.arguments(
                    posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]
                ),
                body=c,
            )
            for c in node.comparators
        ]
        call = _call("__vf_compare__", ast.Constant(node.lineno), ops, node.left, *thunks)
        return ast.copy_location(call, node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        node.left = self._safe(node.left)
        node.right = self._safe(node.right)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = self._truth(node.operand)
        else:
            node.operand = self._safe(node.operand)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        node.values = [self._safe(v) for v in node.values]
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        node.test = self._truth(node.test)
        return node

    visit_While = visit_If  # type: ignore[assignment]

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        node.test = self._truth(node.test)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        numeric = (isinstance(func, ast.Name) and func.id in _NUMERIC_CALLS) or (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("math", "cmath")
        )
        if numeric:
            node.args = [a if isinstance(a, ast.Starred) else self._safe(a) for a in node.args]
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        source = ast.get_source_segment(self.source, node.test) or "<condition>"
        self.generic_visit(node)
        line = ast.Constant(node.lineno)
        failure = _call(
            "__vf_fail__", line, ast.Constant(source[:300]), node.msg or ast.Constant(None)
        )
        check = ast.If(
            test=ast.UnaryOp(op=ast.Not(), operand=self._truth(node.test)),
            body=[ast.Raise(exc=failure, cause=None)],
            orelse=[],
        )
        return ast.copy_location(check, node)


def compile_trusted(source: str, filename: str) -> types.CodeType:
    tree = ast.parse(source, filename)
    tree = ast.fix_missing_locations(_Rewriter(source).visit(tree))
    return compile(tree, filename, "exec")


HELPERS = {
    "__vf_compare__": compare,
    "__vf_truth__": truth,
    "__vf_safe__": safe,
    "__vf_fail__": fail,
    "__vf_trust__": trust,
}


# --- tampering -------------------------------------------------------------------------------


def _imported_modules(source: str) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


class Snapshot:
    """Identity of every attribute of builtins and of the given modules."""

    def __init__(self, modules: list[types.ModuleType]) -> None:
        self.modules = [(m, dict(vars(m))) for m in modules]
        self.codes = {name: f.__code__ for name, f in HELPERS.items() if hasattr(f, "__code__")}

    def extended(self, modules: list[types.ModuleType]) -> Snapshot:
        """This snapshot plus the given modules (taken now)."""
        out = Snapshot([])
        seen = {id(m) for m, _ in self.modules}
        out.modules = self.modules + [(m, dict(vars(m))) for m in modules if id(m) not in seen]
        out.codes = self.codes
        return out

    def changed(self) -> str | None:
        for module, saved in self.modules:
            current = vars(module)
            for key, value in saved.items():
                if current.get(key, _MISSING) is not value:
                    return f"{module.__name__}.{key}"
        for name, code in self.codes.items():
            if HELPERS[name].__code__ is not code:
                return f"the test harness ({name})"
        if sys.gettrace() is not None or sys.getprofile() is not None:
            return "a tracing or profiling hook (sys.settrace / sys.setprofile)"
        return None


_MISSING = object()
# "base": builtins and this module as the agent left them, taken once per program by
# ``prepare`` (in a dict, so that storing it does not change this module's attributes).
_STATE: dict[str, Snapshot] = {}


# --- running ---------------------------------------------------------------------------------


def _error(exc: BaseException, stage: str) -> dict[str, Any]:
    te = traceback.TracebackException.from_exception(exc, limit=-30)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if os.path.abspath(f.filename) != HARNESS_FILE]
    )
    text = "".join(te.format())
    return {
        "event": "error",
        "stage": stage,
        "type": type(exc).__name__,
        "message": str(exc)[:2000] if not isinstance(exc, MemoryError) else "out of memory",
        "traceback": text[-4000:],
    }


def _report_error(exc: BaseException, stage: str) -> int:
    record = _error(exc, stage)
    emit(record)
    try:
        sys.stderr.write(record["traceback"])
        sys.stderr.flush()
    except Exception:
        pass
    return 1


# The program's code, compiled by the sandbox agent before it forks the tests (see
# ``prepare``): compiling never runs any of it, and a large program is compiled once
# rather than once per test.
_COMPILED: dict[bytes, types.CodeType] = {}
_COMPILE_ONCE_MAX = 4 * 1024 * 1024


def _compile_solution(program_dir: str) -> types.CodeType | None:
    source = program_file(program_dir, SOLUTION_NAME)
    compiled = _COMPILED.get(source)
    if compiled is not None:
        return compiled
    try:
        return compile(source, SOLUTION_NAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        emit(
            {
                "event": "syntax_error",
                "message": exc.msg,
                "line": exc.lineno or 0,
                "column": exc.offset or 0,
                "text": (exc.text or "").rstrip("\n")[:500],
            }
        )
        return None
    except ValueError as exc:  # null bytes
        emit({"event": "syntax_error", "message": str(exc), "line": 0, "column": 0, "text": ""})
        return None


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
        return code
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:
        pass
    return 1


def run_stdio(program_dir: str) -> int:
    code = _compile_solution(program_dir)
    if code is None:
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


def _load_solution(program_dir: str, namespace: dict[str, Any]) -> int | None:
    code = _compile_solution(program_dir)
    if code is None:
        return 1
    try:
        exec(code, namespace)
    except SystemExit as exc:
        emit({"event": "exit", "code": _exit_code(exc), "stage": "solution"})
        return 1
    except BaseException as exc:
        return _report_error(exc, "solution")
    return None


def _emit_value(value: Any, nonce: str) -> int:
    try:
        encoded = encode(value)
    except (ValueError, RecursionError) as exc:
        emit({"event": "error", "stage": "value", "type": "ValueError", "message": str(exc)})
        return 1
    emit({"event": "return", "value": encoded, "nonce": nonce})
    return 0


def run_call(program_dir: str, spec: dict[str, Any], case: Any, nonce: str) -> int:
    module = _module("solution")
    ns = module.__dict__
    failed = _load_solution(program_dir, ns)
    if failed is not None:
        return failed
    name = spec["fn_name"]
    target = ns.get(name)
    if not callable(target):
        cls = ns.get("Solution")
        if isinstance(cls, type) and callable(getattr(cls, name, None)):
            try:
                target = getattr(cls(), name)
            except BaseException as exc:
                return _report_error(exc, "solution")
        else:
            emit(
                {
                    "event": "error",
                    "stage": "solution",
                    "type": "NameError",
                    "message": f"function {name!r} is not defined (neither top-level nor a "
                    "method of class Solution)",
                    "traceback": "",
                }
            )
            return 1
    try:
        value = target(*case)
    except SystemExit as exc:
        emit({"event": "exit", "code": _exit_code(exc), "stage": "call"})
        return 1
    except BaseException as exc:
        return _report_error(exc, "call")
    return _emit_value(value, nonce)


def run_expression(program_dir: str, case: Any, nonce: str) -> int:
    module = _module("solution")
    ns = module.__dict__
    failed = _load_solution(program_dir, ns)
    if failed is not None:
        return failed
    try:
        value = eval(compile(case, "<test>", "eval"), ns)
    except SystemExit as exc:
        emit({"event": "exit", "code": _exit_code(exc), "stage": "call"})
        return 1
    except BaseException as exc:
        return _report_error(exc, "call")
    return _emit_value(value, nonce)


class PreparedTests:
    """The tests of an assert-style case, compiled once: they are trusted, the program is not."""

    def __init__(self, test_source: str, prelude: str) -> None:
        self.test_code = compile_trusted(test_source, "<tests>")
        self.prelude_code = compile_trusted(prelude, "<prelude>") if prelude else None
        self.imports = _imported_modules(test_source) + _imported_modules(prelude)
        self.used, self.defined = _names(test_source)


# Compiled tests by source. The sandbox agent fills it before forking (see ``prepare``), so
# every test of a program, and every program with the same tests, shares one compilation.
_PREPARED: dict[tuple[str, str], PreparedTests] = {}


def _assert_source(spec: dict[str, Any], case: Any) -> tuple[str, str]:
    test_source = case if isinstance(case, str) else spec["test"]
    entry_point = spec.get("entry_point")
    if entry_point:
        test_source = f"{test_source}\n\ncheck({entry_point})\n"
    return test_source, spec.get("prelude") or ""


def _prepared(test_source: str, prelude: str) -> PreparedTests:
    key = (test_source, prelude)
    prepared = _PREPARED.get(key)
    if prepared is None:
        prepared = PreparedTests(test_source, prelude)
        if len(_PREPARED) >= 1024:
            _PREPARED.clear()
        _PREPARED[key] = prepared
    return prepared


def prepare(argv: list[str]) -> int:
    """Work every test of a program shares, done once in the sandbox agent before it forks them.

    Called with ``[program_dir, offset, length, offset, length, ...]``: the cases of the
    program's tests. Compiles the candidate's code (compiling runs none of it) and the
    tests, and snapshots the harness's and the builtins' state. Whatever fails here is
    left for each test to meet and report.
    """
    program_dir, bounds = argv[0], [int(a) for a in argv[1:]]
    _STATE.pop("base", None)
    _COMPILED.clear()
    source = program_file(program_dir, SOLUTION_NAME)
    if len(source) <= _COMPILE_ONCE_MAX:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # each test shows the program's warnings
                _COMPILED[source] = compile(source, SOLUTION_NAME, "exec", dont_inherit=True)
        except Exception:  # each test reports the error itself
            pass
    spec = json.loads(program_file(program_dir, "spec.json"))
    if spec.get("mode") != "assert":
        return 0
    _STATE["base"] = Snapshot([builtins, sys.modules[__name__]])
    cases = program_file(program_dir, "cases.bin")
    for offset, length in zip(bounds[::2], bounds[1::2], strict=False):
        case = json.loads(cases[offset : offset + length]) if length else None
        try:
            _prepared(*_assert_source(spec, case))
        except SyntaxError:
            pass
    return 0


def run_assert(program_dir: str, spec: dict[str, Any], case: Any, nonce: str) -> int:
    test_source, prelude = _assert_source(spec, case)
    try:
        prepared = _prepared(test_source, prelude)
    except SyntaxError as exc:
        emit(
            {
                "event": "error",
                "stage": "tests",
                "type": "SyntaxError",
                "message": f"the tests do not compile: {exc}",
                "traceback": "",
            }
        )
        return 2
    test_code, prelude_code = prepared.test_code, prepared.prelude_code
    imported = []
    for name in prepared.imports:
        try:
            imported.append(__import__(name, fromlist=["_"]))
        except BaseException:
            pass
    base = _STATE.get("base")
    if base is None:
        snapshot = Snapshot([builtins, sys.modules[__name__], *imported])
    else:
        snapshot = base.extended(imported)
    module = _module("solution")
    ns = module.__dict__
    trusted_defs: dict[str, Any] = {}
    if prelude_code is not None:
        ns.update(HELPERS)
        before = set(ns)
        try:
            exec(prelude_code, ns)
        except BaseException as exc:
            return _report_error(exc, "prelude")
        trusted_defs = {k: v for k, v in ns.items() if k not in before}
    sys.addaudithook(_forbid_tracing)
    failed = _load_solution(program_dir, ns)
    if failed is not None:
        return failed
    tampered = snapshot.changed()
    if tampered:
        emit({"event": "tamper", "message": f"the program modified {tampered}"})
        return 1
    # The tests see the program's names, but builtins the program shadowed are restored.
    # Names the trusted prelude defined are restored too: the tests use the
    # prelude's helpers, not the program's redefinitions of them.
    test_ns = dict(ns)
    for name in prepared.used - prepared.defined:
        if name in ns and hasattr(builtins, name):
            test_ns[name] = getattr(builtins, name)
    test_ns.update(trusted_defs)
    test_ns.update(HELPERS)
    test_ns["__name__"] = "__tests__"
    try:
        exec(test_code, test_ns)
    except TestFailure as exc:
        emit(
            {
                "event": "fail",
                "line": exc.line,
                "message": str(exc)[:2000],
                "untrusted": isinstance(exc, Untrusted),
            }
        )
        return 1
    except SystemExit as exc:
        emit({"event": "exit", "code": _exit_code(exc), "stage": "tests"})
        return 1
    except BaseException as exc:
        return _report_error(exc, "tests")
    tampered = snapshot.changed()
    if tampered:
        emit({"event": "tamper", "message": f"the program modified {tampered}"})
        return 1
    emit({"event": "pass", "nonce": nonce})
    return 0


def _forbid_tracing(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: a trace function could jump over the asserts of the tests."""
    if event in ("sys.settrace", "sys.setprofile"):
        raise RuntimeError("tracing and profiling hooks are not allowed during the tests")


def _names(source: str) -> tuple[set[str], set[str]]:
    """Names the code reads, and names it binds (definitions, assignments, imports)."""
    used: set[str] = set()
    defined: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else used).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.alias):
            defined.add(node.asname or node.name.split(".")[0])
    return used, defined


def main(argv: list[str]) -> int:
    nonce = take_nonce()
    program_dir, offset, length = argv[0], int(argv[1]), int(argv[2])
    spec = json.loads(program_file(program_dir, "spec.json"))
    cases = program_file(program_dir, "cases.bin")
    case = json.loads(cases[offset : offset + length]) if length else None
    mode = spec["mode"]
    if mode == "stdio":
        return run_stdio(program_dir)
    if mode == "call":
        return run_call(program_dir, spec, case, nonce)
    if mode == "expression":
        return run_expression(program_dir, case, nonce)
    if mode == "assert":
        return run_assert(program_dir, spec, case, nonce)
    emit({"event": "error", "stage": "harness", "type": "ValueError", "message": f"mode {mode!r}"})
    return 2


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="surrogateescape")
    sys.exit(main(sys.argv[1:]))
