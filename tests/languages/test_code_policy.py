"""The code policies on their own (no sandbox): the shared pieces, totality, signatures.

The verdicts they lead to are in ``tests/test_reward_hacks_compiled.py``.
"""

from __future__ import annotations

import pytest

from verifiers import Status
from verifiers.languages.code_policy import AllowList, Refusal, Source, leaves, normalized, walk
from verifiers.languages.go import GoCodePolicy, GoLanguage
from verifiers.languages.rust import RustCodePolicy, RustLanguage
from verifiers.protocols import CodeCheck
from verifiers.specs import parse_tests
from verifiers.testing.datasets import dataset

GO = GoCodePolicy()
RUST = RustCodePolicy(["md5", "rand", "regex"])
GO_TESTS = (
    'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n',
    "func TestAdd(t *testing.T) {\n    assert.Equal(t, 3, Add(1, 2))\n}\n",
)
RUST_TEST = (
    "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() {\n"
    "        assert_eq!(add(1, 2), 3);\n    }\n}\n"
)


def test_allow_list_allows_by_prefix() -> None:
    allowed = AllowList([("std", "collections"), ("fmt", "Sprintf")])
    assert allowed.allows(["std", "collections", "HashMap", "new"])
    assert allowed.allows(["std", "collections"])
    assert not allowed.allows(["std"])
    assert not allowed.allows(["std", "process", "exit"])
    assert allowed.allows(["fmt", "Sprintf"]) and not allowed.allows(["fmt", "Scan"])
    assert allowed.below(["std"]) == ["collections"]


def test_a_refusal_fails_every_test_and_names_its_rule() -> None:
    src = Source("tree_sitter_rust", "fn add() -> i32 {\n    unsafe { 0 }\n}\n")
    token = next(n for n in walk(src.root) if n.type == "unsafe")
    refusal = src.refuse(token, "rust/unsafe", "`unsafe` is not allowed", "Use safe code.")
    assert (refusal.line, refusal.column) == (2, 5)
    outcome = refusal.outcome()
    assert outcome.status is Status.FAILED
    assert outcome.hack == "code policy rust/unsafe: `unsafe` is not allowed"
    assert "line 2, column 5" in outcome.message and outcome.message.endswith("Use safe code.")
    assert Refusal("go/init", "no").describe().endswith("(rule go/init): no")


def test_normalized_ignores_layout_and_comments() -> None:
    a = Source("tree_sitter_go", "func F(a, b int) int {\n}\n")
    b = Source("tree_sitter_go", "func F(a, /* the second */ b   int)   int {\n}\n")
    params = [n.child_by_field_name("parameters") for n in (a.root.children[0], b.root.children[0])]
    assert params[0] is not None and params[1] is not None
    assert normalized(a, params[0]) == normalized(b, params[1])
    assert [t.type for t in leaves(params[1])].count("comment") == 0


@pytest.mark.parametrize(
    ("declared", "code", "same"),
    [
        ("func Add(a, b int) int {", "func Add(x int, y int) int {\n    return x + y\n}", True),
        ("func Add(a, b int) int {", "func Add(a, b int) (sum int) {\n    return a + b\n}", True),
        ("func Add(a, b int) int {", "func Add(a /* x */, b int) int {\n    return a + b\n}", True),
        ("func F(xs ...string) []int {", "func F(ys ...string) []int {\n    return nil\n}", True),
        ("func Add(a, b int) int {", "func Add(a, b int64) int64 {\n    return a + b\n}", False),
        (
            "func Add(a, b int) int {",
            "func Add(a, b int) (int, error) {\n    return 0, nil\n}",
            False,
        ),
        ("func F(xs []int) int {", "func F(xs ...int) int {\n    return 0\n}", False),
    ],
)
def test_go_declared_signatures(declared: str, code: str, same: bool) -> None:
    refusal = GO.check(code, GO_TESTS, "\n" + declared + "\n")
    assert (refusal is None) is same, refusal and refusal.describe()
    if not same:
        assert refusal is not None and refusal.rule == "go/signature"


@pytest.mark.parametrize(
    ("declared", "code", "same"),
    [
        ("fn add(a: i32, b: i32) -> i32{", "pub fn add(mut a: i32, b: i32) -> i32 { a + b }", True),
        ("fn add(a:i32,b:i32)->i32{", "fn add(x: i32, /* y */ y: i32) -> i32 { x + y }", True),
        ("fn f(s: &str) -> &str{", "fn f<'a>(s: &'a str) -> &'a str { s }", True),
        ("fn f(v: Vec<i32>) -> bool{", "const fn f(v: Vec<i32>) -> bool { true }", True),
        ("fn add(a: i32, b: i32) -> i32{", "fn add(a: i64, b: i64) -> i64 { a + b }", False),
        ("fn f(v: Vec<i32>) -> bool{", "fn f<T>(v: Vec<i32>) -> bool { true }", False),
        ("fn f(v: Vec<i32>) -> bool{", "async fn f(v: Vec<i32>) -> bool { true }", False),
        ("fn f(v: Vec<i32>){", "fn f(v: Vec<i32>) -> i32 { 0 }", False),
    ],
)
def test_rust_declared_signatures(declared: str, code: str, same: bool) -> None:
    refusal = RUST.check(code, RUST_TEST, "use std::cmp::max;\n\n" + declared + "\n")
    assert (refusal is None) is same, refusal and refusal.describe()
    if not same:
        assert refusal is not None and refusal.rule == "rust/signature"


def test_shadowing_counts_where_the_tests_use_the_name() -> None:
    header = "use std::cmp::max;\n\nfn add(a: i32, b: i32) -> i32{\n"
    helper = "fn max(a: i32, b: i32) -> i32 { a }\nfn add(a: i32, b: i32) -> i32 { a + b }\n"
    uses_max = RUST_TEST.replace("add(1, 2), 3", "add(1, 2), max(3, 1)")
    refusal = RUST.check(helper, uses_max, header)
    assert refusal is not None and refusal.rule == "rust/shadowing" and "max" in refusal.reason
    assert RUST.check(helper, RUST_TEST, header) is None
    assert RUST.check("struct Vec;\n" + helper.split("\n", 1)[1], RUST_TEST) is None
    go_helper = (
        "func len(s string) int {\n    return 0\n}\n\nfunc Add(a, b int) int {\n    return a\n}\n"
    )
    assert GO.check(go_helper, GO_TESTS) is None
    uses_len = (GO_TESTS[0], GO_TESTS[1].replace("Add(1, 2)", 'Add(1, len("xy"))'))
    refusal = GO.check(go_helper, uses_len)
    assert refusal is not None and refusal.rule == "go/shadowing"


def test_the_feedback_says_what_is_allowed() -> None:
    refusal = RUST.check("fn add() -> i32 {\n    std::process::exit(0)\n}\n", RUST_TEST)
    assert refusal is not None and refusal.rule == "rust/path"
    assert "std::process" in refusal.reason and "collections" in refusal.hint
    assert "rand" in refusal.hint
    refusal = GO.check('import "os"\n\nfunc Add(a, b int) int {\n    return 0\n}\n', GO_TESTS)
    assert refusal is not None and refusal.rule == "go/import"
    assert '"os"' in refusal.reason and "strings" in refusal.hint and "fmt.Sprintf" in refusal.hint


def test_deep_nesting_does_not_exhaust_the_stack() -> None:
    depth = 3000
    rust = "fn add() -> i32 {\n    " + "(" * depth + "1" + ")" * depth + "\n}\n"
    go = "func Add(a, b int) int {\n    return " + "(" * depth + "1" + ")" * depth + "\n}\n"
    assert RUST.check(rust, RUST_TEST) is None
    assert GO.check(go, GO_TESTS) is None
    unsafe = rust.replace("1", "unsafe { 1 }")
    refusal = RUST.check(unsafe, RUST_TEST)
    assert refusal is not None and refusal.rule == "rust/unsafe"


def _humaneval_x(language: str) -> list[dict[str, str]]:
    return dataset("humaneval_x").rows(f"humaneval_x_{language}")


def test_every_humaneval_x_canonical_solution_is_allowed() -> None:
    """The held-out canonical solutions must pass too: none of the shared ones is refused."""
    refused = []
    for row in _humaneval_x("go"):
        refusal = GO.check(
            row["prompt"] + row["canonical_solution"],
            (row["test_setup"], row["test"]),
            row["declaration"],
        )
        if refusal is not None:
            refused.append((row["task_id"], refusal.describe()))
    for row in _humaneval_x("rust"):
        code = row["declaration"] + row["canonical_solution"]
        refusal = RUST.check(code, row["test"], row["declaration"])
        if refusal is not None:
            refused.append((row["task_id"], refusal.describe()))
    assert not refused, refused[:3]


def _check(language: str, code: str, row: dict[str, str]) -> Refusal | None:
    if language == "go":
        return GO.check(code, (row["test_setup"], row["test"]), row["declaration"])
    return RUST.check(code, row["test"], row["declaration"])


def test_the_policies_are_total() -> None:
    """Whatever the program (cut anywhere, invalid UTF-8, NUL bytes): an answer, never a fault."""
    answers = asked = 0
    for language in ("go", "rust"):
        rows = _humaneval_x(language)
        for row in rows[:: max(1, len(rows) // 16)]:
            head = row["declaration"] if language == "rust" else row["prompt"]
            code = head + row["canonical_solution"]
            variants = [code[:cut] for cut in range(0, len(code), max(1, len(code) // 12))]
            variants += [code.replace("(", "\udcff(", 3), code.replace(" ", "\0", 5), "}" * 50]
            for variant in variants:
                asked += 1
                result = _check(language, variant, row)
                assert result is None or isinstance(result, Refusal)
                answers += 1
    assert asked > 100 and answers == asked


def test_only_function_style_tasks_are_checked() -> None:
    for language in (GoLanguage(), RustLanguage()):
        assert isinstance(language, CodeCheck)
        stdio = parse_tests({"inputs": ["1 2\n"], "outputs": ["3\n"]})
        assert language.check_code("import os\nanything at all, unsafe { }", stdio) is None


@pytest.mark.parametrize(
    ("policy", "code", "rule"),
    [
        (GO, "func Add(a, b int) int {\n    return a +\n}\n", "go/unparsed"),
        (RUST, "fn add(a: i32, b: i32) -> i32 {\n    a + \n}\n", "rust/unparsed"),
        # Over the syntax check's size limit, only the policy reads the tree.
        (RUST, "// " + "x" * 70_000 + "\nfn add(a: i32) -> i32 { a + }\n", "rust/unparsed"),
    ],
    ids=["go", "rust", "rust over 64 KiB"],
)
def test_a_tree_with_parse_errors_is_refused(policy: object, code: str, rule: str) -> None:
    refusal = policy.check(code, "")  # type: ignore[attr-defined]
    assert refusal is not None and refusal.rule == rule, refusal
