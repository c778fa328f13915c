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

Every format also takes ``subtasks`` (IOI-style groups of tests with points),
``time_limit_s`` and ``memory_limit_mb`` (the problem's own limits); stdin/stdout tests
take a ``checker`` (a built-in checker's name or a checker program) or an ``interactor``.
A key that is neither known nor in :data:`IGNORED_KEYS` (fields that dataset records
carry and judging does not need) is a :class:`~verifiers.errors.SpecError` naming it:
a key dropped in silence would judge by the wrong rule.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from verifiers import jsonio
from verifiers.errors import SpecError

#: The largest per-problem limits a spec may set (``time_limit_s``, ``memory_limit_mb``).
MAX_TIME_LIMIT_S = 60.0
MAX_MEMORY_LIMIT_MB = 16 * 1024
#: Fields of known dataset records that judging deliberately ignores (accepted, unused):
#: identifiers, statements, reference solutions, provenance. Listed in ``docs/judging.md``.
IGNORED_KEYS = frozenset(
    {
        # HumanEval, HumanEval-X, MBPP, LeetCode, CodeContests, CodeElo, Kattis, Spider...
        "task_id",
        "id",
        "problem_id",
        "name",
        "title",
        "canonical_solution",
        "example_test",
        "docstring",
        "import",
        "text",
        "code",
        "source_file",
        "challenge_test_list",
        "solution",
        "solutions",
        "problem",
        "question",
        "difficulty",
        "source",
        "url",
        "source_url",
        "license",
        "db_id",
        "gold_error",
        "query",
    }
)
#: Fields of one stdin/stdout case object that judging ignores (names, descriptions).
IGNORED_CASE_KEYS = frozenset({"name", "desc", "description", "explanation", "testtype"})
#: Names of the built-in checkers (no program): see :class:`CompareOptions` and
#: ``docs/judging.md``.
BUILTIN_CHECKERS = (
    "lines",
    "exact",
    "tokens",
    "unordered_lines",
    "unordered_tokens",
    "yes_no",
    "float",
)
#: Tolerance of the built-in ``float`` checker when none is given (absolute and relative).
FLOAT_TOLERANCE = 1e-6


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Subtask(_Spec):
    """An IOI-style group of tests: its points count only when every one of its tests passes.

    Attributes:
        name: What feedback calls it.
        points: Its weight (the score is the points of the passing groups over all points).
        tests: Indices of its tests (0-based, into the spec's tests).
    """

    name: str = ""
    points: float = Field(gt=0, le=1e9)
    tests: list[int] = Field(min_length=1)


class JudgeProgram(_Spec):
    """A checker or an interactor: a program (untrusted data too) that judges a test's run.

    Attributes:
        language: Any registered language that can run judges (``python``, ``cpp``...).
        source: The main file's text.
        files: More files beside it (relative path -> text: headers, other sources). With
            ``files`` alone, every source of the language among them is the program.
        protocol: ``testlib`` (``checker input output answer``; exit 0 accepted, 1 wrong
            answer, 2 presentation error, 3 judge failure, 7 points, 16 + n partially
            correct), ``kattis`` (``validator input answer feedback_dir/ [flags]`` with the
            output on its stdin; exit 42 accepted, 43 wrong answer), or ``function`` (Python
            source defining ``check(input, output, answer) -> bool | float``).
        flags: Extra arguments (Kattis ``validator_flags``).
        time_limit_s: Its wall-clock limit per test (default :data:`CHECKER_TIME_S`).
        memory_limit_mb: Its memory limit (default: at least 1 GiB).
    """

    language: str = Field(min_length=1)
    source: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
    protocol: Literal["testlib", "kattis", "function"]
    flags: list[str] = Field(default_factory=list)
    time_limit_s: float | None = Field(default=None, gt=0, le=MAX_TIME_LIMIT_S)
    memory_limit_mb: int | None = Field(default=None, ge=32, le=MAX_MEMORY_LIMIT_MB)

    @model_validator(mode="after")
    def _program(self) -> JudgeProgram:
        if self.source is None and not self.files:
            raise ValueError("give source, files or both")
        for path in self.files:
            parts = path.replace("\\", "/").split("/")
            if not path or path.startswith("/") or ".." in parts or "" in parts:
                raise ValueError(f"files: {path!r} is not a relative path inside the program")
        if self.protocol == "function" and self.source is None:
            raise ValueError("the function protocol needs source defining check()")
        return self


#: A checker's wall-clock limit per test when its spec gives none, in seconds.
CHECKER_TIME_S = 10.0


class _Tests(_Spec):
    """What every test format shares: subtasks and the problem's own limits.

    Attributes:
        subtasks: Groups of tests with points (see :class:`Subtask`).
        time_limit_s: The problem's time limit per test (wall clock and CPU): overrides
            ``Limits.timeout_s`` and ``Limits.cpu_time_s``.
        memory_limit_mb: The problem's memory limit: overrides ``Limits.memory_mb``.
    """

    subtasks: list[Subtask] = Field(default_factory=list)
    time_limit_s: float | None = Field(default=None, gt=0, le=MAX_TIME_LIMIT_S)
    memory_limit_mb: int | None = Field(default=None, ge=32, le=MAX_MEMORY_LIMIT_MB)

    @model_validator(mode="after")
    def _subtask_tests(self) -> _Tests:
        count = len(self)  # type: ignore[arg-type]  # every format has a length
        for n, group in enumerate(self.subtasks):
            for m, index in enumerate(group.tests):
                if not 0 <= index < count:
                    raise ValueError(
                        f"subtasks[{n}].tests[{m}]: test {index} does not exist "
                        f"(there are {count} tests)"
                    )
            if len(set(group.tests)) != len(group.tests):
                raise ValueError(f"subtasks[{n}].tests: a test is listed twice")
        return self


class CompareOptions(_Spec):
    """How actual output is compared with expected output.

    Attributes:
        mode: ``lines`` (default): lines compared after removing trailing
            whitespace on each line and trailing blank lines at the end;
            ``exact``: byte for byte; ``tokens``: whitespace-separated tokens;
            ``unordered_lines``: the lines (normalised as ``lines``) as a multiset;
            ``unordered_tokens``: the tokens as a multiset; ``yes_no``: tokens, where
            ``yes`` and ``no`` match in any case.
        float_abs_tol: Absolute tolerance for numeric tokens or values
            (implies ``tokens`` for text output).
        float_rel_tol: Relative tolerance, as in :func:`math.isclose`.
        case_sensitive: Compare text case-sensitively (default true).
    """

    mode: Literal["lines", "exact", "tokens", "unordered_lines", "unordered_tokens", "yes_no"] = (
        "lines"
    )
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


class StdioTests(_Tests):
    """Programs read stdin and write stdout; output is compared outside the sandbox.

    With a ``checker`` program, the output is judged by it inside the sandbox (the case's
    ``output`` is its answer file); with an ``interactor``, the program's stdin and stdout
    are connected to it.
    """

    kind: Literal["stdio"] = "stdio"
    cases: list[StdioCase] = Field(min_length=1)
    compare: CompareOptions = CompareOptions()
    checker: JudgeProgram | None = None
    interactor: JudgeProgram | None = None

    @model_validator(mode="after")
    def _judges(self) -> StdioTests:
        if self.checker is not None and self.interactor is not None:
            raise ValueError("give a checker or an interactor, not both")
        if self.interactor is not None and self.interactor.protocol == "function":
            raise ValueError("interactor: an interactor is a program (testlib or kattis)")
        return self

    def __len__(self) -> int:
        return len(self.cases)


class CallTests(_Tests):
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


class ExpressionTests(_Tests):
    """Evaluate expressions such as ``add(1, 2)``; values are compared outside the sandbox."""

    kind: Literal["expression"] = "expression"
    cases: list[ExpressionCase] = Field(min_length=1)
    compare: CompareOptions = CompareOptions()

    def __len__(self) -> int:
        return len(self.cases)


class AssertScriptTests(_Tests):
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


class AssertListTests(_Tests):
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


class SqlTests(_Tests):
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


class RegexTests(_Tests):
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
    if msg.startswith("subtasks[") and ": " in msg:
        # A whole-spec check that names the field it found wrong.
        where, msg = msg.split(": ", 1)
        field = f"{field}.{where}"
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


#: Keys every format takes (see :class:`_Tests`).
COMMON_KEYS = frozenset({"subtasks", "time_limit_s", "memory_limit_mb", "kind"})
#: Keys stdin/stdout tests take besides the common ones.
STDIO_KEYS = frozenset({"compare", "checker", "interactor"})


def _reject_unknown(raw: Mapping[str, Any], known: frozenset[str], field: str) -> None:
    """SpecError naming the first key that is neither known here nor a known ignored field."""
    for key in raw:
        if key not in known and key not in IGNORED_KEYS:
            names = ", ".join(sorted(known - {"kind"}))
            raise SpecError(
                f"{field}.{key}",
                f"unknown key (this format takes {names}; fields judging ignores are "
                "listed in docs/judging.md)",
            )


def _common(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {k: raw[k] for k in ("subtasks", "time_limit_s", "memory_limit_mb") if k in raw}


def builtin_checker(value: Any, field: str) -> CompareOptions:
    """The comparison a built-in checker stands for: a name, or ``{"name": ..., options}``.

    ``float`` takes ``abs_tol`` and ``rel_tol`` (default :data:`FLOAT_TOLERANCE` each).
    """
    options: dict[str, Any] = {}
    if isinstance(value, Mapping):
        options = {k: v for k, v in value.items() if k != "name"}
        value = value.get("name")
    if value not in BUILTIN_CHECKERS:
        raise SpecError(
            field, f"unknown built-in checker {value!r}; known: {', '.join(BUILTIN_CHECKERS)}"
        )
    if value == "float":
        unknown = set(options) - {"abs_tol", "rel_tol"}
        if unknown:
            raise SpecError(
                f"{field}.{sorted(unknown)[0]}", "unknown key (float takes abs_tol, rel_tol)"
            )
        data = {
            "mode": "tokens",
            "float_abs_tol": options.get("abs_tol", FLOAT_TOLERANCE),
            "float_rel_tol": options.get("rel_tol", FLOAT_TOLERANCE),
        }
    else:
        if options:
            raise SpecError(f"{field}.{sorted(options)[0]}", f"unknown key ({value} takes none)")
        data = {"mode": value}
    return build(CompareOptions, data, field)


def _judging(raw: Mapping[str, Any], field: str) -> dict[str, Any]:
    """The stdio judging keys of ``raw``: a built-in checker's name becomes its comparison."""
    out = {k: raw[k] for k in ("compare", "interactor") if k in raw}
    checker = raw.get("checker")
    if checker is None:
        return out
    if isinstance(checker, str) or (isinstance(checker, Mapping) and "name" in checker):
        if "compare" in raw:
            raise SpecError(
                f"{field}.checker", "a built-in checker is a comparison: give it or compare"
            )
        out["compare"] = builtin_checker(checker, f"{field}.checker")
    else:
        out["checker"] = checker
    return out


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
    _reject_unknown(raw, COMMON_KEYS | STDIO_KEYS | {"inputs", "outputs", "fn_name"}, field)
    data = {"cases": cases, **_common(raw), **_judging(raw, field)}
    return build(StdioTests, data, field)


def _stdio_from_cases(
    raw: Sequence[Any], field: str, extra: Mapping[str, Any] | None = None
) -> StdioTests:
    extra = extra or {}
    cases = []
    for n, case in enumerate(raw):
        where = f"{field}[{n}]"
        if not isinstance(case, Mapping):
            raise SpecError(where, f"expected an object with input and output, got {case!r:.60}")
        if "input" not in case:
            raise SpecError(f"{where}.input", "missing")
        # Library Checker and Kattis call the jury's output the answer.
        out_key = "answer" if "answer" in case and "output" not in case else "output"
        if out_key not in case:
            raise SpecError(f"{where}.output", "missing")
        for key in case:
            if key not in ("input", out_key) and key not in IGNORED_CASE_KEYS | IGNORED_KEYS:
                raise SpecError(f"{where}.{key}", "unknown key (a case takes input and output)")
        cases.append(
            StdioCase(
                input=_text(case["input"], f"{where}.input"),
                output=_text(case[out_key], f"{where}.{out_key}"),
            )
        )
    return build(StdioTests, {"cases": cases, **extra}, field)


def _call(raw: Mapping[str, Any], field: str) -> CallTests:
    data = dict(raw)
    inputs = data.get("inputs")
    if isinstance(inputs, list):
        # APPS stores each call's arguments as a list; a bare value is one argument.
        data["inputs"] = [a if isinstance(a, list) else [a] for a in inputs]
    keep = COMMON_KEYS | {"fn_name", "inputs", "outputs", "compare", "unwrap_single"}
    _reject_unknown(data, keep, field)
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
    known = COMMON_KEYS | {"test_list", "test_imports", "test_setup_code", "prelude"}
    _reject_unknown(raw, known, field)
    data = {
        "asserts": asserts,
        "imports": imports,
        "setup": setup,
        "prelude": raw.get("prelude"),
        **_common(raw),
    }
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
    for extra in ("gold_result", "query", *IGNORED_KEYS):
        data.pop(extra, None)
    known = COMMON_KEYS | frozenset(SqlTests.model_fields)
    _reject_unknown(data, known, field)
    return build(SqlTests, data, field)


def _looks_like_asserts(items: Sequence[Any]) -> bool:
    return all(isinstance(a, str) and a.lstrip().startswith("assert") for a in items)


def _decode_string(text: str, field: str) -> Any:
    """Test data stored as a string: JSON, or a Python literal (some datasets store reprs)."""
    try:
        return jsonio.loads(text)
    except json.JSONDecodeError as err:
        json_error = f"{err.msg} at {err.pos}"
    except RecursionError:
        raise SpecError(field, "the JSON in this string is nested too deeply") from None
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
        data = dict(raw)
        if model is StdioTests:
            data.update(_judging(raw, field))
        return build(model, data, field)
    if "database" in raw or "databases" in raw:
        return _sql(raw, field)
    if any(k in raw for k in ("positive", "negative", "flavor", "flavour")) or (
        "gold" in raw and "test" not in raw
    ):
        _reject_unknown(raw, COMMON_KEYS | frozenset(RegexTests.model_fields) | {"flavour"}, field)
        return build(RegexTests, {k: v for k, v in raw.items() if k not in IGNORED_KEYS}, field)
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
        _reject_unknown(raw, COMMON_KEYS | frozenset(fields), field)
        data = {k: raw.get(k) for k in fields if k in raw}
        if not isinstance(data.get("test"), str):
            raise SpecError(f"{field}.test", "expected the test code as a string")
        return build(AssertScriptTests, {**data, **_common(raw)}, field)
    if "tests" in raw and isinstance(raw["tests"], list):
        # A record holding its cases (CodeContests, Kattis, Library Checker exports): the
        # record's own judging keys apply to them.
        _reject_unknown(raw, COMMON_KEYS | STDIO_KEYS | {"tests"}, field)
        cases = raw["tests"]
        if cases and all(isinstance(c, Mapping) for c in cases):
            extra = {**_common(raw), **_judging(raw, field)}
            return _stdio_from_cases(cases, f"{field}.tests", extra)
        if set(raw) - IGNORED_KEYS != {"tests"}:
            raise SpecError(field, "subtasks, limits and checkers go with stdin/stdout cases")
        return parse_tests(cases, f"{field}.tests")
    keys = ", ".join(sorted(map(str, raw))) or "none"
    raise SpecError(
        field,
        f"unrecognised test format (keys: {keys}); expected inputs/outputs, fn_name, "
        "test/entry_point, test_list or kind",
    )
