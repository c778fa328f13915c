"""C: compiled once per program with ``gcc -std=gnu17 -O2``, run per test.

C shares its machinery with C++ (:mod:`verifiers.languages.cpp`): one build per distinct
program, stdin/stdout programs and programs with test code (an ``int main()`` of
``assert`` calls, HumanEval-X style) run through the forking harness that keeps the
nonce out of the program's memory, and the same code policy for function-style tasks.
"""

from __future__ import annotations

from verifiers.cases import ONE_TEST, SUM_TESTS, Case, table
from verifiers.languages.cpp import CFamilyLanguage, Dialect, cc_recipe
from verifiers.results import Status
from verifiers.toolchains import binary_toolchain

#: gcc: C programs (one image family with g++, ``cc``).
GCC = binary_toolchain("gcc", "gcc", "{gcc}", ("--version",), "apt-get install gcc", cc_recipe())
C = Dialect(
    name="c",
    grammar="tree_sitter_c",
    tool=GCC,
    placeholder="{gcc}",
    # An undeclared call is an error, not an implicit declaration of a C library symbol.
    flags=("-std=gnu17", "-O2", "-pipe", "-w", "-Werror=implicit-function-declaration"),
    suffix="c",
    linkage="",
    # C has no -fsanitize=return: flowing off the end of a function is undefined only
    # where the caller uses the value, and GCC does not drop code for it.
    checked_flags=(
        "-fsanitize=unreachable",
        "-fsanitize-undefined-trap-on-error",
        "-ffp-contract=off",
    ),
)


class CLanguage(CFamilyLanguage):
    """C17 (GNU dialect) with the sandbox's ``gcc -O2``.

    Args:
        compiler: A host ``gcc`` to pin (default: the runtime's ``gcc`` toolchain).
    """

    name = "c"
    aliases = ("c", "h")
    grammar = C.grammar
    toolchains = (GCC,)
    dialect = C

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()


_C_READ = "#include <stdio.h>\n\nint main(void) {\n    long long a, b;\n"
_C_READ += '    if (scanf("%lld %lld", &a, &b) != 2) return 1;\n'
_C_ADD = {
    "test": "#undef NDEBUG\n#include <assert.h>\nint main(void) {\n    assert(add(1, 2) == 3);\n"
    "    assert(add(2, 0) == 2);\n}\n",
    "declaration": "int add(int a, int b) {\n",
}


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "c",
        {
            "ok:stdio sum": (
                _C_READ + '    printf("%lld\\n", a + b);\n}',
                SUM_TESTS,
                Status.PASSED,
            ),
            "ok:assert add": (
                "int add(int a, int b) {\n    return a + b;\n}",
                _C_ADD,
                Status.PASSED,
            ),
            "wrong_answer:stdio difference": (
                _C_READ + '    printf("%lld\\n", a - b);\n}',
                SUM_TESTS,
                Status.FAILED,
            ),
            "wrong_answer:assert fails": (
                "int add(int a, int b) {\n    return a * b;\n}",
                _C_ADD,
                Status.FAILED,
            ),
            "no_code:prose": ("Read both numbers with scanf.", SUM_TESTS, Status.NO_CODE),
            "syntax_error:unbalanced": ("int main( {\n}", SUM_TESTS, Status.SYNTAX_ERROR),
            "compile_error:undeclared": (
                '#include <stdio.h>\n\nint main(void) {\n    printf("%d", x);\n}',
                SUM_TESTS,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:null pointer": (
                "int main(void) {\n    volatile int *p = 0;\n    return *p;\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "runtime_error:crash in the tested function": (
                "int add(int a, int b) {\n    volatile int *p = 0;\n    return *p + a + b;\n}",
                _C_ADD,
                Status.RUNTIME_ERROR,
            ),
            "timeout:busy loop": (
                "int main(void) {\n    volatile unsigned long n = 0;\n    for (;;) n++;\n}",
                ONE_TEST,
                Status.TIMEOUT,
            ),
            "memory_limit:malloc until it fails": (
                "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
                "int main(void) {\n    for (;;) {\n        char *p = malloc(1 << 20);\n"
                '        if (!p) {\n            fputs("out of memory\\n", stderr);\n'
                "            return 1;\n        }\n        memset(p, 1, 1 << 20);\n    }\n}",
                ONE_TEST,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:stdout": (
                "#include <stdio.h>\n#include <string.h>\n\nint main(void) {\n"
                "    static char s[10000];\n    memset(s, 'x', sizeof s);\n"
                "    for (;;) if (fwrite(s, 1, sizeof s, stdout) != sizeof s) return 1;\n}",
                ONE_TEST,
                Status.OUTPUT_LIMIT,
            ),
            # Refused by the code policy before it is built (failed, a suspected hack).
            "early_exit:exit(0) in the function": (
                "#include <stdlib.h>\n\nint add(int a, int b) {\n    exit(0);\n}",
                _C_ADD,
                Status.FAILED,
            ),
            "kill_self:abort": (
                "#include <stdlib.h>\n\nint main(void) {\n    abort();\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "kill_supervisor:signals PID 1 and goes on": (
                "#include <signal.h>\n"
                + _C_READ
                + '    kill(1, SIGKILL);\n    kill(1, SIGSTOP);\n    printf("%lld\\n", a + b);\n}',
                SUM_TESTS,
                Status.PASSED,
            ),
            "fork_bomb:fork until it fails": (
                "#include <stdlib.h>\n#include <unistd.h>\n\nint main(void) {\n"
                "    for (;;) if (fork() < 0) abort();\n}",
                ONE_TEST,
                Status.RUNTIME_ERROR,
            ),
        },
    )
