"""Differential verification: run a candidate and a reference on generated inputs.

:func:`differential` searches for an input on which a candidate program and a reference
solution disagree, and shrinks it with hypothesis to a smallest one. :func:`augment_tests`
adds tests whose expected outputs come from a reference (in the spirit of EvalPlus), so a
reward catches programs that pass the few given tests but are wrong.

Both programs always run sandboxed, on the same runtime as every other verification.
Inputs are generated in batches (one sandbox session per batch and program); only
shrinking runs inputs one at a time, within a time budget. The candidate's time limit is
derived from the reference's measured time, ``max(min_timeout_s, timeout_factor x
slowest reference run)``, so a slow host does not turn correct programs into timeouts.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from pydantic import BaseModel, ConfigDict

from verifiers import jsonio, registry
from verifiers._async import run_sync
from verifiers.api import CompareArg, LimitsArg, RuntimeArg, resolve_runtime
from verifiers.compare import describe_value
from verifiers.core import CodeVerifier, Options, make_options
from verifiers.errors import SandboxError, SpecError
from verifiers.protocols import TestOutcome
from verifiers.results import Result, Status
from verifiers.specs import (
    AssertListTests,
    AssertScriptTests,
    CallTests,
    ExpressionCase,
    ExpressionTests,
    StdioCase,
    StdioTests,
    TestSpec,
)
from verifiers.testing.inputs import (
    check_callable,
    find_function,
    literal_calls,
    python_literal,
    strategy_from_examples,
    strategy_from_signature,
)

Mode = Literal["call", "stdio"]

#: Inputs in the first batch of a search (the batches then grow four-fold).
FIRST_BATCH = 10

_STAGE_FAILURES = (Status.NO_CODE, Status.SYNTAX_ERROR, Status.COMPILE_ERROR)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class Counterexample(_Frozen):
    """An input on which the candidate and the reference disagree.

    Attributes:
        input: The arguments (a tuple, call mode) or the stdin text (stdio mode).
        shown: The input as text: ``f(1, [])`` or the stdin text.
        candidate_output: What the candidate returned or printed (or its error).
        reference_output: What the reference returned or printed.
        status: The candidate's status on this input (``failed``, ``timeout``...).
        message: The candidate's error message, if any.
    """

    input: Any
    shown: str
    candidate_output: str
    reference_output: str
    status: Status
    message: str = ""


class DifferentialReport(_Frozen):
    """The outcome of :func:`differential`.

    Attributes:
        agree: No input was found on which the two disagree.
        counterexample: The smallest disagreeing input found (after shrinking).
        examples: Distinct inputs both programs ran on in the search (the search stops
            after the batch in which the first disagreement was found).
        disagreements: Inputs of the search on which they disagreed (before shrinking).
        reference_rejected: Generated inputs the reference failed on (error, timeout):
            treated as outside the function's domain and not held against the candidate.
        candidate_timeout_s: The candidate's time limit per input, derived from the
            reference's measured time.
        shrink_runs: Inputs run one at a time while shrinking.
        batches: Batches of the search (one sandbox session per program each).
        duration_s: Wall time of the whole search.
    """

    agree: bool
    counterexample: Counterexample | None = None
    examples: int = 0
    disagreements: int = 0
    reference_rejected: int = 0
    candidate_timeout_s: float = 0.0
    shrink_runs: int = 0
    batches: int = 0
    duration_s: float = 0.0
    language: str = ""
    mode: str = ""


@dataclass(frozen=True)
class _Verdict:
    """The comparison on one input: agree, disagree (with the example) or rejected."""

    agree: bool
    rejected: bool = False
    example: Counterexample | None = None


class _Disagree(Exception):
    def __init__(self, example: Counterexample) -> None:
        super().__init__(example.shown)
        self.example = example


@dataclass
class _Reference:
    """What the reference produced on a batch of inputs (``None`` where it failed)."""

    outputs: list[tuple[Any] | None]
    slowest_s: float


def every_input(options: Options) -> Options:
    """``options`` for a run whose every input counts: no early stop, no default budget.

    Differential testing reads what each input gave; a test not run would be a
    disagreement (or a reference output) that never existed.
    """
    limits = options.limits.model_copy(update={"budget_timeouts": None})
    return dataclasses.replace(options, stop_on_failure=False, limits=limits)


class _Pair:
    """Runs the reference and the candidate on inputs, with the shared settings."""

    def __init__(
        self,
        language: str,
        mode: Mode,
        fn_name: str | None,
        reference: str,
        candidate: str,
        options: Options,
        runtime: RuntimeArg,
        timeout_factor: float,
        min_timeout_s: float,
    ) -> None:
        self.verifier = CodeVerifier(registry.get_language(language), resolve_runtime(runtime))
        self.mode = mode
        self.fn_name = fn_name
        self.reference = reference
        self.candidate = candidate
        self.options = options
        self.timeout_factor = timeout_factor
        self.min_timeout_s = min_timeout_s
        self.timeout_s = min_timeout_s
        self.candidate_stage: Counterexample | None = None

    def shown(self, value: Any) -> str:
        if self.mode == "stdio":
            return str(value)
        assert self.fn_name is not None
        args = ", ".join(python_literal(a) for a in value)
        return f"{self.fn_name}({args})"

    def spec(self, inputs: Sequence[Any], expected: Sequence[Any] | None = None) -> TestSpec:
        compare = self.options.compare
        if self.mode == "stdio":
            cases = [
                StdioCase(input=text, output="" if expected is None else expected[i])
                for i, text in enumerate(inputs)
            ]
            return StdioTests(cases=cases, **({"compare": compare} if compare else {}))
        exprs = [
            ExpressionCase(
                expression=self.shown(args), expected=None if expected is None else expected[i]
            )
            for i, args in enumerate(inputs)
        ]
        return ExpressionTests(cases=exprs, **({"compare": compare} if compare else {}))

    async def run_reference(self, inputs: Sequence[Any]) -> _Reference:
        seen: dict[int, TestOutcome] = {}
        result = await self.verifier.verify(
            self.reference, self.spec(inputs), self.options, observe=seen.__setitem__
        )
        _require_reference(result)
        outputs: list[tuple[Any] | None] = []
        slowest = 0.0
        walls = {t.index: t.wall_s for t in result.tests}
        for i in range(len(inputs)):
            outcome = seen.get(i)
            if outcome is None:
                outputs.append(None)
            elif self.mode == "call":
                outputs.append(outcome.returned)
            elif outcome.status in (Status.PASSED, Status.FAILED):
                outputs.append((outcome.actual,))
            else:
                outputs.append(None)
            if outputs[-1] is not None:
                slowest = max(slowest, walls.get(i, 0.0))
        return _Reference(outputs, slowest)

    async def compare(self, inputs: Sequence[Any]) -> list[_Verdict]:
        """Run both programs on ``inputs`` (two sandbox sessions) and compare."""
        ref = await self.run_reference(inputs)
        valid = [i for i, out in enumerate(ref.outputs) if out is not None]
        verdicts = [_Verdict(agree=True, rejected=True)] * len(inputs)
        if not valid:
            return verdicts
        self.timeout_s = max(self.timeout_s, self.timeout_factor * ref.slowest_s)
        expected = [ref.outputs[i][0] for i in valid]  # type: ignore[index]
        chosen = [inputs[i] for i in valid]
        if self.candidate_stage is not None:
            return self._stage_verdicts(inputs, valid, expected, verdicts)
        limits = self.options.limits.model_copy(update={"timeout_s": min(3600, self.timeout_s)})
        options = Options(**{**self.options.__dict__, "limits": limits})
        result = await self.verifier.verify(self.candidate, self.spec(chosen, expected), options)
        if result.infra_error:
            raise SandboxError(f"the candidate could not be run: {result.feedback}")
        if result.status in _STAGE_FAILURES:
            # A program-wide failure: every input disagrees, nothing more needs to run.
            self.candidate_stage = Counterexample(
                input=None,
                shown="",
                candidate_output="",
                reference_output="",
                status=result.status,
                message=result.feedback,
            )
            return self._stage_verdicts(inputs, valid, expected, verdicts)
        by_index = {t.index: t for t in result.tests}
        for j, i in enumerate(valid):
            test = by_index.get(j)
            if test is not None and test.status is Status.PASSED:
                verdicts[i] = _Verdict(agree=True)
                continue
            verdicts[i] = _Verdict(
                agree=False,
                example=Counterexample(
                    input=inputs[i],
                    shown=self.shown(inputs[i]),
                    candidate_output=test.actual if test else "",
                    reference_output=self._describe(expected[j]),
                    status=test.status if test else Status.TIMEOUT,
                    message=test.message if test else "not run",
                ),
            )
        return verdicts

    def _stage_verdicts(
        self,
        inputs: Sequence[Any],
        valid: list[int],
        expected: list[Any],
        verdicts: list[_Verdict],
    ) -> list[_Verdict]:
        stage = self.candidate_stage
        assert stage is not None
        for j, i in enumerate(valid):
            verdicts[i] = _Verdict(
                agree=False,
                example=stage.model_copy(
                    update={
                        "input": inputs[i],
                        "shown": self.shown(inputs[i]),
                        "reference_output": self._describe(expected[j]),
                    }
                ),
            )
        return verdicts

    def _describe(self, value: Any) -> str:
        return str(value) if self.mode == "stdio" else describe_value(value, 2000)


def _require_reference(result: Result) -> None:
    if result.infra_error:
        raise SandboxError(f"the reference could not be run: {result.feedback}")
    if result.status in _STAGE_FAILURES:
        raise SpecError("reference", f"{result.status.value}: {result.feedback}")


def _quiet(max_examples: int, phases: list[Phase]) -> settings:
    return settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        phases=phases,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )


def _draw_inputs(
    strategy: st.SearchStrategy[Any], count: int, seed: int, mode: Mode, shown: Any
) -> list[Any]:
    """``count`` generated inputs (distinct), the same ones for the same seed."""
    drawn: dict[str, Any] = {}

    @hypothesis_seed(seed)
    @_quiet(count, [Phase.generate])
    @given(strategy)
    def gather(value: Any) -> None:
        value = _normalise(value, mode)
        drawn.setdefault(shown(value), copy.deepcopy(value))

    gather()
    return list(drawn.values())


def _normalise(value: Any, mode: Mode) -> Any:
    if mode == "stdio":
        if not isinstance(value, str):
            raise SpecError("inputs", f"stdin inputs must be strings, got {type(value).__name__}")
        return value
    return value if isinstance(value, tuple) else (value,)


def _resolve_mode(language: str, fn_name: str | None, mode: Mode | None) -> Mode:
    chosen: Mode = mode or ("call" if fn_name else "stdio")
    if chosen not in ("call", "stdio"):
        raise SpecError("mode", f"expected 'call' or 'stdio', got {chosen!r}")
    if chosen == "call":
        if registry.canonical_language(language) != "python":
            raise SpecError(
                "mode", f"call mode runs Python functions; test {language} programs on stdin"
            )
        if not fn_name:
            raise SpecError("fn_name", "call mode needs the function's name")
        check_callable(fn_name)
    return chosen


def _strategy(
    inputs: Any, mode: Mode, reference_code: str | None, fn_name: str | None
) -> st.SearchStrategy[Any]:
    if inputs is not None:
        if not isinstance(inputs, st.SearchStrategy):
            raise SpecError(
                "inputs", f"expected a hypothesis strategy, got {type(inputs).__name__}"
            )
        return inputs
    if mode == "stdio":
        raise SpecError("inputs", "stdin programs need an input strategy (of strings)")
    assert fn_name is not None
    if reference_code is None:
        raise SpecError("reference", "no Python code found to infer inputs from")
    return strategy_from_signature(reference_code, fn_name)


def _reference_code(language: str, reference: str) -> str | None:
    from verifiers.extraction import extract_code

    lang = registry.get_language(language)
    return extract_code(reference, lang.aliases, lang.parses).code


def differential(
    language: str,
    candidate: str,
    reference: str,
    *,
    inputs: st.SearchStrategy[Any] | None = None,
    fn_name: str | None = None,
    mode: Mode | None = None,
    max_examples: int = 100,
    seed: int = 0,
    batch_size: int = 200,
    limits: LimitsArg = None,
    runtime: RuntimeArg = None,
    compare: CompareArg = None,
    timeout_factor: float = 5.0,
    min_timeout_s: float = 1.0,
    shrink_budget_s: float = 60.0,
) -> DifferentialReport:
    """Search for an input on which ``candidate`` and ``reference`` disagree.

    Call mode (Python, ``fn_name`` given) calls the function with generated arguments and
    compares return values (with ``compare``'s tolerances); stdio mode (every language)
    feeds generated stdin text and compares output. Both programs run sandboxed. A
    disagreement is shrunk by hypothesis to a smallest input within ``shrink_budget_s``.

    Args:
        language: Language of both programs.
        candidate: The program under test (a completion: markdown or bare code).
        reference: A solution known to be right.
        inputs: A hypothesis strategy: argument tuples (call mode; a value that is not a
            tuple is one argument) or stdin strings. Call mode infers it from the type
            hints of the reference's signature when omitted.
        fn_name: The function to call: ``f``, or ``Solution().f`` for LeetCode classes.
        mode: ``call`` or ``stdio`` (default: ``call`` when ``fn_name`` is given).
        max_examples: Inputs generated in the search.
        seed: Seed of the generation: the same seed gives the same inputs.
        batch_size: The most inputs per sandbox session in the search (batches grow
            from 10, and the search stops at the first batch with a disagreement).
        limits: Limits of the reference's runs (and the candidate's, but for its time).
        runtime: Runtime of both programs.
        compare: Output comparison options.
        timeout_factor: The candidate may take this many times the reference's slowest run.
        min_timeout_s: ... and at least this long.
        shrink_budget_s: Time allowed for shrinking a disagreement.

    Returns:
        A :class:`DifferentialReport`; ``agree`` is false when a disagreement was found.

    Raises:
        SpecError: A malformed argument, or a reference that does not compile (it must
            be right, so its failure is the caller's to fix).
        SandboxError: The sandbox could not run the programs.
    """
    started = time.perf_counter()
    chosen = _resolve_mode(language, fn_name, mode)
    for name, value in (("candidate", candidate), ("reference", reference)):
        if not isinstance(value, str):
            raise SpecError(name, f"expected a string, got {type(value).__name__}")
    for name, number in (("max_examples", max_examples), ("batch_size", batch_size)):
        if not isinstance(number, int) or number < 1:
            raise SpecError(name, f"expected a positive integer, got {number!r}")
    if timeout_factor <= 0 or min_timeout_s <= 0 or shrink_budget_s < 0:
        raise SpecError("timeout_factor", "timeouts and budgets must be positive")
    strategy = _strategy(inputs, chosen, _reference_code(language, reference), fn_name)
    pair = _Pair(
        language,
        chosen,
        fn_name,
        reference,
        candidate,
        every_input(make_options(None, limits, compare, None)),
        runtime,
        timeout_factor,
        min_timeout_s,
    )
    drawn = _draw_inputs(strategy, max_examples, seed, chosen, pair.shown)
    verdicts: dict[str, _Verdict] = {}
    # Batches grow from FIRST_BATCH: hypothesis draws its simplest inputs first, and an
    # easy bug found there ends the search early; later batches amortise the sessions.
    start, size, batches = 0, min(FIRST_BATCH, batch_size), 0
    while start < len(drawn):
        chunk = drawn[start : start + size]
        batches += 1
        for value, verdict in zip(chunk, run_sync(pair.compare(chunk)), strict=True):
            verdicts[pair.shown(value)] = verdict
        if any(v.example is not None for v in verdicts.values()):
            break
        start, size = start + len(chunk), min(size * 4, batch_size)
    rejected = sum(v.rejected for v in verdicts.values())
    found = [v.example for v in verdicts.values() if v.example is not None]
    report = {
        "examples": len(verdicts) - rejected,
        "disagreements": len(found),
        "reference_rejected": rejected,
        "batches": batches,
        "language": registry.canonical_language(language),
        "mode": chosen,
    }
    if not found:
        return DifferentialReport(
            agree=True,
            candidate_timeout_s=pair.timeout_s,
            duration_s=time.perf_counter() - started,
            **report,
        )
    smallest, shrink_runs = _shrink(pair, strategy, verdicts, max_examples, seed, shrink_budget_s)
    if smallest is None:  # shrinking did not reproduce it: the smallest one seen
        smallest = min(found, key=lambda e: (len(e.shown), e.shown))
    return DifferentialReport(
        agree=False,
        counterexample=smallest,
        candidate_timeout_s=pair.timeout_s,
        shrink_runs=shrink_runs,
        duration_s=time.perf_counter() - started,
        **report,
    )


def _shrink(
    pair: _Pair,
    strategy: st.SearchStrategy[Any],
    verdicts: dict[str, _Verdict],
    max_examples: int,
    seed: int,
    budget_s: float,
) -> tuple[Counterexample | None, int]:
    """Let hypothesis shrink: the same seed replays the search from the verdicts seen."""
    deadline = time.monotonic() + budget_s
    runs = 0

    @hypothesis_seed(seed)
    @_quiet(max_examples, [Phase.generate, Phase.shrink])
    @given(strategy)
    def oracle(value: Any) -> None:
        nonlocal runs
        value = _normalise(value, pair.mode)
        key = pair.shown(value)
        verdict = verdicts.get(key)
        if verdict is None:
            if time.monotonic() > deadline:
                return  # out of budget: what is unknown counts as agreeing
            runs += 1
            [verdict] = run_sync(pair.compare([value]))
            verdicts[key] = verdict
        if verdict.rejected:
            reject()
        if verdict.example is not None:
            raise _Disagree(verdict.example)

    try:
        oracle()
    except _Disagree as found:
        return found.example, runs
    except HypothesisException:
        pass  # flaky or unsatisfiable replay: fall back to the smallest seen
    return None, runs


async def adifferential(language: str, candidate: str, reference: str, **kw: Any) -> Any:
    """:func:`differential` for async code (runs in a worker thread)."""
    return await asyncio.to_thread(differential, language, candidate, reference, **kw)


# --- test augmentation --------------------------------------------------------------------


class Augmented(_Frozen):
    """Tests extended by :func:`augment_tests`.

    Attributes:
        spec: The original tests plus the generated ones (same format where possible).
        added: Generated tests added.
        reference_rejected: Generated inputs the reference failed on (left out).
        limits: Suggested limits: the time limit derived from the reference's slowest run.
    """

    spec: Any
    added: int
    reference_rejected: int
    limits: Any


def _function_tests(
    spec: TestSpec, reference_code: str | None
) -> tuple[str, list[tuple[Any, ...]]]:
    """The function the tests call and the literal arguments they call it with."""
    if isinstance(spec, CallTests):
        return spec.fn_name, [tuple(args) for args in spec.inputs]
    if isinstance(spec, AssertScriptTests):
        if not spec.entry_point:
            raise SpecError("tests.entry_point", "test augmentation needs the entry point")
        calls = literal_calls(spec.test, {"candidate", spec.entry_point})
        return spec.entry_point, [args for _, args in calls]
    if isinstance(spec, (ExpressionTests, AssertListTests)):
        sources = (
            [c.expression for c in spec.cases]
            if isinstance(spec, ExpressionTests)
            else spec.asserts
        )
        defined = set()
        if reference_code:
            import ast

            try:
                tree = ast.parse(reference_code)
                defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            except SyntaxError:
                pass
        counts: dict[str, list[tuple[Any, ...]]] = {}
        for source in sources:
            for name, args in literal_calls(source, defined):
                counts.setdefault(name, []).append(args)
        if not counts:
            raise SpecError("tests", "found no call of a function the reference defines")
        name = max(counts, key=lambda n: len(counts[n]))
        return name, counts[name]
    raise SpecError("tests", f"cannot augment {type(spec).__name__} tests")


def augment_tests(
    reference: str,
    tests: Any,
    *,
    n: int = 50,
    language: str = "python",
    inputs: st.SearchStrategy[Any] | None = None,
    seed: int = 0,
    limits: LimitsArg = None,
    runtime: RuntimeArg = None,
    timeout_factor: float = 5.0,
    min_timeout_s: float = 1.0,
) -> Augmented:
    """Add ``n`` generated tests whose expected outputs come from running ``reference``.

    Python function tests (call, expression, MBPP asserts, HumanEval ``check``) get
    arguments from ``inputs``, or else from the type hints of the reference's signature,
    or else from the types and ranges of the arguments the tests already use. Stdin tests
    (any language) need ``inputs`` (a strategy of strings). The reference runs sandboxed;
    inputs it fails on are left out.

    Returns:
        :class:`Augmented`: the extended spec (call and expression tests get more cases,
        MBPP more asserts, HumanEval a ``check`` that also runs the new cases, stdin tests
        more cases) and suggested limits.

    Raises:
        SpecError: The tests cannot be augmented, or the reference does not compile.
    """
    if not isinstance(n, int) or n < 1:
        raise SpecError("n", f"expected a positive integer, got {n!r}")
    verifier = CodeVerifier(registry.get_language(language), resolve_runtime(runtime))
    spec = verifier.parse_tests(tests)
    options = every_input(make_options(None, limits, None, None))
    code = _reference_code(language, reference)
    if isinstance(spec, StdioTests):
        pair = _Pair(
            language,
            "stdio",
            None,
            reference,
            "",
            options,
            runtime,
            timeout_factor,
            min_timeout_s,
        )
        strategy = _strategy(inputs, "stdio", code, None)
        seen = {c.input for c in spec.cases}
        drawn = [x for x in _draw_inputs(strategy, n, seed, "stdio", str) if x not in seen]
        ref = run_sync(pair.run_reference(drawn))
        cases = [
            StdioCase(input=x, output=out[0])
            for x, out in zip(drawn, ref.outputs, strict=True)
            if out is not None
        ]
        new: TestSpec = spec.model_copy(update={"cases": [*spec.cases, *cases]})
        return _augmented(new, len(cases), len(drawn) - len(cases), options, ref, pair)
    if registry.canonical_language(language) != "python":
        raise SpecError("tests", f"{language} tests can be augmented on stdin only")
    fn_name, examples = _function_tests(spec, code)
    reference_code = code
    body_only = code is not None and find_function(code, fn_name) is None
    if isinstance(spec, AssertScriptTests) and spec.prompt and body_only:
        reference_code = spec.prompt + (code or "")  # a body-only reference, as HumanEval has
    if inputs is None and reference_code is not None:
        try:
            inputs = strategy_from_signature(reference_code, fn_name)
        except SpecError:
            inputs = None
    strategy = inputs if inputs is not None else strategy_from_examples(examples)
    strategy = _strategy(strategy, "call", reference_code, fn_name)
    pair = _Pair(
        language,
        "call",
        fn_name,
        reference if reference_code == code else f"```python\n{reference_code}\n```",
        "",
        options,
        runtime,
        timeout_factor,
        min_timeout_s,
    )
    known = {pair.shown(tuple(e)) for e in examples}
    drawn = [
        x for x in _draw_inputs(strategy, n, seed, "call", pair.shown) if pair.shown(x) not in known
    ]
    ref = run_sync(pair.run_reference(drawn))
    kept = [(x, out[0]) for x, out in zip(drawn, ref.outputs, strict=True) if out is not None]
    new = _extend(spec, fn_name, kept, pair)
    return _augmented(new, len(kept), len(drawn) - len(kept), options, ref, pair)


def _augmented(
    spec: TestSpec, added: int, rejected: int, options: Options, ref: _Reference, pair: _Pair
) -> Augmented:
    timeout = max(pair.min_timeout_s, pair.timeout_factor * ref.slowest_s)
    return Augmented(
        spec=spec,
        added=added,
        reference_rejected=rejected,
        limits=options.limits.model_copy(update={"timeout_s": min(3600, timeout)}),
    )


def _check_line(call: str, expected: Any) -> str:
    """An assert of one generated case; floats with a tolerance, as EvalPlus does."""
    want = python_literal(expected)
    if isinstance(expected, float):
        return f"assert abs({call} - {want}) <= 1e-6 * max(1.0, abs({want}))"
    return f"assert {call} == {want}"


def _extend(spec: TestSpec, fn_name: str, kept: list[tuple[Any, Any]], pair: _Pair) -> TestSpec:
    if isinstance(spec, CallTests):
        inputs, outputs = list(spec.inputs), list(spec.outputs)
        for args, value in kept:
            try:  # call tests travel as JSON: keep only what survives it
                jsonio.dumps([list(args), value], allow_nan=False)
            except (TypeError, ValueError):
                continue
            inputs.append(list(args))
            outputs.append(value)
        return spec.model_copy(update={"inputs": inputs, "outputs": outputs})
    if isinstance(spec, ExpressionTests):
        cases = [ExpressionCase(expression=pair.shown(a), expected=v) for a, v in kept]
        return spec.model_copy(update={"cases": [*spec.cases, *cases]})
    if isinstance(spec, AssertListTests):
        lines = [_check_line(pair.shown(a), v) for a, v in kept]
        return spec.model_copy(update={"asserts": [*spec.asserts, *lines]})
    assert isinstance(spec, AssertScriptTests)
    body = "\n".join(
        "    " + _check_line("candidate(" + ", ".join(python_literal(x) for x in a) + ")", v)
        for a, v in kept
    )
    test = (
        f"{spec.test}\n\n_verifiers_given_check = check\n\n\ndef check(candidate):\n"
        f"    _verifiers_given_check(candidate)\n{body or '    pass'}\n"
    )
    return spec.model_copy(update={"test": test})


__all__ = [
    "Augmented",
    "Counterexample",
    "DifferentialReport",
    "adifferential",
    "augment_tests",
    "differential",
]
