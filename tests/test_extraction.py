"""Code extraction from completions: fenced blocks, code inside prose, modes, and linear cost.

These tests need no sandbox: extraction and syntax checks run in this process with the
real parsers (CPython's, tree-sitter's grammars, SQLite's). End-to-end verdicts on code
inside prose are in ``test_code_in_prose.py``.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifiers import registry
from verifiers.extraction import (
    BLOCKS_TRIED,
    SEARCH_BUDGET_CHARS,
    SEARCH_CALLS,
    Block,
    Extraction,
    extract_code,
    extract_for,
    find_blocks,
    looks_like_code,
    strip_reasoning,
)
from verifiers.languages.python import PythonLanguage
from verifiers.parsing import TREE_SITTER_LIMIT, SyntaxIssue, forget_checks
from verifiers.testing.strategies import (
    PATHOLOGICAL_UNITS,
    completions,
    pathological,
    pathological_units,
)

PY = PythonLanguage()
NAMES = PY.aliases


def extract(text: str, select: str = "last"):  # type: ignore[no-untyped-def]
    """The extraction without a syntax check: fenced blocks, or the whole text."""
    return extract_code(text, NAMES, PY.parses, select)  # type: ignore[arg-type]


def found(language: str, text: str, **options: Any) -> Extraction:
    """The extraction as the pipeline runs it for ``language``."""
    return extract_for(registry.get_language(language), text, **options)


# --- fenced blocks (unchanged behaviour) ----------------------------------------------------


def test_last_python_block_wins_by_default() -> None:
    text = "```python\nx = 1\n```\nthen\n```py\nx = 2\n```\n"
    assert extract(text).code == "x = 2\n"
    assert extract(text, "first").code == "x = 1\n"
    assert extract(text).format_ok


def test_tagged_block_beats_untagged_and_other_languages() -> None:
    text = "```\n3 4\n```\n```javascript\nlet x\n```\n```python\nprint(1)\n```\n```\nout\n```"
    assert extract(text).code == "print(1)\n"


def test_untagged_block_that_parses_is_preferred() -> None:
    text = "Example:\n```\n3 4 (\n```\nCode:\n```\nprint(sum(map(int, input().split())))\n```\n"
    result = extract(text)
    assert result.code is not None and result.code.startswith("print(")


def test_tilde_fences_and_longer_fences() -> None:
    assert extract("~~~python\na = 1\n~~~\n").code == "a = 1\n"
    assert extract("````python\ns = '```'\n````\n").code == "s = '```'\n"


def test_unclosed_block_is_used_but_format_not_ok() -> None:
    result = extract("Here:\n```python\ndef f():\n    return 1\n")
    assert result.code == "def f():\n    return 1\n"
    assert not result.format_ok and result.source == "unclosed_block"


def test_think_blocks_are_removed() -> None:
    text = "<think>```python\nwrong = 1\n```</think>\n```python\nright = 1\n```"
    assert extract(text).code == "right = 1\n"
    assert strip_reasoning("prompt part</think>answer") == "answer"
    assert strip_reasoning("answer <think> never closed ```python\nx\n```") == "answer "


def test_bare_code_is_used_only_when_it_parses_or_looks_like_code() -> None:
    result = extract("def f():\n    return 1\n")
    assert result.code is not None and not result.format_ok and result.source == "whole_text"
    broken = extract("def f(:\n    return 1\n")
    assert broken.code is not None  # reported later as a syntax error, not as no code
    prose = extract("I do not know how to solve this problem.")
    assert prose.code is None and "does not parse" in prose.reason


def test_blocks_in_another_language_only() -> None:
    result = found("python", "```rust\nfn main() {}\n```")
    assert result.code is None and "rust" in result.reason


def test_empty_completion() -> None:
    assert extract("").code is None
    assert extract("```python\n```").code is None
    assert found("python", "").reason == "the completion is empty"


def test_nul_bytes_and_unicode_do_not_break_extraction() -> None:
    result = extract("```python\nprint('é\u2028')\x00\n```")
    assert result.code is not None


def test_indented_fence_content_is_dedented() -> None:
    blocks = find_blocks("  ```python\n  x = 1\n    y = 2\n  ```")
    assert blocks[0].code == "x = 1\n  y = 2\n"


def test_looks_like_code() -> None:
    assert looks_like_code("x = compute(1)\nprint(x)")
    assert not looks_like_code("The answer is that you should sort the list.")


# --- code inside prose ----------------------------------------------------------------------

ADD = "def add(a, b):\n    return a + b\n"
STDIN_SUM = "a, b = map(int, input().split())\nprint(a + b)\n"

PYTHON_IN_PROSE = [
    ("intro line", f"Here is my solution:\n\n{ADD}", ADD),
    ("three prose lines", f"Let me think.\nWe add the numbers.\nThe code:\n{ADD}", ADD),
    ("trailing sentence", f"{ADD}This function returns the sum of a and b.\n", ADD),
    ("sentence without a full stop", f"{ADD}\nThis works because addition is simple\n", ADD),
    ("stdin program", f"Read two numbers:\n\n{STDIN_SUM}\nIt prints their sum.", STDIN_SUM),
    ("markdown heading and list", f"## Approach\n- add them\n\n{ADD}\n**Done**", ADD),
    ("a short label", f"Solution:\n{ADD}Explanation:\nIt adds.", ADD),
    ("an undecided line the parser rejects", f"Code below\n{ADD}", ADD),
    ("example output lines", f"{ADD}\nExample\nInput 1 2\nOutput 3\n", ADD),
    ("unicode prose", f"这是我的解决方案：\n{ADD}希望有帮助！", ADD),
    (
        "docstring with prose in it",
        'Solution\ndef add(a, b):\n    """\n    Adds two numbers.\n    """\n    return a + b\nBye.',
        'def add(a, b):\n    """\n    Adds two numbers.\n    """\n    return a + b\n',
    ),
    (
        "a module docstring at column 0",
        '"""\nThis module adds numbers.\n"""\nimport math\n\nprint(math.pi)\n',
        '"""\nThis module adds numbers.\n"""\nimport math\n\nprint(math.pi)\n',
    ),
    (
        "code indented in prose",
        "Here it is:\n\n    def add(a, b):\n        return a + b\n\nDone.",
        "    def add(a, b):\n        return a + b\n",
    ),
    (
        "a fenced block in another language, then the code",
        f"```text\n1 2\n```\nAnd the program:\n{STDIN_SUM}",
        STDIN_SUM,
    ),
]


@pytest.mark.parametrize(
    ("text", "code"), [c[1:] for c in PYTHON_IN_PROSE], ids=[c[0] for c in PYTHON_IN_PROSE]
)
def test_python_code_is_found_inside_prose(text: str, code: str) -> None:
    result = found("python", text)
    assert result.code == code
    assert not result.format_ok  # layered policies still reward the fence
    assert PY.parses(PY.prepare(result.code, PY.parse_tests({"inputs": [""], "outputs": [""]})))


def test_bare_code_is_the_whole_text() -> None:
    result = found("python", "\n" + ADD + "\n")
    assert (result.code, result.source) == ("\n" + ADD + "\n", "whole_text")


def test_prose_code_prose_code_joins_regions_that_parse_together() -> None:
    helper = "def helper(x):\n    return x * 2\n"
    main = "def solve(x):\n    return helper(x) + 1\n"
    text = f"First, a helper:\n\n{helper}\nThen the solution, which uses it:\n\n{main}\nDone."
    result = found("python", text)
    assert result.code == helper + "\n" + main and result.source == "region"


def test_regions_that_do_not_parse_together_give_the_largest() -> None:
    # Indented differently: joined, the second region is an unexpected indent.
    small = "    x = 1\n"
    large = "def solve(x):\n    y = x + 1\n    return y * 2\n"
    text = f"A start:\n\n{small}\nThe real answer is below.\n\n{large}"
    assert found("python", text).code == large
    ties = "One way:\n\n    a = 1\n\nAnother way:\n\nb = 2\n"
    assert found("python", ties).code == "b = 2\n"
    assert found("python", ties, select="first").code == "    a = 1\n"


def test_broken_code_inside_prose_is_a_syntax_error_not_no_code() -> None:
    result = found("python", "Here is my solution:\n\ndef add(a, b:\n    return a + b\n\nEnjoy.")
    assert result.code == "def add(a, b:\n    return a + b\n"
    assert PY.check_syntax(result.code) is not None


def test_more_broken_code_than_parsing_code_reports_the_broken_code() -> None:
    # A usage line parses, the solution does not: the solution's syntax error is the verdict.
    solution = "def solve(n):\n    total = (n +\n    return total\n"
    text = f"My solution:\n\n{solution}\nUsage:\n\nprint(solve(3))\n"
    assert found("python", text).code == solution
    # A misspelt keyword makes its line undecided; the function is still the answer.
    typo = "def add(a, b):\n    retrun a + b\n"
    assert found("python", typo).code == typo


def test_prose_alone_is_no_code() -> None:
    for text in (
        "I do not know how to solve this problem.",
        "Solution",
        "Thanks!\nHope this helps.",
        "If the list is empty, return 0. For each element we add it to the total.",
        "## Approach\n- sort the list\n- take the middle element",
    ):
        result = found("python", text)
        assert result.code is None, text
        assert "does not parse" in result.reason


OTHER_LANGUAGES = [
    (
        "javascript",
        "Here is my solution:\n\nfunction add(a, b) {\n  return a + b;\n}\nmodule.exports = add;\n"
        "\nThis exports the function.",
        "function add(a, b) {\n  return a + b;\n}\nmodule.exports = add;\n",
    ),
    (
        "javascript",
        "Read the numbers and print the sum:\n"
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "console.log(a + b);\nThat's it.",
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "console.log(a + b);\n",
    ),
    (
        "go",
        'The program:\n\npackage main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int\n'
        "\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n\nIt reads two integers.",
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int\n'
        "\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n",
    ),
    (
        # An import with a name (three words) is code, not a sentence.
        "go",
        'My answer:\n\nimport str "strings"\n\nfunc Up(s string) string {\n'
        "\treturn str.ToUpper(s)\n}\n\nIt upper-cases.",
        'import str "strings"\n\nfunc Up(s string) string {\n\treturn str.ToUpper(s)\n}\n',
    ),
    (
        "javascript",
        "Using the module:\n\nimport fs from 'fs';\nconsole.log(fs.readFileSync(0, 'utf8'));\n"
        "\nDone.",
        "import fs from 'fs';\nconsole.log(fs.readFileSync(0, 'utf8'));\n",
    ),
    (
        "rust",
        "Here's the Rust code:\n\nuse std::io::Read;\n\n"
        "fn main() {\n    let mut s = String::new();\n"
        '    std::io::stdin().read_to_string(&mut s).unwrap();\n    println!("{}", s.len());\n}\n'
        "\nThis prints the length.",
        "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n"
        '    std::io::stdin().read_to_string(&mut s).unwrap();\n    println!("{}", s.len());\n}\n',
    ),
    (
        "sql",
        "The query is:\n\nSELECT name FROM singer WHERE age > 40;\n\nIt keeps the older singers.",
        "SELECT name FROM singer WHERE age > 40;\n",
    ),
    (
        "sql",
        "select name\nfrom singer\nwhere age > 40\n\nThis uses lower case.",
        "select name\nfrom singer\nwhere age > 40\n",
    ),
]


@pytest.mark.parametrize(("language", "text", "code"), OTHER_LANGUAGES)
def test_other_languages_inside_prose(language: str, text: str, code: str) -> None:
    result = found(language, text)
    assert (result.code, result.format_ok, result.source) == (code, False, "region")


def test_sql_alternatives_are_not_joined() -> None:
    # A query is one statement: two queries separated by prose are alternatives.
    text = "SELECT 1;\nOr, better:\nSELECT name, age FROM singer WHERE age > 40;"
    assert found("sql", text).code == "SELECT name, age FROM singer WHERE age > 40;\n"


def test_prose_in_other_languages_is_no_code() -> None:
    for language, text in (
        ("javascript", "Add them."),
        ("go", "Use fmt.Scan."),
        ("rust", "Sum the numbers."),
        ("sql", "I would look at the singer table."),
    ):
        assert found(language, text).code is None, (language, text)


def test_a_regex_answer_is_the_whole_text() -> None:
    # Prose is a valid pattern: a regex answer is never searched for inside prose.
    assert found("regex", "a+b").code == "a+b"
    assert found("regex", "The pattern is:\na+b").code is None


# --- modes and the size cap ----------------------------------------------------------------

PROSE_ADD = f"Here is my solution:\n\n{ADD}\nIt adds."


def test_from_def_takes_the_text_from_the_first_definition() -> None:
    result = found("python", PROSE_ADD, mode="from_def")
    assert result.code == ADD + "\nIt adds."  # the seed behaviour: to the end
    assert found("python", "no definition here", mode="from_def").code is None
    fenced = found("python", f"Intro\n```python\n{ADD}```\ndef other(): pass", mode="from_def")
    assert fenced.code == ADD and fenced.format_ok  # fenced blocks come first in every mode


def test_whole_takes_the_whole_response() -> None:
    assert found("python", PROSE_ADD, mode="whole").code == PROSE_ADD
    assert found("python", "<think>plan</think>" + ADD, mode="whole").code == ADD
    assert found("python", "  \n", mode="whole").code is None


def test_a_completion_over_the_size_cap_is_no_code_at_once() -> None:
    calls: list[str] = []

    def check(code: str) -> SyntaxIssue | None:
        calls.append(code)
        return None

    result = extract_for(PY, "x = 1\n" * 100, max_chars=599, check=check)
    assert result.code is None and "600 characters" in result.reason
    assert "max_completion_chars" in result.reason and calls == []
    assert extract_for(PY, "x = 1\n" * 100, max_chars=600).code is not None


# --- strip_reasoning and find_blocks keep their meaning, in linear time ---------------------

_OLD_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)


def _old_strip_reasoning(text: str) -> str:
    """The regular-expression version this SDK had (quadratic on many opening tags)."""
    text = _OLD_THINK.sub("", text)
    closes = list(re.finditer(r"</think>", text, re.IGNORECASE))
    if closes:
        text = text[closes[-1].end() :]
    opened = re.search(r"<think>", text, re.IGNORECASE)
    return text[: opened.start()] if opened else text


@given(st.lists(st.sampled_from(["<think>", "</think>", "<THINK>", "a", "b\n", " "]), max_size=30))
def test_strip_reasoning_means_what_it_meant(parts: list[str]) -> None:
    text = "".join(parts)
    assert strip_reasoning(text) == _old_strip_reasoning(text)


def _old_find_blocks(text: str) -> list[tuple[str, str, bool]]:
    """The line-by-line version this SDK had: the reference for the one-scan version."""
    opening = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = opening.match(lines[i])
        if m is None or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        fence, indent, info = m.group("fence"), len(m.group("indent")), m.group("info").strip()
        lang = info.split()[0].lower().lstrip("{.").rstrip("}") if info else ""
        body, j, closed = [], i + 1, False
        while j < len(lines):
            stripped = lines[j].strip()
            if (
                stripped.startswith(fence[0] * len(fence))
                and set(stripped) == {fence[0]}
                and len(lines[j]) - len(lines[j].lstrip(" ")) <= 3
            ):
                closed = True
                break
            body.append(lines[j][min(indent, len(lines[j]) - len(lines[j].lstrip(" "))) :])
            j += 1
        code = "\n".join(body).rstrip("\n")
        blocks.append((lang, code + "\n" if code else code, closed))
        i = j + 1
    return blocks


_FENCY = st.lists(
    st.sampled_from(
        [
            "```",
            "~~~",
            "````",
            "```py",
            "~~~ js",
            "``` `x`",
            " ",
            "  ",
            "\t",
            "\n",
            "\r",
            "x",
            "\u3000",
        ]
    ),
    max_size=40,
).map("".join)


@given(_FENCY)
def test_find_blocks_means_what_it_meant(text: str) -> None:
    assert [(b.lang, b.code, b.closed) for b in find_blocks(text)] == _old_find_blocks(text)


def test_blocks_know_where_they_are() -> None:
    text = "a\n```py\nx\n```\nb\n~~~\ny"
    first, second = find_blocks(text)
    assert text[first.start : first.end] == "```py\nx\n```\n"
    assert (second.code, second.closed, text[second.start : second.end]) == ("y\n", False, "~~~\ny")
    assert isinstance(first, Block)


def test_thirty_thousand_think_tags_are_no_code_with_no_parse() -> None:
    # 210 KB of "<think>" took 30-40 s with the old regular expression.
    calls = Counted(PY.check_syntax)
    result = extract_for(PY, "<think>" * 30_000, check=calls)
    assert result.code is None and calls.calls == 0


# --- bounded parser work --------------------------------------------------------------------


class Counted:
    """A parser wrapped to count its calls and the characters it was handed."""

    def __init__(self, parse: Callable[[str], Any]) -> None:
        self.parse = parse
        self.calls = 0
        self.chars = 0

    def __call__(self, code: str) -> Any:
        self.calls += 1
        self.chars += len(code)
        return self.parse(code)


WORK_LANGUAGES = ("python", "javascript", "sql")


def _work(language: str, text: str) -> tuple[Counted, Counted, Extraction]:
    lang = registry.get_language(language)
    check, parses = Counted(lang.check_syntax), Counted(lang.parses)
    result = extract_code(text, lang.aliases, parses, check=check, join=language != "sql")
    return check, parses, result


def _assert_bounded(check: Counted, parses: Counted, text: str) -> None:
    assert check.calls <= SEARCH_CALLS and check.chars <= SEARCH_BUDGET_CHARS
    assert parses.calls <= BLOCKS_TRIED and parses.chars <= len(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pathological_units(), st.integers(1, 3000), st.sampled_from(WORK_LANGUAGES))
def test_parser_work_is_bounded_on_pathological_completions(
    units: tuple[str, ...], repeat: int, language: str
) -> None:
    text = "".join(unit * repeat for unit in units)
    check, parses, _ = _work(language, text)
    _assert_bounded(check, parses, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(completions("python"), st.sampled_from(WORK_LANGUAGES))
def test_parser_work_is_bounded_on_model_outputs(text: str, language: str) -> None:
    check, parses, result = _work(language, text)
    _assert_bounded(check, parses, text)
    assert result.code is not None or result.reason


def test_many_prose_and_code_alternations_stay_within_the_budget() -> None:
    text = "Some text here.\nx = 1\n" * 40_000  # 40,000 regions
    check, _, result = _work("python", text)
    # Every call of the budget went to a region; the rest were never handed to a parser.
    assert check.calls == SEARCH_CALLS and check.chars == SEARCH_CALLS * len("x = 1\n")
    assert result.code == "x = 1\n"


def _growth(work: Callable[[str], object], small: str, large: str, repeats: int = 7) -> float:
    """Time of ``work(large)`` over time of ``work(small)``, each the best of ``repeats``.

    CPU time of this thread, so that other work on the machine does not count; the runs
    alternate, and the collector is paused so that its pauses land on neither size.
    """
    best = {small: float("inf"), large: float("inf")}
    work(large)  # warm: grammars loaded, caches filled
    gc.disable()
    try:
        for _ in range(repeats):
            for text in (small, large):
                started = time.thread_time()
                work(text)
                best[text] = min(best[text], time.thread_time() - started)
    finally:
        gc.enable()
    return best[large] / max(best[small], 1e-4)


def _pipeline(language: str) -> Callable[[str], None]:
    lang = registry.get_language(language)

    def run(text: str) -> None:
        forget_checks()  # every run pays for its parsing
        result = extract_for(lang, text)
        if result.code is not None:
            lang.check_syntax(result.code)

    return run


@pytest.mark.parametrize("family", sorted(PATHOLOGICAL_UNITS))
def test_extraction_and_check_grow_linearly_on_each_pathological_family(family: str) -> None:
    # A ratio of two sizes measured in this process, never an absolute time: linear work
    # gives about 4, quadratic about 16. The sizes stay under TREE_SITTER_LIMIT so that
    # the grammars are measured too.
    unit = PATHOLOGICAL_UNITS[family]
    repeat = max(1, 12_000 // len(unit))
    small, large = pathological(family, repeat), pathological(family, 4 * repeat)
    assert len(large) < TREE_SITTER_LIMIT
    for language in ("python", "javascript"):
        growth = _growth(_pipeline(language), small, large)
        assert growth < 10, (family, language, growth)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pathological_units())
def test_extraction_grows_linearly_on_generated_mixes(units: tuple[str, ...]) -> None:
    size = sum(len(u) for u in units)
    repeat = max(1, 10_000 // size)
    small = "".join(u * repeat for u in units)
    large = "".join(u * 4 * repeat for u in units)
    growth = _growth(_pipeline("python"), small, large, repeats=5)
    assert growth < 10, (units, growth)


def test_the_old_reasoning_removal_is_what_the_ratio_catches() -> None:
    # The check above can fail: the old regular expression is quadratic on the same input.
    growth = _growth(_old_strip_reasoning, "<think>" * 1500, "<think>" * 6000, repeats=3)
    assert growth > 10


def test_c_family_and_java_prompts_are_code_whole() -> None:
    """A prompt's leading /* ... */ comment of sentences and examples stays with its code."""
    cpp = (
        "/*\nReturn true if a given number is prime, and false otherwise.\n>>> is_prime(6)\n"
        "false\n>>> is_prime(101)\ntrue\n*/\n#include<stdio.h>\nusing namespace std;\n"
        "bool is_prime(long long n){\n    if (n<2) return false;\n    return true;\n}\n"
    )
    found = extract_for(registry.get_language("cpp"), cpp)
    assert found.code is not None and found.code.strip() == cpp.strip()
    java = (
        "import java.util.*;\n\nclass Solution {\n    /**\n    Sum the numbers.\n     */\n"
        "    public int add(List<Integer> numbers, int start) {\n        return start;\n"
        "    }\n}\n"
    )
    found = extract_for(registry.get_language("java"), java)
    assert found.code is not None and found.code.strip() == java.strip()
    # The prose around a fenced program is still dropped.
    fenced = "Here is the solution.\n\n```cpp\n" + cpp + "```\nIt checks divisors."
    found = extract_for(registry.get_language("cpp"), fenced)
    assert found.code is not None and found.code.strip() == cpp.strip()


def test_a_big_bare_program_with_a_heading_like_comment_is_parsed_whole() -> None:
    # Over the default search budget. Python's own budget (its parser is linear) reads it
    # whole; with the default the search kept the largest region and cut the import above
    # the comment that reads like a markdown heading (a W4 sample got runtime_error).
    table = {str(i): str(i * i) for i in range(12_000)}
    code = (
        f"import sys\n\n# answers by input\nANSWERS = {table!r}\n\n\n"
        "print(ANSWERS[sys.stdin.read().strip()])\n"
    )
    assert len(code) > SEARCH_BUDGET_CHARS
    result = found("python", code)
    assert result.code is not None and result.code.startswith("import sys"), result.reason
    small = extract_code(code, NAMES, PY.parses, check=PY.check_syntax)  # the default budget
    assert small.code is not None and not small.code.startswith("import sys")
