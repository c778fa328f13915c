"""C and C++: the compiler (in the sandbox) decides what a syntax error is; tree-sitter says where.

tree-sitter-cpp misreads valid code (``decltype(std::string(s), void())``): such a program
is built all the same and gets its real verdict. A program the compiler rejects as well is
``syntax_error``, with tree-sitter's location and the compiler's message. In function-style
tasks the code policy still reads the tree: a region it cannot read is never a way past it.
"""

from __future__ import annotations

import shutil

import pytest

import verifiers
from tests.conftest import need
from verifiers import Status
from verifiers.registry import get_language
from verifiers.runtimes import LocalRuntime

SUM = {"inputs": ["1 2", "5 7"], "outputs": ["3", "12"]}
ADD = {"test": "#undef NDEBUG\n#include <assert.h>\nint main() {\n    assert(add(1, 2) == 3);\n}\n"}
#: Valid C++ that tree-sitter-cpp reports an error in (Library Checker's graph/shortest_path
#: solutions use this SFINAE idiom).
MISPARSED = (
    "#include <iostream>\n#include <string>\n"
    "template <class T> auto show(T s) -> decltype(std::string(s), void()) {\n"
    '    std::cout << std::string(s) << "\\n";\n}\n'
)
STDIO_MAIN = (
    "int main() {\n    long long a, b;\n    std::cin >> a >> b;\n"
    "    show(std::to_string(a + b));\n}\n"
)


@pytest.fixture(scope="module", autouse=True)
def _compilers() -> None:
    need(shutil.which("g++") is not None and shutil.which("gcc") is not None, "gcc and g++")


def score(language: str, code: str, tests: dict[str, object], rt: LocalRuntime) -> verifiers.Result:
    return verifiers.score(language, f"```{language}\n{code}\n```", tests, runtime=rt)


def test_the_parser_misreads_the_idiom() -> None:
    """The premise: without the build deciding, this valid program would be refused."""
    issue = get_language("cpp").check_syntax(MISPARSED + STDIO_MAIN)
    assert issue is not None and issue.deferred and issue.line == 3


def test_a_misparsed_valid_program_passes(runtime: LocalRuntime) -> None:
    r = score("cpp", MISPARSED + STDIO_MAIN, SUM, runtime)
    assert r.status is Status.PASSED, r.feedback
    assert r.compile is not None and r.compile.exit_code == 0


def test_a_misparsed_valid_program_gets_its_real_wrong_answer(runtime: LocalRuntime) -> None:
    wrong = STDIO_MAIN.replace("a + b", "a - b")
    r = score("cpp", MISPARSED + wrong, SUM, runtime)
    assert r.status is Status.FAILED, r.feedback


@pytest.mark.parametrize(
    ("language", "code", "line"),
    [
        ("cpp", '#include <cstdio>\nint main( {\n    puts("x");\n}\n', 2),
        ("c", '#include <stdio.h>\nint main(void) {\n    puts("x")\n}\n', 3),
    ],
)
def test_a_real_syntax_error_is_still_a_syntax_error(
    runtime: LocalRuntime, language: str, code: str, line: int
) -> None:
    r = score(language, code, SUM, runtime)
    assert r.status is Status.SYNTAX_ERROR, r.feedback
    assert all(t.status is Status.SYNTAX_ERROR for t in r.tests)
    # tree-sitter's location, then the compiler's own words.
    assert r.feedback.startswith(f"SyntaxError at line {line}"), r.feedback
    assert "The compiler:" in r.feedback and "error:" in r.feedback, r.feedback


def test_a_type_error_the_parser_reads_stays_a_compile_error(runtime: LocalRuntime) -> None:
    r = score("cpp", "int main() {\n    undefined_name();\n}\n", SUM, runtime)
    assert r.status is Status.COMPILE_ERROR, r.feedback


def test_a_misparsed_function_style_program_passes(runtime: LocalRuntime) -> None:
    code = MISPARSED + 'int add(int a, int b) {\n    show("x");\n    return a + b;\n}\n'
    r = score("cpp", code, ADD, runtime)
    assert r.status is Status.PASSED, r.feedback


def test_a_function_style_syntax_error_is_a_syntax_error_not_a_refusal(
    runtime: LocalRuntime,
) -> None:
    # exit() would be refused by the code policy; the compiler rejects the program first.
    code = "#include <cstdlib>\nint add(int a, int b) {\n    exit(0);\n    return a + b;\n"
    r = score("cpp", code, ADD, runtime)
    assert r.status is Status.SYNTAX_ERROR, r.feedback
    assert not r.hack_suspected


@pytest.mark.parametrize(
    "hidden",
    [
        # A forbidden call inside the region tree-sitter cannot read.
        "decltype(std::string(s), std::exit(0), void())",
        "decltype(std::string(s), (void)std::atexit(nullptr), void())",
        # Valid and harmless, but a region too large to check word by word.
        "decltype(std::string(s), std::string(s), std::string(s), std::string(s), void())",
    ],
)
def test_an_error_region_is_no_way_past_the_code_policy(runtime: LocalRuntime, hidden: str) -> None:
    code = (
        "#include <cstdlib>\n#include <string>\n"
        f"template <class T> auto g(T s) -> {hidden} {{}}\n"
        'int add(int a, int b) {\n    g("x");\n    return a + b;\n}\n'
    )
    r = score("cpp", code, ADD, runtime)
    # g++ builds it (so it is no syntax error), then the policy's refusal stands: no test ran.
    assert r.compile is not None and r.compile.exit_code == 0
    assert r.status is Status.FAILED and r.hack_suspected, r.feedback
    assert r.feedback.startswith("The code was refused before it was run"), r.feedback
    assert all(t.wall_s == 0 and t.exit_code is None for t in r.tests)


def test_a_refusal_stands_on_a_cached_build(runtime: LocalRuntime) -> None:
    """The second time, the build comes from the cache: the refusal still stands."""
    code = (
        "#include <cstdlib>\n#include <string>\n"
        "template <class T> auto g(T s) -> decltype(std::string(s), std::exit(0), void()) {}\n"
        'int add(int a, int b) {\n    g("x");\n    return a + b;\n}\n'
    )
    first = score("cpp", code, ADD, runtime)
    again = score("cpp", code, ADD, runtime)
    assert first.status is again.status is Status.FAILED
    assert again.compile is not None and again.compile.cached
    assert again.hack_suspected and all(t.exit_code is None for t in again.tests)
