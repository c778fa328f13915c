"""Hypothesis strategies for fuzzing verifiers: completions, programs and test specs.

Use them on your own reward functions::

    from hypothesis import given
    from verifiers.testing.strategies import completions, SUM_TESTS

    @given(completions("python"))
    def test_reward_never_raises(text):
        assert 0.0 <= my_reward(text, SUM_TESTS) <= 1.0

Programs solve one task in every language, reading two integers from stdin and printing
their sum (:data:`SUM_TESTS`), from right to hostile; each carries the statuses it may get.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from verifiers.results import Status

#: The task every generated program attempts: print the sum of two integers read on stdin.
SUM_TESTS: dict[str, list[str]] = {
    "inputs": ["1 2\n", "10 20\n", "-5 5\n"],
    "outputs": ["3\n", "30\n", "0\n"],
}

_FAILING = frozenset({Status.FAILED})
_ERROR = frozenset({Status.RUNTIME_ERROR})


@dataclass(frozen=True)
class FuzzProgram:
    """A generated program for :data:`SUM_TESTS` and the statuses it may get.

    ``deterministic`` programs get the same verdict on every run (timing-bound ones such
    as fork attempts may not).
    """

    language: str
    kind: str
    code: str
    expected: frozenset[Status]
    deterministic: bool = True

    @property
    def completion(self) -> str:
        """The program in a fenced block, as a model would write it."""
        return f"```{self.language}\n{self.code}\n```"


# Per language: (kind, template, expected statuses, deterministic). {k} is a drawn integer.
_PY_READ = "a, b = map(int, input().split())\n"
_JS_READ = (
    "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
)
_GO_HEAD = (
    'package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"time"\n)\n\n'
    "var _ = fmt.Sprint\nvar _ = os.Exit\nvar _ = time.Sleep\n\n"
)
_GO_READ = "\tvar a, b int\n\tfmt.Scan(&a, &b)\n"
_RS_READ = (
    "    let mut s = String::new();\n"
    "    std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).unwrap();\n"
    "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
    "    let (a, b) = (v[0], v[1]);\n"
)
_TEMPLATES: dict[str, list[tuple[str, str, frozenset[Status], bool]]] = {
    "python": [
        ("right", _PY_READ + "print(a + b)", frozenset({Status.PASSED}), True),
        ("wrong", _PY_READ + "print(a + b + {k})", _FAILING, True),
        ("exception", _PY_READ + "raise ValueError({k})", _ERROR, True),
        ("early_exit", "import sys\nsys.exit(0)\n" + _PY_READ + "print(a + b)", _FAILING, True),
        (
            "exit_code",
            "import os\nos._exit({k})",
            frozenset({Status.FAILED, Status.RUNTIME_ERROR}),
            True,
        ),
        ("infinite_loop", "while True:\n    pass", frozenset({Status.TIMEOUT}), True),
        ("sleep", "import time\ntime.sleep(100)", frozenset({Status.TIMEOUT}), True),
        (
            "huge_output",
            "while True:\n    print('x' * 10000)",
            frozenset({Status.OUTPUT_LIMIT}),
            True,
        ),
        (
            "stdin_exhaust",
            "import sys\ndata = sys.stdin.read()\nprint(sum(map(int, data.split())) + {k})",
            _FAILING,
            True,
        ),
        (
            "fork_attempt",
            "import os\nfor _ in range(200):\n    if os.fork() == 0:\n"
            "        import time\n        time.sleep(100)\n" + _PY_READ + "print(a + b)",
            frozenset({Status.PASSED, Status.RUNTIME_ERROR, Status.TIMEOUT}),
            False,
        ),
    ],
    "javascript": [
        ("right", _JS_READ + "console.log(a + b);", frozenset({Status.PASSED}), True),
        ("wrong", _JS_READ + "console.log(a + b + {k});", _FAILING, True),
        ("exception", _JS_READ + "throw new Error('e{k}');", _ERROR, True),
        ("early_exit", "process.exit(0);\n" + _JS_READ + "console.log(a + b);", _FAILING, True),
        ("infinite_loop", "while (true) {{}}", frozenset({Status.TIMEOUT}), True),
        (
            "huge_output",
            "const s = 'x'.repeat(10000);\nwhile (true) require('fs').writeSync(1, s);",
            frozenset({Status.OUTPUT_LIMIT}),
            True,
        ),
        (
            "fork_attempt",
            "const cp = require('child_process');\nfor (let i = 0; i < 50; i++) {{\n"
            "  try {{ cp.spawn('sleep', ['100'], {{detached: true, stdio: 'ignore'}}); }}"
            " catch (e) {{}}\n}}\n" + _JS_READ + "console.log(a + b);",
            frozenset({Status.PASSED, Status.RUNTIME_ERROR, Status.TIMEOUT}),
            False,
        ),
    ],
    "go": [
        (
            "right",
            _GO_HEAD + "func main() {{\n" + _GO_READ + "\tfmt.Println(a + b)\n}}",
            frozenset({Status.PASSED}),
            True,
        ),
        (
            "wrong",
            _GO_HEAD + "func main() {{\n" + _GO_READ + "\tfmt.Println(a + b + {k})\n}}",
            _FAILING,
            True,
        ),
        ("exception", _GO_HEAD + "func main() {{\n" + _GO_READ + "\tpanic({k})\n}}", _ERROR, True),
        ("early_exit", _GO_HEAD + "func main() {{\n\tos.Exit(0)\n}}", _FAILING, True),
        (
            "infinite_loop",
            _GO_HEAD + "func main() {{\n\tfor {{\n\t}}\n}}",
            frozenset({Status.TIMEOUT}),
            True,
        ),
        (
            "sleep",
            _GO_HEAD + "func main() {{\n\ttime.Sleep(100 * time.Second)\n}}",
            frozenset({Status.TIMEOUT}),
            True,
        ),
        (
            "compile_error",
            _GO_HEAD + "func main() {{\n\tvar unused{k} int\n}}",
            frozenset({Status.COMPILE_ERROR}),
            True,
        ),
    ],
    "rust": [
        (
            "right",
            "fn main() {{\n" + _RS_READ + '    println!("{{}}", a + b);\n}}',
            frozenset({Status.PASSED}),
            True,
        ),
        (
            "wrong",
            "fn main() {{\n" + _RS_READ + '    println!("{{}}", a + b + {k});\n}}',
            _FAILING,
            True,
        ),
        (
            "exception",
            "fn main() {{\n" + _RS_READ + '    panic!("{k} {{}}", a + b);\n}}',
            _ERROR,
            True,
        ),
        ("early_exit", "fn main() {{\n    std::process::exit(0);\n}}", _FAILING, True),
        (
            "infinite_loop",
            "fn main() {{\n    loop {{ std::hint::black_box(0); }}\n}}",
            frozenset({Status.TIMEOUT}),
            True,
        ),
        (
            "compile_error",
            'fn main() {{\n    let x: i32 = "{k}";\n}}',
            frozenset({Status.COMPILE_ERROR}),
            True,
        ),
    ],
}

#: Languages that have generated programs.
PROGRAM_LANGUAGES = tuple(_TEMPLATES)


def programs(language: str, kinds: tuple[str, ...] | None = None) -> st.SearchStrategy[FuzzProgram]:
    """Programs for :data:`SUM_TESTS` in ``language``, from right to hostile.

    Args:
        language: ``python``, ``javascript``, ``go`` or ``rust``.
        kinds: Only these kinds (``right``, ``wrong``, ``exception``, ``early_exit``,
            ``infinite_loop``, ``huge_output``, ``fork_attempt``...).
    """
    if language not in _TEMPLATES:
        raise ValueError(f"no generated programs for {language!r}; have {PROGRAM_LANGUAGES}")
    templates = [t for t in _TEMPLATES[language] if kinds is None or t[0] in kinds]
    if not templates:
        raise ValueError(f"no {language} programs of the kinds {kinds}")

    @st.composite
    def build(draw: st.DrawFn) -> FuzzProgram:
        kind, template, expected, deterministic = draw(st.sampled_from(templates))
        k = draw(st.integers(1, 99))
        return FuzzProgram(language, kind, template.format(k=k), expected, deterministic)

    return build()


# --- completions ---------------------------------------------------------------------------

_TAGS = (
    "python",
    "py",
    "python3",
    "javascript",
    "js",
    "go",
    "golang",
    "rust",
    "rs",
    "sql",
    "text",
    "",
    "PYTHON",
    "c++",
    "bash",
)
_FENCES = ("```", "~~~", "````", "``")
_prose = st.text(
    st.characters(codec="utf-8") | st.sampled_from("\n\0`~<>"),
    max_size=60,
)


def completions(language: str | None = None) -> st.SearchStrategy[str]:
    """Model outputs, from tidy to malformed.

    Prose, fenced blocks with odd or unclosed fences and wrong tags, ``<think>``
    blocks, unicode, NUL bytes, and now and then an enormous text.

    With ``language``, some completions carry a real program of that language.
    """
    code: st.SearchStrategy[str] = _prose
    if language in _TEMPLATES:
        code = programs(language).map(lambda p: p.code) | _prose

    @st.composite
    def block(draw: st.DrawFn) -> str:
        fence = draw(st.sampled_from(_FENCES))
        tag = draw(st.sampled_from(_TAGS) | st.text(max_size=8))
        body = draw(code)
        closed = draw(st.booleans())
        return f"{fence}{tag}\n{body}\n" + (f"{fence}\n" if closed else "")

    @st.composite
    def think(draw: st.DrawFn) -> str:
        inner = draw(block() | _prose)
        return "<think>" + inner + ("</think>" if draw(st.booleans()) else "")

    part = st.one_of(_prose, block(), think(), code)
    enormous = st.builds(
        lambda n, c: c * n, st.integers(200_000, 1_200_000), st.sampled_from("x\n#")
    )
    return st.one_of(
        st.lists(part, max_size=4).map("\n".join),
        enormous,
        st.binary(max_size=200).map(lambda b: b.decode("utf-8", errors="replace")),
    )


# --- pathological completions -------------------------------------------------------------

#: Repeated units of text that have made extraction or syntax checks slow: each family
#: is a unit repeated, so that a completion ``unit * n`` and ``unit * 4n`` show whether the
#: work grows linearly with the size (``bench/extraction_linear.py``, ``tests/test_extraction.py``).
PATHOLOGICAL_UNITS: dict[str, str] = {
    "think_open": "<think>",
    "think_close": "</think>",
    "think_pairs": "<think>a</think>b",
    "fence_bare": "```\n",
    "fence_tagged": "```python\n",
    "fence_mixed": "```\n~~~\n````js\n",
    "fence_info_backtick": "``` `x`\n",
    "tiny_blocks": "```python\nx = 1\n```\n",
    "tiny_untagged": "```\nx\n```\n",
    "long_word": "x",
    "long_prose_line": "Here is my ",
    "long_expression": "1+",
    "open_brackets": "([{<",
    "close_brackets": ")]}>",
    "prose_then_code": "Some text here.\nx = 1\n",
    "prose_then_broken": "Some text here.\nx = (\n",
    "code_then_undecided": "x = 1\nab cd\n",
    "comment_in_block": "    # c\n",
    "markdown": "## Step\n- item one\n1. first\n",
    "blank_lines": "\n",
    "spaces_tabs": " \t",
    "token_soup": "( ) ; = if x { ] fn 'a \" ` # @ ! ? :: => -> < \n",
}
#: Text around the repeated units (the comment run sits inside a function).
_PATHOLOGICAL_FRAME = {"comment_in_block": ("def f():\n", "    pass\n")}


def pathological(family: str, repeat: int) -> str:
    """One family of :data:`PATHOLOGICAL_UNITS`, its unit repeated ``repeat`` times."""
    before, after = _PATHOLOGICAL_FRAME.get(family, ("", ""))
    return before + PATHOLOGICAL_UNITS[family] * repeat + after


def pathological_units() -> st.SearchStrategy[tuple[str, ...]]:
    """Mixes of pathological units: a tuple of one to three units, each to be repeated.

    A test builds ``"".join(unit * n for unit in units)`` for two sizes ``n`` and compares
    the work done (see ``tests/test_extraction.py``). Units are drawn from
    :data:`PATHOLOGICAL_UNITS` and from short texts of markers (fences, tags, brackets).
    """
    markers = st.text(st.sampled_from("`~<>/think\n #(){}[]:;=x\t\"'"), min_size=1, max_size=12)
    unit = st.sampled_from(sorted(PATHOLOGICAL_UNITS.values())) | markers
    return st.lists(unit, min_size=1, max_size=3).map(tuple)


# --- specs ---------------------------------------------------------------------------------

_small_text = st.text(st.characters(codec="utf-8"), max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False) | _small_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_small_text, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _stdio(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 4))
    inputs = draw(st.lists(_small_text, min_size=n, max_size=n))
    outputs = draw(st.lists(_small_text, min_size=n, max_size=n))
    if draw(st.booleans()):
        return {"inputs": inputs, "outputs": outputs}
    return {
        "cases": [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)],
        "kind": "stdio",
    }


@st.composite
def _call(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 3))
    return {
        "fn_name": draw(st.sampled_from(("add", "solve", "f"))),
        "inputs": draw(st.lists(st.lists(_json, max_size=3), min_size=n, max_size=n)),
        "outputs": draw(st.lists(_json, min_size=n, max_size=n)),
    }


_ASSERTS = st.lists(
    st.sampled_from(("assert add(1, 2) == 3", "assert f(0) is None", "assert solve([]) == []")),
    min_size=1,
    max_size=3,
)


def valid_specs(language: str) -> st.SearchStrategy[Any]:
    """Well-formed test specs of every format ``language`` runs (as users write them)."""
    common: list[st.SearchStrategy[Any]] = [_stdio(), st.just(SUM_TESTS)]
    if language == "python":
        common += [
            _call(),
            st.builds(lambda a: {"test_list": a}, _ASSERTS),
            st.builds(
                lambda e: [[e, 3]],
                st.sampled_from(("add(1, 2)", "len([1, 2, 3])", "f()")),
            ),
            st.just(
                {
                    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
                    "entry_point": "add",
                }
            ),
        ]
    elif language == "javascript":
        common.append(st.just({"test": "console.assert(add(1, 2) === 3);"}))
    return st.one_of(*common)


#: Specs every language must refuse with a SpecError naming the problem.
_MALFORMED: tuple[Any, ...] = (
    None,
    42,
    "",
    "not json {",
    [],
    {},
    {"inputs": ["1"]},
    {"inputs": ["1"], "outputs": []},
    {"inputs": "1", "outputs": "2"},
    {"inputs": [1], "outputs": [2], "fn_name": "not an identifier"},
    {"fn_name": "f", "inputs": [[1]], "outputs": []},
    {"cases": []},
    {"cases": [{"input": "1"}], "kind": "stdio"},
    {"kind": "no such kind", "cases": [{"input": "1", "output": "2"}]},
    {"inputs": ["1"], "outputs": ["2"], "compare": {"mode": "nonsense"}},
    {"inputs": ["1"], "outputs": ["2"], "compare": {"float_abs_tol": -1}},
    {"test": ""},
    {"test": "assert True", "entry_point": "1bad"},
)


def malformed_specs() -> st.SearchStrategy[Any]:
    """Test specs that are wrong in shape or type: scoring them must raise ``SpecError``."""
    return st.sampled_from(_MALFORMED)


__all__ = [
    "PROGRAM_LANGUAGES",
    "SUM_TESTS",
    "FuzzProgram",
    "completions",
    "malformed_specs",
    "programs",
    "valid_specs",
]
