"""Code written inside prose is verified, in the real sandbox: rewards do not punish the format.

The unit tests of extraction are in ``test_extraction.py``; here the whole pipeline runs
(extraction, syntax check, sandbox, judging, policy) and the verdicts are checked.
"""

from __future__ import annotations

import pytest

import verifiers
from verifiers import SpecError, Status
from verifiers.extraction import MAX_COMPLETION_CHARS
from verifiers.languages.javascript import JavaScriptLanguage
from verifiers.parsing import TREE_SITTER_LIMIT
from verifiers.runtimes import LocalRuntime

from .languages.test_case_tables import toolchain_ready

ADD_TESTS = {
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    "entry_point": "add",
}
SUM_TESTS = {"inputs": ["1 2\n", "10 20\n"], "outputs": ["3\n", "30\n"]}
ADD = "def add(a, b):\n    return a + b\n"
STDIN_SUM = "a, b = map(int, input().split())\nprint(a + b)\n"

# The completions of the issue: each scored 0 before (syntax_error or no_code).
IN_PROSE = [
    ("intro line", f"Here is my solution:\n\n{ADD}", ADD_TESTS),
    ("three prose lines", f"I read the task.\nAdding is enough.\nMy code:\n{ADD}", ADD_TESTS),
    ("trailing explanation", f"{ADD}This function returns the sum of a and b.", ADD_TESTS),
    ("stdin program", f"Read both numbers:\n{STDIN_SUM}\nThis prints the sum.", SUM_TESTS),
    (
        "prose, code, prose, code",
        "A helper first:\n\ndef plus(x, y):\n    return x + y\n\nThen the answer:\n\n"
        "def add(a, b):\n    return plus(a, b)\n",
        ADD_TESTS,
    ),
]


@pytest.mark.parametrize(
    ("completion", "tests"), [c[1:] for c in IN_PROSE], ids=[c[0] for c in IN_PROSE]
)
def test_code_inside_prose_passes(runtime: LocalRuntime, completion: str, tests: object) -> None:
    result = verifiers.score("python", completion, tests, runtime=runtime)
    assert result.status is Status.PASSED, result.feedback
    assert result.score == 1.0 and not result.format_ok


def test_the_format_is_still_rewarded_by_layered_policies(runtime: LocalRuntime) -> None:
    wrong = "def add(a, b):\n    return a - b\n"
    fenced = verifiers.score(
        "python", f"```python\n{wrong}```", ADD_TESTS, runtime=runtime, policy="layered"
    )
    bare = verifiers.score(
        "python", f"Here:\n{wrong}", ADD_TESTS, runtime=runtime, policy="layered"
    )
    assert fenced.status is bare.status is Status.FAILED
    assert fenced.format_ok and not bare.format_ok
    assert bare.score == pytest.approx(fenced.score - 0.2)  # the format weight


def test_broken_code_inside_prose_is_a_syntax_error(runtime: LocalRuntime) -> None:
    result = verifiers.score(
        "python",
        "My answer:\n\ndef add(a, b:\n    return a + b\n\nDone.",
        ADD_TESTS,
        runtime=runtime,
    )
    assert result.status is Status.SYNTAX_ERROR
    assert result.code == "def add(a, b:\n    return a + b\n"
    assert "line 1" in result.feedback


def test_prose_only_is_no_code(runtime: LocalRuntime) -> None:
    result = verifiers.score("python", "I would add the two numbers.", ADD_TESTS, runtime=runtime)
    assert result.status is Status.NO_CODE and "does not parse" in result.feedback


def test_code_indented_in_prose_runs(runtime: LocalRuntime) -> None:
    indented = "".join("    " + line + "\n" for line in STDIN_SUM.splitlines())
    result = verifiers.score("python", f"Like this:\n\n{indented}\nOK.", SUM_TESTS, runtime=runtime)
    assert result.status is Status.PASSED and result.code == STDIN_SUM


def test_a_bare_function_body_still_gets_its_prompt(runtime: LocalRuntime) -> None:
    tests = {
        **ADD_TESTS,
        "prompt": 'def add(a, b):\n    """Add two numbers."""\n',
    }
    result = verifiers.score("python", "    return a + b\n", tests, runtime=runtime)
    assert result.status is Status.PASSED, result.feedback


def test_seed_modes_reproduce_their_references(runtime: LocalRuntime) -> None:
    text = f"Here is my solution:\n\n{ADD}"
    whole = verifiers.score("python", text, ADD_TESTS, runtime=runtime, extraction="whole")
    assert whole.status is Status.SYNTAX_ERROR  # the veRL tutorial: the response is the code
    from_def = verifiers.score("python", text, ADD_TESTS, runtime=runtime, extraction="from_def")
    assert from_def.status is Status.PASSED  # the mint Code RL reference: from the first def
    after = verifiers.score(
        "python", text + "\nHope it helps.", ADD_TESTS, runtime=runtime, extraction="from_def"
    )
    assert after.status is Status.SYNTAX_ERROR  # from the def to the end, prose included
    verifier = verifiers.get_verifier("python", runtime=runtime, extraction="whole")
    assert verifier.score(text, ADD_TESTS).status is Status.SYNTAX_ERROR
    assert verifier.score(text, ADD_TESTS, extraction="auto").status is Status.PASSED


def test_the_size_cap_is_an_option(runtime: LocalRuntime) -> None:
    text = f"```python\n{ADD}```"
    capped = verifiers.score(
        "python", text, ADD_TESTS, runtime=runtime, max_completion_chars=len(text) - 1
    )
    assert capped.status is Status.NO_CODE and "max_completion_chars" in capped.feedback
    assert capped.code is None and capped.tests[0].exit_code is None  # nothing ran
    fits = verifiers.score(
        "python", text, ADD_TESTS, runtime=runtime, max_completion_chars=len(text)
    )
    assert fits.status is Status.PASSED
    assert MAX_COMPLETION_CHARS == 1_000_000


def test_batch_items_choose_their_extraction(runtime: LocalRuntime) -> None:
    text = f"Here is my solution:\n\n{ADD}"
    items = [
        {"language": "python", "completion": text, "tests": ADD_TESTS},
        {"language": "python", "completion": text, "tests": ADD_TESTS, "extraction": "whole"},
        {"language": "python", "completion": text, "tests": ADD_TESTS, "max_completion_chars": 9},
    ]
    results = verifiers.score_batch(items, runtime=runtime, policy="partial")
    assert [r.status for r in results] == [Status.PASSED, Status.SYNTAX_ERROR, Status.NO_CODE]
    assert {r.policy for r in results} == {"partial"}  # the batch's options are kept
    with pytest.raises(SpecError, match=r"items\[0\]\.extraction"):
        verifiers.score_batch([{**items[0], "extraction": "nope"}], runtime=runtime)


@pytest.mark.parametrize(
    ("field", "options"),
    [
        ("extraction", {"extraction": "first_def"}),
        ("max_completion_chars", {"max_completion_chars": 0}),
        ("max_completion_chars", {"max_completion_chars": True}),
        ("max_completion_chars", {"max_completion_chars": "1000"}),
    ],
)
def test_bad_extraction_options_name_the_field(field: str, options: dict[str, object]) -> None:
    with pytest.raises(SpecError, match=field):
        verifiers.score("python", ADD, ADD_TESTS, **options)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=field):
        verifiers.get_verifier("python").score(ADD, ADD_TESTS, **options)


def test_javascript_inside_prose_passes(runtime: LocalRuntime) -> None:
    toolchain_ready("javascript")
    completion = (
        "Here is my solution:\n\n"
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "console.log(a + b);\n\nIt reads the numbers and prints their sum."
    )
    result = verifiers.score("javascript", completion, SUM_TESTS, runtime=runtime)
    assert result.status is Status.PASSED, result.feedback


def test_go_inside_prose_passes(runtime: LocalRuntime) -> None:
    toolchain_ready("go")
    completion = (
        'The program:\n\npackage main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int\n'
        "\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n\nIt reads two integers."
    )
    result = verifiers.score("go", completion, SUM_TESTS, runtime=runtime)
    assert result.status is Status.PASSED, result.feedback


def test_rust_inside_prose_passes(runtime: LocalRuntime) -> None:
    toolchain_ready("rust")
    completion = (
        "Here's the Rust code:\n\nuse std::io::Read;\n\nfn main() {\n"
        "    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n"
        "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
        '    println!("{}", v[0] + v[1]);\n}\n\nThis sums the numbers.'
    )
    result = verifiers.score("rust", completion, SUM_TESTS, runtime=runtime)
    assert result.status is Status.PASSED, result.feedback


SINGERS = {
    "database": {
        "schema": "CREATE TABLE singer(id INTEGER, name TEXT, age INTEGER);",
        "inserts": ["INSERT INTO singer VALUES (1, 'Ann', 30), (2, 'Bo', 41), (3, 'Cy', 52)"],
    },
    "gold_query": "SELECT name FROM singer WHERE age > 40",
}


def test_sql_inside_prose_passes(runtime: LocalRuntime) -> None:
    completion = (
        "The query is:\n\nSELECT name FROM singer WHERE age > 40;\n\n"
        "It keeps the singers older than 40."
    )
    result = verifiers.score("sql", completion, SINGERS, runtime=runtime)
    assert result.status is Status.PASSED, result.feedback
    alternatives = "SELECT name FROM singer;\nOr, better:\nSELECT name FROM singer WHERE age > 40;"
    assert verifiers.score("sql", alternatives, SINGERS, runtime=runtime).status is Status.PASSED


def test_javascript_over_the_tree_sitter_limit_is_judged_by_node(runtime: LocalRuntime) -> None:
    # Over TREE_SITTER_LIMIT the grammar is not asked (its error recovery is slow on
    # garbage): Node finds the syntax error in the sandbox, a compile_error.
    padding = "// " + "x" * 97 + "\n"
    code = padding * (TREE_SITTER_LIMIT // len(padding) + 1) + "const x = (1 + ;\n"
    assert len(code) > TREE_SITTER_LIMIT and JavaScriptLanguage().check_syntax(code) is None
    assert JavaScriptLanguage().check_syntax(code[-2000:]) is not None
    toolchain_ready("javascript")
    result = verifiers.score("javascript", f"```js\n{code}```", SUM_TESTS, runtime=runtime)
    assert result.status is Status.COMPILE_ERROR, result.feedback
