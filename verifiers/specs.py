"""Test specifications and the parser that recognises them in dataset formats.

Every spec is a frozen pydantic model with a ``kind`` discriminator. Raw test
data (a dict, a list, or a JSON string of either) is recognised by
:func:`parse_tests`; a malformed spec raises :class:`~verifiers.errors.SpecError`
naming the field, never a zero reward.

Formats recognised:

* stdin/stdout: ``{"inputs": [...], "outputs": [...]}`` (APPS, TACO,
  CodeContests, Eurus-2-RL-Data, PRIME) or ``[{"input": ..., "output": ...}, ...]``.
* call-based: ``{"fn_name": "f", "inputs": [[args...], ...], "outputs": [...]}``.
* expression pairs: ``[["add(1, 2)", 3], ...]``.
* assert script: ``{"test": "<defines check(candidate)>", "entry_point": "f"}`` (HumanEval).
* assert list: ``{"test_list": [...], "test_imports": [...], "test_setup_code": ...}``
  (MBPP) or a plain list of ``assert`` lines.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from verifiers import jsonio
from verifiers.errors import SpecError


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CompareOptions(_Spec):
    """How actual output is compared with expected output.

    Attributes:
        mode: ``lines`` (default): lines compared after removing trailing
            whitespace on each line and trailing blank lines at the end;
            ``exact``: byte for byte; ``tokens``: whitespace-separated tokens.
        float_abs_tol: Absolute tolerance for numeric tokens or values
            (implies ``tokens`` for text output).
        float_rel_tol: Relative tolerance, as in :func:`math.isclose`.
        case_sensitive: Compare text case-sensitively (default true).
    """

    mode: Literal["lines", "exact", "tokens"] = "lines"
    float_abs_tol: float | None = Field(default=None, ge=0)
    float_rel_tol: float | None = Field(default=None, ge=0)
    case_sensitive: bool = True

    @property
    def has_tolerance(self) -> bool:
        """Whether numbers are compared with a tolerance."""
        return bool(self.float_abs_tol) or bool(self.float_rel_tol)


class StdioCase(_Spec):
    """One stdin/stdout test."""

    input: str
    output: str


class StdioTests(_Spec):
    """Programs read stdin and write stdout; output is compared outside the sandbox."""

    kind: Literal["stdio"] = "stdio"
    cases: list[StdioCase] = Field(min_length=1)
    compare: CompareOptions = CompareOptions()

    def __len__(self) -> int:
        return len(self.cases)


class CallTests(_Spec):
    """Call a function with arguments; its return value is compared outside the sandbox.

    ``fn_name`` may name a top-level function or a method of a top-level
    ``class Solution`` (LeetCode style). With ``unwrap_single`` (the APPS
    convention), an expected value that is a one-element list also accepts
    that element.
    """

    kind: Literal["call"] = "call"
    fn_name: str = Field(min_length=1)
    inputs: list[list[Any]] = Field(min_length=1)
    outputs: list[Any]
    compare: CompareOptions = CompareOptions()
    unwrap_single: bool = True

    @model_validator(mode="after")
    def _lengths(self) -> CallTests:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(
                f"expected one output per input ({len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs)"
            )
        if not self.fn_name.isidentifier():
            raise ValueError(f"fn_name {self.fn_name!r} is not an identifier")
        return self

    def __len__(self) -> int:
        return len(self.inputs)


class ExpressionCase(_Spec):
    """An expression evaluated after the program runs, and its expected value."""

    expression: str = Field(min_length=1)
    expected: Any = None


class ExpressionTests(_Spec):
    """Evaluate expressions such as ``add(1, 2)``; values are compared outside the sandbox."""

    kind: Literal["expression"] = "expression"
    cases: list[ExpressionCase] = Field(min_length=1)
    compare: CompareOptions = CompareOptions()

    def __len__(self) -> int:
        return len(self.cases)


class AssertScriptTests(_Spec):
    """A test script run after the program, such as HumanEval's ``check(candidate)``.

    When ``entry_point`` is set, ``check(<entry_point>)`` is called after the
    script runs (the script must define ``check``). When the code does not
    define ``entry_point`` but ``prompt`` is given, the prompt is put before the
    code (completions that contain only a function body). ``prelude`` is trusted
    code run before the program (imports, helper classes). ``test_setup`` is the
    header of a test file (HumanEval-X Go: package clause and imports), merged by
    the language. ``declaration`` is the entry point's declared signature, as
    HumanEval-X records carry it (Rust: the ``use`` header and ``fn f(..) -> T {``;
    Go: ``func F(..) T {``): Go and Rust refuse a program that changes it. It is
    trusted and never part of the program. ``test_names`` lists test functions when
    the language runs them one by one (Go ``TestX``, Rust ``#[test]``); languages
    fill it, callers need not. One test per name, or one test.
    """

    kind: Literal["assert_script"] = "assert_script"
    test: str = Field(min_length=1)
    entry_point: str | None = None
    prompt: str | None = None
    prelude: str | None = None
    test_setup: str | None = None
    declaration: str | None = None
    test_names: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _entry(self) -> AssertScriptTests:
        if self.entry_point is not None and not self.entry_point.isidentifier():
            raise ValueError(f"entry_point {self.entry_point!r} is not an identifier")
        return self

    def __len__(self) -> int:
        return max(1, len(self.test_names))


class AssertListTests(_Spec):
    """A list of assert statements, one test each (MBPP).

    ``imports`` and ``setup`` run before every assert.
    """

    kind: Literal["assert_list"] = "assert_list"
    asserts: list[str] = Field(min_length=1)
    imports: list[str] = Field(default_factory=list)
    setup: str | None = None
    prelude: str | None = None

    def __len__(self) -> int:
        return len(self.asserts)


class SqlDatabase(_Spec):
    """One database fixture: a file, a schema with inserts, or a server URL.

    Attributes:
        path: A SQLite or DuckDB database file (opened read-only).
        ddl: DDL statements that create the tables, in a fresh database (key ``schema``).
        inserts: Statements that fill them.
        url: A PostgreSQL connection URL (engine ``postgresql``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    path: str | None = None
    ddl: str | None = Field(default=None, alias="schema")
    inserts: list[str] = Field(default_factory=list)
    url: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SqlDatabase:
        given = [name for name in ("path", "ddl", "url") if getattr(self, name)]
        if len(given) != 1:
            raise ValueError("a database needs exactly one of path, schema or url")
        if self.inserts and not self.ddl:
            raise ValueError("inserts need a schema")
        return self


class SqlTests(_Spec):
    """A query judged by execution match on one or more databases (Spider, BIRD).

    Each database is one test (test-suite accuracy: partial credit is the pass rate
    over the databases). The expected rows come from ``gold_query`` run on the same
    database, or from ``expected_rows`` (one database only). Rows are compared as a
    multiset, or as a list when ``ordered`` (default: only when the gold query has
    ORDER BY at its top level). With ``allow_writes`` the candidate may modify a copy
    of the database, and the resulting database states are compared instead.
    """

    kind: Literal["sql"] = "sql"
    databases: list[SqlDatabase] = Field(min_length=1)
    gold_query: str | None = None
    expected_rows: list[list[Any]] | None = None
    ordered: bool | None = None
    column_names_matter: bool = False
    allow_writes: bool = False
    engine: Literal["sqlite", "duckdb", "postgresql"] = "sqlite"
    compare: CompareOptions = CompareOptions()

    @model_validator(mode="after")
    def _expected(self) -> SqlTests:
        if (self.gold_query is None) == (self.expected_rows is None):
            raise ValueError("give exactly one of gold_query and expected_rows")
        if self.expected_rows is not None and len(self.databases) != 1:
            raise ValueError(
                "expected_rows needs exactly one database (use gold_query for several)"
            )
        if self.allow_writes and self.gold_query is None:
            raise ValueError("allow_writes compares database states, so it needs a gold_query")
        for n, db in enumerate(self.databases):
            if (db.url is not None) != (self.engine == "postgresql"):
                raise ValueError(
                    f"databases[{n}]: a url is for engine postgresql, paths and "
                    "schemas for sqlite and duckdb"
                )
        if self.engine == "postgresql" and self.allow_writes:
            raise ValueError("allow_writes is not supported with postgresql")
        return self

    def __len__(self) -> int:
        return len(self.databases)


class RegexCase(_Spec):
    """A string and what the pattern must do with it.

    Attributes:
        text: The string.
        match: Whether the pattern must match it (in the spec's mode).
        groups: The groups the match must capture (None for a group that did not take part).
        replace: With ``expected``: the result of substituting ``replace`` for every match.
        expected: The expected substitution result.
    """

    text: str
    match: bool | None = None
    groups: list[str | None] | None = None
    replace: str | None = None
    expected: str | None = None

    @model_validator(mode="after")
    def _something(self) -> RegexCase:
        if self.match is None and self.groups is None and self.replace is None:
            raise ValueError("a case needs match, groups, or replace with expected")
        if (self.replace is None) != (self.expected is None):
            raise ValueError("replace and expected go together")
        return self


class RegexTests(_Spec):
    """A regular expression judged on example strings and, optionally, against a gold pattern.

    Each positive, negative and case is one test; with ``gold`` there is one more test:
    language equivalence with the gold pattern (decided with finite automata where the
    patterns stay within regular constructs), whose feedback gives the shortest string
    the two patterns disagree on.
    """

    kind: Literal["regex"] = "regex"
    positive: list[str] = Field(default_factory=list)
    negative: list[str] = Field(default_factory=list)
    cases: list[RegexCase] = Field(default_factory=list)
    mode: Literal["fullmatch", "search", "match"] = "fullmatch"
    flavor: Literal["python", "regex", "re2", "javascript"] = "python"
    gold: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _flavour(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "flavour" in data and "flavor" not in data:
            data = {k if k != "flavour" else "flavor": v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _some(self) -> RegexTests:
        if not (self.positive or self.negative or self.cases or self.gold):
            raise ValueError("no tests: give positive, negative, cases or gold")
        return self

    def __len__(self) -> int:
        return len(self.positive) + len(self.negative) + len(self.cases) + (self.gold is not None)


TestSpec: TypeAlias = Annotated[
    StdioTests
    | CallTests
    | ExpressionTests
    | AssertScriptTests
    | AssertListTests
    | SqlTests
    | RegexTests,
    Field(discriminator="kind"),
]
CODE_SPECS: tuple[type[BaseModel], ...] = (
    StdioTests,
    CallTests,
    ExpressionTests,
    AssertScriptTests,
    AssertListTests,
    SqlTests,
    RegexTests,
)
_BY_KIND: dict[
    str,
    type[StdioTests]
    | type[CallTests]
    | type[ExpressionTests]
    | type[AssertScriptTests]
    | type[AssertListTests]
    | type[SqlTests]
    | type[RegexTests],
] = {
    "stdio": StdioTests,
    "call": CallTests,
    "expression": ExpressionTests,
    "assert_script": AssertScriptTests,
    "assert_list": AssertListTests,
    "sql": SqlTests,
    "regex": RegexTests,
}


def _field_error(prefix: str, err: ValidationError) -> SpecError:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    field = f"{prefix}.{loc}" if loc else prefix
    msg = first["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return SpecError(field, msg)


M = TypeVar("M", bound=BaseModel)


def build(model: type[M], data: Mapping[str, Any], field: str = "tests") -> M:
    """Validate ``data`` into ``model``, turning pydantic errors into a :class:`SpecError`."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as err:
        raise _field_error(field, err) from None


def _text(value: Any, field: str) -> str:
    """A test input or output as text: strings as they are, lists of lines joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value) + ("\n" if value else "")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise SpecError(field, f"expected a string, got {type(value).__name__}")


def _stdio_from_lists(raw: Mapping[str, Any], field: str) -> StdioTests:
    inputs, outputs = raw["inputs"], raw["outputs"]
    if not isinstance(inputs, list):
        raise SpecError(f"{field}.inputs", f"expected a list, got {type(inputs).__name__}")
    if not isinstance(outputs, list):
        raise SpecError(f"{field}.outputs", f"expected a list, got {type(outputs).__name__}")
    if len(inputs) != len(outputs):
        raise SpecError(
            f"{field}.outputs",
            f"expected one output per input ({len(inputs)} inputs, {len(outputs)} outputs)",
        )
    if not inputs:
        raise SpecError(f"{field}.inputs", "no tests: the list is empty")
    cases = [
        StdioCase(input=_text(i, f"{field}.inputs[{n}]"), output=_text(o, f"{field}.outputs[{n}]"))
        for n, (i, o) in enumerate(zip(inputs, outputs, strict=True))
    ]
    extra = {k: v for k, v in raw.items() if k in ("compare",)}
    return build(StdioTests, {"cases": cases, **extra}, field)


def _stdio_from_cases(raw: Sequence[Any], field: str) -> StdioTests:
    cases = []
    for n, case in enumerate(raw):
        where = f"{field}[{n}]"
        if not isinstance(case, Mapping):
            raise SpecError(where, f"expected an object with input and output, got {case!r:.60}")
        if "input" not in case:
            raise SpecError(f"{where}.input", "missing")
        if "output" not in case:
            raise SpecError(f"{where}.output", "missing")
        cases.append(
            StdioCase(
                input=_text(case["input"], f"{where}.input"),
                output=_text(case["output"], f"{where}.output"),
            )
        )
    return StdioTests(cases=cases)


def _call(raw: Mapping[str, Any], field: str) -> CallTests:
    data = dict(raw)
    inputs = data.get("inputs")
    if isinstance(inputs, list):
        # APPS stores each call's arguments as a list; a bare value is one argument.
        data["inputs"] = [a if isinstance(a, list) else [a] for a in inputs]
    keep = {"fn_name", "inputs", "outputs", "compare", "unwrap_single", "kind"}
    return build(CallTests, {k: v for k, v in data.items() if k in keep}, field)


def _expressions(raw: Sequence[Any], field: str) -> ExpressionTests:
    cases = []
    for n, pair in enumerate(raw):
        where = f"{field}[{n}]"
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise SpecError(where, "expected a pair [expression, expected value]")
        if not pair[0].strip():
            raise SpecError(f"{where}[0]", "empty expression")
        cases.append(ExpressionCase(expression=pair[0], expected=pair[1]))
    return ExpressionTests(cases=cases)


def _mbpp(raw: Mapping[str, Any], field: str) -> AssertListTests:
    asserts = raw["test_list"]
    if not isinstance(asserts, list) or not all(isinstance(a, str) for a in asserts):
        raise SpecError(f"{field}.test_list", "expected a list of assert statements")
    imports = raw.get("test_imports") or []
    if not isinstance(imports, list) or not all(isinstance(a, str) for a in imports):
        raise SpecError(f"{field}.test_imports", "expected a list of import lines")
    setup = raw.get("test_setup_code") or None
    if setup is not None and not isinstance(setup, str):
        raise SpecError(f"{field}.test_setup_code", "expected a string")
    data = {"asserts": asserts, "imports": imports, "setup": setup, "prelude": raw.get("prelude")}
    return build(AssertListTests, data, field)


def _sql(raw: Mapping[str, Any], field: str) -> SqlTests:
    data = dict(raw)
    if "database" in data:
        if "databases" in data:
            raise SpecError(f"{field}.database", "give database or databases, not both")
        data["databases"] = data.pop("database")
    dbs = data.get("databases")
    if isinstance(dbs, str | Mapping):
        dbs = [dbs]
    if not isinstance(dbs, list):
        raise SpecError(
            f"{field}.database", "expected a path, a {schema, inserts} object or a list"
        )
    data["databases"] = [{"path": d} if isinstance(d, str) else d for d in dbs]
    if "gold_result" in data and "expected_rows" not in data and "gold_query" not in data:
        data["expected_rows"] = data.pop("gold_result")
    for alias in ("query", "gold_sql", "gold"):
        if alias in data and "gold_query" not in data:
            data["gold_query"] = data.pop(alias)
    if "order_matters" in data and "ordered" not in data:
        data["ordered"] = data.pop("order_matters")
    for extra in ("db_id", "question", "gold_error", "id", "gold_result", "query"):
        data.pop(extra, None)
    return build(SqlTests, data, field)


def _looks_like_asserts(items: Sequence[Any]) -> bool:
    return all(isinstance(a, str) and a.lstrip().startswith("assert") for a in items)


def _decode_string(text: str, field: str) -> Any:
    """Test data stored as a string: JSON, or a Python literal (some datasets store reprs)."""
    try:
        return jsonio.loads(text)
    except json.JSONDecodeError as err:
        json_error = f"{err.msg} at {err.pos}"
    if len(text) <= 50_000_000:
        try:
            # literal_eval evaluates literals only: safe on untrusted text.
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    raise SpecError(field, f"a string must hold JSON (or Python-literal) test data ({json_error})")


def parse_tests(raw: Any, field: str = "tests") -> TestSpec:
    """Recognise a test specification in ``raw``.

    Args:
        raw: A spec model, a dict, a list, or a JSON string of a dict or list.
        field: Name used in error messages.

    Returns:
        The spec model.

    Raises:
        SpecError: The data is not a recognised format, or is malformed; the
            message names the field.
    """
    if isinstance(raw, CODE_SPECS):
        return raw  # type: ignore[return-value]
    if isinstance(raw, bytes | bytearray):
        raw = raw.decode("utf-8", errors="replace")
    if isinstance(raw, str):
        raw = _decode_string(raw, field)
        if isinstance(raw, str):  # encoded twice, as some dataset exports are
            raw = _decode_string(raw, field)
    if isinstance(raw, Mapping):
        return _parse_mapping(raw, field)
    if isinstance(raw, list | tuple):
        if not raw:
            raise SpecError(field, "no tests: the list is empty")
        if all(isinstance(c, Mapping) for c in raw):
            return _stdio_from_cases(raw, field)
        if all(isinstance(c, list | tuple) for c in raw):
            return _expressions(raw, field)
        if _looks_like_asserts(raw):
            return build(AssertListTests, {"asserts": list(raw)}, field)
        raise SpecError(
            field,
            "a list must hold {input, output} objects, [expression, expected] pairs "
            "or assert statements",
        )
    raise SpecError(field, f"expected a dict, a list or a JSON string, got {type(raw).__name__}")


def _parse_mapping(raw: Mapping[str, Any], field: str) -> TestSpec:
    kind = raw.get("kind")
    if isinstance(kind, str):
        model = _BY_KIND.get(kind)
        if model is None:
            raise SpecError(f"{field}.kind", f"unknown kind {kind!r}; known: {sorted(_BY_KIND)}")
        return build(model, raw, field)
    if "database" in raw or "databases" in raw:
        return _sql(raw, field)
    if any(k in raw for k in ("positive", "negative", "flavor", "flavour")) or (
        "gold" in raw and "test" not in raw
    ):
        return build(RegexTests, raw, field)
    if "fn_name" in raw and raw.get("fn_name"):
        return _call(raw, field)
    if "inputs" in raw or "outputs" in raw:
        if "inputs" not in raw:
            raise SpecError(f"{field}.inputs", "missing (outputs given without inputs)")
        if "outputs" not in raw:
            raise SpecError(f"{field}.outputs", "missing (inputs given without outputs)")
        return _stdio_from_lists(raw, field)
    if "test_list" in raw:
        return _mbpp(raw, field)
    if "test" in raw:
        fields = ("test", "entry_point", "prompt", "prelude", "test_setup", "declaration")
        data = {k: raw.get(k) for k in fields if k in raw}
        if not isinstance(data.get("test"), str):
            raise SpecError(f"{field}.test", "expected the test code as a string")
        return build(AssertScriptTests, data, field)
    if "tests" in raw and isinstance(raw["tests"], list):
        return parse_tests(raw["tests"], f"{field}.tests")
    keys = ", ".join(sorted(map(str, raw))) or "none"
    raise SpecError(
        field,
        f"unrecognised test format (keys: {keys}); expected inputs/outputs, fn_name, "
        "test/entry_point, test_list or kind",
    )
