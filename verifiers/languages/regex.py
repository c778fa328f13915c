"""Regular expressions: judged on example strings and by equivalence with a gold pattern.

Flavours: Python ``re`` (default), the ``regex`` module, RE2 (``google-re2``, linear
time) and JavaScript (run by Node). Every string is one test, run in the sandbox,
so catastrophic backtracking is a ``timeout`` of that test and never hangs the
caller. With a gold pattern one more test decides language equivalence with finite
automata built in the sandbox with the flavour's own semantics (anchors, newlines,
flags, Unicode classes and case folding as that engine matches them; see
``_regex_harness.py``), checked against the real engine before any verdict, and
reports the shortest string the two patterns disagree on. Where the automata cannot
decide (backreferences, lookarounds, atomic groups), the engines compare the patterns
on thousands of strings drawn from the gold's automaton and on the examples: a pass
then says "not proven" and on how many strings it rests, and when the gold itself is
outside the model only example strings can make it pass.

No engine compiles the answer in this process (compiling is not bounded in time): a
pattern the flavour refuses is a ``syntax_error`` reported by the sandbox.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Mapping
from importlib import resources
from typing import Any

from verifiers import jsonio
from verifiers.cases import PATTERN_KINDS, Case, table
from verifiers.compare import describe_value
from verifiers.errors import SpecError
from verifiers.languages._regex_harness import compile_pattern
from verifiers.languages.common import forged, limit_outcome, pin_toolchain, records
from verifiers.languages.javascript import NODE
from verifiers.limits import Limits
from verifiers.parsing import TREE_SITTER_LIMIT, SyntaxIssue, tree_sitter_check
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import CompareOptions, RegexTests, TestSpec, parse_tests

GRAMMAR = "tree_sitter_regex"
HARNESS = "{program_dir}/harness.py"
_MODULES = {"python": "re", "regex": "regex", "re2": "re2"}


def cases_of(spec: RegexTests) -> list[dict[str, Any]]:
    """Positives, negatives and cases as one list of cases (the order of the tests)."""
    out: list[dict[str, Any]] = [{"text": s, "match": True} for s in spec.positive]
    out += [{"text": s, "match": False} for s in spec.negative]
    out += [c.model_dump() for c in spec.cases]
    return out


def unwrap(text: str) -> str:
    """A pattern from an answer: without surrounding backticks, quotes or ``/.../`` slashes."""
    text = text.strip("\n").strip()
    if len(text) >= 2 and text[0] == text[-1] == "`":
        text = text.strip("`")
    literal = re.fullmatch(r"r?(['\"])(.*)\1", text, re.S)
    if literal:
        text = literal.group(2)
    slashes = re.fullmatch(r"/(.*)/[a-z]*", text, re.S)
    if slashes:
        text = slashes.group(1)
    return text


class RegexLanguage:
    """Regular expressions in several flavours."""

    #: Python distributions its programs (or its harness) import in the sandbox.
    python_packages = ("regex", "google-re2")
    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = PATTERN_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "regex"
    aliases = ("regex", "regexp", "re", "re2", "regular-expression")
    #: Prose is a valid pattern: an unfenced answer is the whole text or nothing.
    code_regions = "none"

    def __init__(self, node: str | None = None) -> None:
        self._node = node
        self.node = node or shutil.which("node") or "node"
        files = resources.files("verifiers.languages")
        self._harness = files.joinpath("_regex_harness.py").read_bytes()
        self._js = files.joinpath("_regex_harness.js").read_bytes()

    def toolchain(self) -> str:
        """Flavours available here (for ``verifiers doctor``)."""
        found = ["python re"]
        for module, label in (
            ("regex", "regex"),
            ("re2", "re2 (google-re2)"),
        ):
            try:
                __import__(module)
                found.append(label)
            except ImportError:
                found.append(f"{label}: not installed")
        found.append("javascript (node)" if shutil.which(self.node) else "javascript: no node")
        return ", ".join(found)

    def parse_tests(self, raw: Any) -> TestSpec:
        """A regex spec (a dict without ``kind`` is taken as one)."""
        if isinstance(raw, Mapping) and "kind" not in raw:
            raw = {**raw, "kind": "regex"}
        spec = parse_tests(raw)
        if not isinstance(spec, RegexTests):
            raise SpecError("tests", f"regex runs regex tests, not {spec.kind} tests")
        if spec.gold is not None and spec.flavor in _MODULES and spec.flavor != "re2":
            # The spec's own pattern: a mistake of its author, said before anything runs.
            try:
                compile_pattern(spec.flavor, spec.gold)
            except ImportError:
                pass  # the flavour is not installed here: the sandbox says so
            except Exception as err:
                raise SpecError("tests.gold", f"does not compile as {spec.flavor}: {err}") from None
        return spec

    def prepare(self, code: str, spec: TestSpec) -> str:
        """The bare pattern."""
        return unwrap(code)

    def check_syntax(self, code: str, spec: TestSpec | None = None) -> SyntaxIssue | None:
        """tree-sitter-regex's first error, ``deferred``: the flavour's compiler decides.

        The compiler runs only in the sandbox, whose first test reports a pattern it
        refuses as ``syntax_error``: compiling is not bounded in time (a 64 KB pattern of
        case-insensitive full-range classes costs ``re`` a minute of CPU), and this
        process serves every verification in flight. A pattern over
        ``TREE_SITTER_LIMIT`` is not checked here at all.
        """
        if len(code) > TREE_SITTER_LIMIT:
            return None
        issue = tree_sitter_check(GRAMMAR, code)
        return dataclasses.replace(issue, deferred=True) if issue is not None else None

    def parses(self, text: str) -> bool:
        """A one-line text is taken as a pattern."""
        stripped = text.strip()
        return bool(stripped) and "\n" not in stripped

    def describe_test(self, spec: TestSpec, index: int) -> tuple[str, str]:
        """The string and what the pattern must do with it."""
        assert isinstance(spec, RegexTests)
        cases = cases_of(spec)
        if index >= len(cases):
            return "equivalence with the gold pattern", spec.gold or ""
        case = cases[index]
        if case.get("replace") is not None:
            return case["text"], f"sub({case['replace']!r}) -> {case['expected']!r}"
        if case.get("groups") is not None:
            return case["text"], f"groups {case['groups']!r}"
        return case["text"], "match" if case["match"] else "no match"

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """Regexes have no build step."""
        return TestOutcome(Status.PASSED)

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One sandboxed run per string, and one for the equivalence test."""
        assert isinstance(spec, RegexTests)
        cases = cases_of(spec)
        meta = {
            "mode": spec.mode,
            "flavor": spec.flavor,
            "cases": cases,
            "gold": spec.gold,
            "timeout_ms": int(limits.timeout_s * 1000),
        }
        step_limits = limits.step_limits()
        javascript = spec.flavor == "javascript"
        tests = []
        for index in selected:
            if javascript and index < len(cases):
                argv: tuple[str, ...] = (
                    "{node}",
                    "{program_dir}/regex.js",
                    "{program_dir}",
                    str(index),
                )
                step = Step(argv=argv, limits=step_limits)
            else:
                # The equivalence test of the JavaScript flavour asks V8 (node) too.
                argv = ("{program_dir}", str(index), "{node}" if javascript else "")
                step = Step(argv=argv, limits=step_limits, kind="call", module=HARNESS)
            tests.append(ProgramTest(index=index, step=step))
        preload = [_MODULES.get(spec.flavor, "re")]
        uses_node = javascript
        program = Program(
            files={
                "harness.py": self._harness,
                "regex.js": self._js,
                "pattern.txt": code.encode("utf-8", errors="surrogateescape"),
                "spec.json": jsonio.dumps(meta).encode(),
            },
            tests=tuple(tests),
            preload_modules=tuple(preload),
            preload_entries=(HARNESS,),
            files_in_memory=not uses_node,
            toolchains=(NODE,) if uses_node else (),
        )
        return pin_toolchain(program, NODE, self._node) if uses_node else program

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """The flavour's compile error, or the case, or the equivalence verdict."""
        assert isinstance(spec, RegexTests)
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event)
        if limit is not None:
            if limit.status is Status.TIMEOUT:
                return TestOutcome(Status.TIMEOUT, limit.message + " (catastrophic backtracking?)")
            return limit
        syntax = by_event.get("syntax_error")
        if syntax is not None:
            return TestOutcome(
                Status.SYNTAX_ERROR,
                f"the pattern does not compile: {syntax.get('message', '')}",
                fatal=True,
            )
        record = by_event.get("case") or by_event.get("equivalence")
        if record is None:
            return TestOutcome(Status.RUNTIME_ERROR, "the test ended without a result")
        if record.get("nonce") != proc.nonce or not proc.nonce:
            return forged()
        if "equivalence" in by_event:
            return _judge_equivalence(record)
        return _judge_case(cases_of(spec)[test.index], record)


def _judge_case(case: dict[str, Any], record: dict[str, Any]) -> TestOutcome:
    matched = bool(record.get("matched"))
    actual = "match" if matched else "no match"
    if case.get("match") is not None and matched != case["match"]:
        wanted = "should match" if case["match"] else "should not match"
        return TestOutcome(Status.FAILED, f"the pattern {wanted} {case['text']!r}", actual)
    # What the harness reported is shown with describe_value, total on any value.
    if case.get("groups") is not None and record.get("groups") != case["groups"]:
        got = describe_value(record.get("groups"), 1000)
        return TestOutcome(Status.FAILED, f"groups {got}, expected {case['groups']!r}", got)
    if case.get("replace") is not None and record.get("replaced") != case["expected"]:
        got = describe_value(record.get("replaced"), 1000)
        return TestOutcome(
            Status.FAILED, f"substitution gave {got}, expected {case['expected']!r}", got
        )
    return TestOutcome(Status.PASSED, actual=actual)


def _count(record: dict[str, Any], field: str) -> int:
    value = record.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: Any, limit: int = 300) -> str:
    return str(value)[:limit] if value is not None else ""


def _judge_equivalence(record: dict[str, Any]) -> TestOutcome:
    """The equivalence record as a verdict; a pass the automata did not prove says so."""
    undecidable = _text(record.get("undecidable"))
    noops = record.get("noops")
    hack = ""
    if isinstance(noops, list) and noops:
        # A construct that matches as if it were absent has no use but to escape the model.
        what = ", ".join(_text(n, 60) for n in noops[:3])
        hack = f"the pattern holds {what}, which changes nothing (an escape from the model)"
    checked, generated = _count(record, "checked"), _count(record, "generated")
    if record.get("equivalent") is True:
        if record.get("identical"):
            message = "equivalent to the gold pattern (the same text)"
        elif not undecidable:
            message = "equivalent to the gold pattern"
        elif record.get("basis") == "generated":
            message = (
                f"agrees with the gold pattern on all {generated} strings generated from the "
                f"automata and {checked} example strings; not proven (equivalence is not "
                f"decidable here: {undecidable})"
            )
        else:
            gold = _text(record.get("gold_model")) or "outside the model"
            message = (
                f"agrees with the gold pattern on the {checked} example strings only"
                f"{f' and {generated} generated strings' if generated else ''}; not proven "
                f"(equivalence is not decidable here: {undecidable}; the gold pattern: {gold})"
            )
        return TestOutcome(Status.PASSED, message, hack=hack)
    witness = record.get("witness")
    unsampled = _text(record.get("unsampled"))
    if not isinstance(witness, str) and unsampled:
        return TestOutcome(
            Status.FAILED,
            "equivalence with the gold pattern is not decidable "
            f"({undecidable}), and strings could not be drawn where your pattern's "
            f"lookarounds, atomic groups or references act ({unsampled}): not judged equal",
            hack=hack,
        )
    if not isinstance(witness, str):
        return TestOutcome(
            Status.FAILED,
            "equivalence with the gold pattern is not decidable "
            f"({undecidable}) and there are no example strings to compare on",
            hack=hack,
        )
    gold_accepts = record.get("gold_accepts")
    if gold_accepts is None:
        side = "they disagree on it"
    elif gold_accepts:
        side = "the gold pattern matches it and yours does not"
    else:
        side = "yours matches it and the gold pattern does not"
    message = f"not equivalent to the gold pattern: shortest distinguishing string {witness!r}"
    message += f" ({side})"
    if undecidable:
        message += (
            f", found by the engines among {checked} example and {generated} generated "
            f"strings (the automata could not decide: {undecidable})"
        )
    return TestOutcome(Status.FAILED, message, repr(witness), hack=hack)


# --- the case table ------------------------------------------------------------------------

_RE = {"positive": ["ab", "aab"], "negative": ["b", "abc"]}


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "regex",
        {
            "ok:python": ("a+b", _RE, Status.PASSED),
            "ok:javascript": ("a+b", {**_RE, "flavor": "javascript"}, Status.PASSED),
            "ok:re2": ("a+b", {**_RE, "flavor": "re2"}, Status.PASSED),
            "ok:equivalent to the gold pattern": ("aa*b", {**_RE, "gold": "a+b"}, Status.PASSED),
            "wrong_answer:too loose": ("a*b", _RE, Status.FAILED),
            "wrong_answer:not equivalent": ("a+b?", {"gold": "a+b"}, Status.FAILED),
            "no_code:empty": ("", _RE, Status.NO_CODE),
            "syntax_error:unclosed group": ("(a+b", _RE, Status.SYNTAX_ERROR),
            "timeout:catastrophic backtracking": (
                "(a+)+$",
                {"positive": ["aaa"], "negative": ["a" * 40 + "!"], "mode": "search"},
                Status.TIMEOUT,
            ),
        },
    )
