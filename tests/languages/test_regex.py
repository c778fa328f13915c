"""Regular expressions: StructuredRegex examples, flavours, equivalence with a witness."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

import verifiers
from verifiers import Status
from verifiers.languages.regex import unwrap
from verifiers.runtimes import LocalRuntime
from verifiers.testing.datasets import dataset


def verified() -> list[dict]:  # type: ignore[type-arg]
    return [r for r in dataset("structured_regex").rows() if r["regex_python_verified"]]


@pytest.mark.slow
def test_every_verified_gold_regex_accepts_its_examples(runtime: LocalRuntime) -> None:
    rows = verified()
    items = [
        {
            "language": "regex",
            "completion": r["regex_python"],
            "tests": {"positive": r["pos_examples"], "negative": r["neg_examples"]},
        }
        for r in rows
    ]
    results = verifiers.score_batch(items, runtime=runtime)
    wrong = [
        (r["id"], res.feedback[:200]) for r, res in zip(rows, results, strict=True) if not res.ok
    ]
    assert not wrong, wrong[:3]
    assert len(results) == len(rows) > 0


def _perturb(pattern: str) -> str | None:
    """A small change: one bounded repetition count plus one (it may keep the language)."""
    found = re.search(r"\{(\d+)\}", pattern)
    if found is None:
        return None
    n = int(found.group(1))
    return pattern[: found.start()] + "{" + str(n + 1) + "}" + pattern[found.end() :]


def _differs_on_examples(row: dict, perturbed: str) -> bool:  # type: ignore[type-arg]
    gold = row["regex_python"]
    texts = row["pos_examples"] + row["neg_examples"]
    return any(bool(re.fullmatch(gold, t)) != bool(re.fullmatch(perturbed, t)) for t in texts)


def test_perturbed_regexes_get_a_true_distinguishing_string(runtime: LocalRuntime) -> None:
    # Only perturbations the dataset's own examples prove to change the language.
    pairs = []
    for row in verified():
        perturbed = _perturb(row["regex_python"])
        if perturbed is not None and _differs_on_examples(row, perturbed):
            pairs.append((row["regex_python"], perturbed))
    pairs = pairs[:25]
    assert len(pairs) == 25
    for gold, perturbed in pairs:
        result = verifiers.score("regex", perturbed, {"gold": gold}, runtime=runtime)
        assert result.status is Status.FAILED, (gold, perturbed, result.feedback)
        witness = re.search(r"distinguishing string '(.*?)' \(", result.feedback)
        assert witness, result.feedback
        text = witness.group(1)
        assert bool(re.fullmatch(gold, text)) != bool(re.fullmatch(perturbed, text)), (
            gold,
            perturbed,
            text,
        )
        same = verifiers.score("regex", gold, {"gold": gold}, runtime=runtime)
        assert same.ok


def test_modes_and_cases(runtime: LocalRuntime) -> None:
    tests = {
        "mode": "search",
        "cases": [
            {"text": "mail me@host now", "groups": ["me", "host"]},
            {"text": "a@b c@d", "replace": "X", "expected": "X X"},
            {"text": "nothing here", "match": False},
        ],
    }
    assert verifiers.score("regex", r"(\w+)@(\w+)", tests, runtime=runtime).ok
    partial = verifiers.score("regex", r"(\w)@(\w+)", tests, runtime=runtime, policy="partial")
    assert partial.passed == 2 and partial.total == 3


def test_equivalence_outside_regular_languages_falls_back_to_examples(
    runtime: LocalRuntime,
) -> None:
    tests = {"gold": "(a)\\1", "positive": ["aa"], "negative": ["ab", "a"]}
    result = verifiers.score("regex", "aa", tests, runtime=runtime)
    assert result.ok and "not decidable" in result.tests[-1].message
    alone = verifiers.score("regex", "aa", {"gold": "(a)\\1"}, runtime=runtime)
    assert alone.status is Status.FAILED and "no example strings" in alone.feedback


@pytest.mark.parametrize("flavor", ["python", "regex", "re2", "javascript"])
def test_flavours(runtime: LocalRuntime, flavor: str) -> None:
    tests = {"positive": ["2024-01-31"], "negative": ["2024-1-31", "x2024-01-31"], "flavor": flavor}
    assert verifiers.score("regex", r"\d{4}-\d{2}-\d{2}", tests, runtime=runtime).ok


def test_re2_refuses_backreferences(runtime: LocalRuntime) -> None:
    result = verifiers.score(
        "regex", r"(a)\1", {"positive": ["aa"], "flavor": "re2"}, runtime=runtime
    )
    assert result.status is Status.SYNTAX_ERROR


def test_unwrap_answers() -> None:
    assert unwrap("`^a+$`") == "^a+$"
    assert unwrap("/ab+c/gi") == "ab+c"
    assert unwrap("r'\\d+'") == "\\d+"
    assert unwrap("a b") == "a b"


# --- the red team: escapes from the equivalence check, and the host's own cost ------------

ESCAPE_SPEC = {"gold": r"[a-z]+\d", "positive": ["ab1", "x9"], "negative": ["ab", "1", "AB1"]}


@pytest.mark.parametrize(
    ("flavor", "candidate"),
    [
        ("python", r"(?=)(?:ab1|x9)"),
        ("python", r"(?=)(?:ab1|x9|zzzz)"),
        ("python", r"(?:ab1|x9)(?:a{0}){30000}"),
        ("python", r"(?>ab1|x9)"),
        ("javascript", r"(?=)(?:ab1|x9)"),
        ("re2", r"(?:ab1|x9)\C{0}"),
    ],
)
def test_an_escape_from_the_automata_fails_with_a_witness(
    runtime: LocalRuntime, flavor: str, candidate: str
) -> None:
    spec = {**ESCAPE_SPEC, "flavor": flavor}
    result = verifiers.score("regex", candidate, spec, runtime=runtime, policy="partial")
    assert result.status is Status.FAILED and not result.infra_error, result.feedback
    gold_test = result.tests[-1]
    assert gold_test.status is Status.FAILED and "'a0'" in gold_test.message, gold_test.message
    if candidate.startswith("(?=)"):
        assert result.hack_suspected and "always-true lookahead" in result.hack_suspected
    honest = verifiers.score("regex", r"[a-z]+\d", spec, runtime=runtime)
    assert honest.ok and honest.hack_suspected is None


def test_a_gold_pattern_passes_its_own_test_even_outside_the_model(runtime: LocalRuntime) -> None:
    gold = r"(?=\w*\d)\w+"
    same = verifiers.score("regex", gold, {"gold": gold}, runtime=runtime)
    assert same.ok and "the same text" in same.tests[-1].message
    # Another text: with the gold outside the model, only example strings can pass it.
    spec = {"gold": gold, "positive": ["a1"], "negative": ["ab"]}
    other = verifiers.score("regex", r"(?=\w*\d)\w+$", spec, runtime=runtime)
    message = other.tests[-1].message
    assert other.ok and "example strings only" in message and "not proven" in message, message
    alone = verifiers.score("regex", r"(?=\w*\d)\w+$", {"gold": gold}, runtime=runtime)
    assert alone.status is Status.FAILED


class _Compiles:
    """Calls of the regex engines' compilers in this process, with a pattern's text."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[str] = []
        targets = [(re, "compile"), (re, "_compile")]
        # The regex extra's engines are dev dependencies: a missing one fails the test.
        for module_name in ("regex", "re2"):
            targets.append((importlib.import_module(module_name), "compile"))
        for module, attr in targets:
            monkeypatch.setattr(module, attr, self._wrap(getattr(module, attr)))

    def _wrap(self, real: Any) -> Any:
        def counted(pattern: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(pattern, str) and STALL_UNIT in pattern:
                self.seen.append(pattern)
            return real(pattern, *args, **kwargs)

        return counted


STALL_UNIT = r"[\x00-\U0010fffe]"


def test_the_host_never_compiles_an_answer(
    runtime: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Case-insensitive full-range classes: each costs `re` about 12 ms to compile (3800 of
    # them, under 64 KiB, a minute). tree-sitter-regex rejects the `-`, which sent the
    # pattern to the host's compiler to confirm, blocking every verification in flight.
    compiles = _Compiles(monkeypatch)
    stall = "(?i)" + STALL_UNIT * 400
    spec = {"positive": ["a"], "negative": ["b"]}
    items = [
        {"language": "regex", "completion": stall, "tests": spec},
        {"language": "regex", "completion": "a", "tests": spec},
        {"language": "regex", "completion": "(?i)" + STALL_UNIT, "tests": spec},
        {"language": "regex", "completion": "(a", "tests": spec},
    ]
    hostile, honest, small, broken = verifiers.score_batch(
        items, runtime=runtime, limits={"timeout_s": 1}
    )
    assert compiles.seen == []  # judged in the sandbox alone
    assert hostile.status in (Status.TIMEOUT, Status.FAILED), hostile.feedback
    assert honest.ok
    assert small.status is Status.FAILED  # valid Python (tree-sitter objected): it ran
    assert broken.status is Status.SYNTAX_ERROR and "does not compile" in broken.feedback
