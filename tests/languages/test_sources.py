"""Source assembly: Go files merged from parts, Rust test functions found and made callable."""

from __future__ import annotations

import verifiers
from verifiers.languages.go import go_test_functions, merge_sources
from verifiers.languages.rust import _callable_tests, _without_main, rust_test_functions


def test_go_merge_keeps_one_package_and_used_imports() -> None:
    code = (
        'import (\n    "math"\n    "strings"\n)\n\n'
        "func F(x float64) float64 {\n    return math.Sqrt(x)\n}\n"
    )
    setup = 'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n'
    test = "func TestF(t *testing.T) {\n    assert.Equal(t, 2.0, F(4))\n}\n"
    merged = merge_sources(code, setup, test)
    assert merged.count("package main") == 1
    assert merged.count("import (") == 1
    assert '"math"' in merged and '"testing"' in merged
    assert '"github.com/stretchr/testify/assert"' in merged
    assert '"strings"' not in merged  # unused: would not compile


def test_go_merge_adds_missing_standard_imports() -> None:
    merged = merge_sources("func F(s string) string {\n    return strings.ToUpper(s)\n}\n")
    assert '"strings"' in merged and merged.startswith("package main")


def test_go_merge_does_not_import_a_shadowing_local() -> None:
    merged = merge_sources("func F(sort []int) int {\n    return sort.Len()\n}\n")
    assert '"sort"' not in merged


def test_go_test_functions() -> None:
    code = "func TestA(t *testing.T) {}\nfunc helper() {}\nfunc TestB_2(tt *testing.T) {}\n"
    assert go_test_functions(code) == ["TestA", "TestB_2"]


def test_rust_test_functions_and_callable_rewrite() -> None:
    tests = (
        "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn a() {}\n"
        "    #[test]\n    #[should_panic]\n    fn b() { panic!() }\n    fn helper() {}\n"
        "    mod inner {\n        #[test]\n        fn c() {}\n    }\n}\n"
    )
    assert rust_test_functions(tests) == [
        ("tests::a", False),
        ("tests::b", True),
        ("tests::inner::c", False),
    ]
    rewritten = _callable_tests(tests)
    assert "#[test]" not in rewritten and "should_panic" not in rewritten
    assert "pub(crate) fn a()" in rewritten and "pub(crate) mod inner" in rewritten


def test_rust_program_main_is_renamed() -> None:
    assert "fn __vf_program_main()" in _without_main("fn main() {}\nfn f() {}\n")


def test_languages_report_their_test_functions() -> None:
    go = verifiers.get_verifier("go").parse_tests(
        {"test": "func TestA(t *testing.T) {}\nfunc TestB(t *testing.T) {}\n"}
    )
    assert len(go) == 2
    rust = verifiers.get_verifier("rust").parse_tests(
        {"test": "#[test]\nfn x() {}\n#[test]\nfn y() {}\n#[test]\nfn z() {}\n"}
    )
    assert len(rust) == 3


def test_unsupported_test_format_is_a_spec_error() -> None:
    import pytest

    with pytest.raises(verifiers.SpecError, match="javascript runs"):
        verifiers.get_verifier("javascript").parse_tests(
            {"fn_name": "f", "inputs": [[1]], "outputs": [1]}
        )
