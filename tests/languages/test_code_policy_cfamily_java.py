"""The C, C++ and Java code policies on their own (no sandbox): signatures, totality, data.

The verdicts they lead to are in ``tests/test_reward_hacks_cfamily_java.py``.
"""

from __future__ import annotations

import pytest

from verifiers.languages.c import CLanguage
from verifiers.languages.code_policy import Refusal
from verifiers.languages.cpp import CPP, CFamilyCodePolicy, CppLanguage
from verifiers.languages.cpp import test_program as assemble_tests
from verifiers.languages.java import JavaCodePolicy, JavaLanguage
from verifiers.protocols import CodeCheck
from verifiers.specs import parse_tests
from verifiers.testing.datasets import dataset

CPP_POLICY = CFamilyCodePolicy(CPP)
JAVA_POLICY = JavaCodePolicy()
CPP_TEST = "#undef NDEBUG\n#include <assert.h>\nint main() {\n    assert(f({1, 2}) == 3);\n}\n"
JAVA_TEST = (
    "public class Main {\n    public static void main(String[] args) {\n"
    "        if (new Solution().f(List.of(1, 2)) != 3) throw new AssertionError();\n    }\n}\n"
)


@pytest.mark.parametrize(
    ("code", "same"),
    [
        ("int f(vector<int> v) {\n    return 3;\n}", True),
        ("int f(const std::vector<int> &values) { return 3; }", True),
        ("int f(std::vector<int> v) /* comment */ {\n    return 3;\n}", True),
        ("long f(vector<int> v) {\n    return 3;\n}", False),
        ("int f(vector<long> v) {\n    return 3;\n}", False),
        ("int f(vector<int> v, int extra = 0) {\n    return 3;\n}", False),
        ("template <class T> int f(T v) {\n    return 3;\n}", False),
    ],
)
def test_cpp_declared_signatures(code: str, same: bool) -> None:
    declaration = "#include <vector>\nusing namespace std;\nint f(vector<int> v){\n"
    head = "#include <vector>\nusing namespace std;\n"
    refusal = CPP_POLICY.check(head + code, ("", CPP_TEST), declaration)
    assert (refusal is None) is same, refusal
    if not same:
        assert refusal is not None and refusal.rule == "cpp/signature"


@pytest.mark.parametrize(
    ("code", "same"),
    [
        ("public int f(List<Integer> xs) {\n        return 3;\n    }", True),
        ("int f(final java.util.List<Integer> values) { return 3; }", True),
        ("public long f(List<Integer> xs) {\n        return 3;\n    }", False),
        ("public int f(List<Long> xs) {\n        return 3;\n    }", False),
    ],
)
def test_java_declared_signatures(code: str, same: bool) -> None:
    declaration = "import java.util.*;\n\nclass Solution {\n    public int f(List<Integer> l) {\n"
    program = f"import java.util.*;\n\nclass Solution {{\n    {code}\n}}\n"
    refusal = JAVA_POLICY.check(program, ("", JAVA_TEST), declaration)
    assert (refusal is None) is same, refusal
    if not same:
        assert refusal is not None and refusal.rule == "java/signature"


def test_names_the_tests_use_count_only_where_they_matter() -> None:
    """The tests' local variables are their own; a helper of the same name is honest."""
    test = "int main() {\n    int total = f({1});\n    assert(total == 3);\n}\n"
    helper = "int total(int x) {\n    return x;\n}\nint f(int v) {\n    return 3;\n}\n"
    assert CPP_POLICY.check(helper, ("", test)) is None
    # With a declaration, a name the tests use without declaring it (a library function)
    # is not the program's to define.
    refusal = CPP_POLICY.check(
        "long abs(long x) {\n    return 0;\n}\nint f(int v) {\n    return 3;\n}\n",
        ("", "int main() {\n    assert(abs(f(1)) == 3);\n}\n"),
        "int f(int v) {\n",
    )
    assert refusal is not None and refusal.rule == "cpp/test-names"


def test_the_declarations_helpers_stay_as_given() -> None:
    """HumanEval-X's `poly`: the tests use it to check the answer, so it may not change."""
    declaration = (
        "#include <math.h>\ndouble poly(double x) {\n    return x * x - 1;\n}\n"
        "double find_zero(double lo){\n"
    )
    test = "int main() {\n    assert(fabs(poly(find_zero(0.5))) < 1e-3);\n}\n"
    honest = "#include <math.h>\ndouble poly(double x) {\n    return x * x - 1;\n}\n"
    honest += "double find_zero(double lo) {\n    return 1;\n}\n"
    assert CPP_POLICY.check(honest, ("", test), declaration) is None
    lying = honest.replace("return x * x - 1;", "return 0;")
    refusal = CPP_POLICY.check(lying, ("", test), declaration)
    assert refusal is not None and refusal.rule == "cpp/declared-helper"


def test_the_feedback_says_what_is_allowed() -> None:
    refusal = CPP_POLICY.check("#include <unistd.h>\nint f(int v) { return 3; }", ("", CPP_TEST))
    assert refusal is not None and "Allowed headers:" in refusal.describe()
    assert "<vector>" not in refusal.describe() and "vector" in refusal.describe()
    refusal = JAVA_POLICY.check("import java.io.*;\nclass Solution {}\n", ("", JAVA_TEST))
    assert refusal is not None and "java.util" in refusal.describe()


def _rows(language: str) -> list[dict[str, str]]:
    return dataset("humaneval_x").rows(f"humaneval_x_{language}")


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_every_humaneval_x_canonical_solution_is_allowed(language: str) -> None:
    lang = CppLanguage() if language == "cpp" else JavaLanguage()
    refused = []
    for row in _rows(language):
        spec = lang.parse_tests({"test": row["test"], "declaration": row["declaration"]})
        outcome = lang.check_code(row["prompt"] + row["canonical_solution"], spec)
        if outcome is not None:
            refused.append((row["task_id"], outcome.message))
    assert not refused, refused[:3]


def test_the_policies_are_total() -> None:
    """Whatever the program (cut anywhere, invalid UTF-8, NUL bytes): an answer, never a fault."""
    asked = 0
    for language, policy in (("cpp", CPP_POLICY), ("java", JAVA_POLICY)):
        rows = _rows(language)
        for row in rows[:: max(1, len(rows) // 12)]:
            code = row["prompt"] + row["canonical_solution"]
            variants = [code[:cut] for cut in range(0, len(code), max(1, len(code) // 12))]
            variants += [code.replace("(", "\udcff(", 3), code.replace(" ", "\0", 5), "}" * 50]
            for variant in variants:
                asked += 1
                result = policy.check(variant, ("", row["test"]), row["declaration"])
                assert result is None or isinstance(result, Refusal)
    assert asked > 100


def test_deep_nesting_does_not_exhaust_the_stack() -> None:
    deep = "int f(int v) {\n    return " + "(" * 5000 + "3" + ")" * 5000 + ";\n}\n"
    result = CPP_POLICY.check(deep, ("", CPP_TEST))
    assert result is None or isinstance(result, Refusal)
    java = "class Solution {\n    int f() {\n        return " + "(" * 5000 + "3" + ")" * 5000
    result = JAVA_POLICY.check(java + ";\n    }\n}\n", ("", JAVA_TEST))
    assert result is None or isinstance(result, Refusal)


def test_only_function_style_tasks_are_checked() -> None:
    stdio = parse_tests({"inputs": ["1 2\n"], "outputs": ["3\n"]})
    for language in (CLanguage(), CppLanguage(), JavaLanguage()):
        assert isinstance(language, CodeCheck)
        assert language.check_code("#include <unistd.h>\nint main() { _exit(0); }", stdio) is None


def test_the_tests_keep_their_text() -> None:
    """The grammar reads `typeid` as `sizeof`; the compiled tests keep what they say."""
    program = assemble_tests(CPP, "int main() {\n    assert(typeid(int) == typeid(int));\n}\n")
    assert "typeid(int) == typeid(int)" in program and "sizeof" not in program
    assert "int main" not in program and "return 0;" in program
