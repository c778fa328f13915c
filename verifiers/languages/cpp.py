"""C++ (and what C shares with it): compiled once per program with ``g++ -O2``, run per test.

stdin/stdout programs are one translation unit, ``g++ -std=gnu++17 -O2``. A program with
test code (HumanEval-X: an ``int main()`` of ``assert`` calls) is the code followed by the
test code, whose ``main`` is renamed to a name that ends in a secret of this process, plus
a second translation unit, the harness, which holds the real ``main``. The harness forks
before any test code runs: the child closes the nonce's descriptor (4) and the result
channel (3) and runs the tests; the parent reads the nonce only after the fork, waits for
the child, and writes the pass record only when the child said, on a pipe of its own,
that the tests returned, and then exited with status 0. So the nonce is never in the
memory the program's code can reach, and an early exit, a crash or a failed assertion
never passes. A failed ``assert`` (``Assertion ... failed``, then ``abort``) is a wrong
answer; any other crash a runtime error. The parent dies of the child's signal, so the
limits the child hit (CPU, memory) read as they would for a plain program.

The tests still share the child's address space with the program, and C++ is not memory
safe: code that runs before ``main`` or outside the tests' control (constructors of global
objects, ``__attribute__((constructor))``, ``exit``, ``asm``), preprocessor tricks that
change what the tests say, overloads that capture the tests' comparisons, and the
process's own descriptors and files are refused by :class:`CFamilyCodePolicy` before the
program is built (see docs/security.md for what stays out of scope).

:mod:`verifiers.languages.c` is C on the same machinery (``gcc -std=gnu17``).
"""

from __future__ import annotations

import os
import re
import secrets
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.errors import SpecError
from verifiers.keys import content_key
from verifiers.languages.code_policy import Refusal, Source
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_pass_record,
    judge_stdio,
    limit_outcome,
    pin_toolchain,
    records,
    stderr_tail,
)
from verifiers.limits import Limits
from verifiers.parsing import SyntaxIssue
from verifiers.program import (
    Executable,
    ImageRecipe,
    ProcessResult,
    Program,
    ProgramTest,
    Step,
    ToolchainSpec,
)
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec
from verifiers.toolchains import binary_toolchain

#: What the C and C++ runtimes print when memory runs out (then they abort).
MEMORY_MARKERS = (b"std::bad_alloc", b"Cannot allocate memory", b"out of memory")
#: Headers whose library a program links with (the rest are header-only or libc/libstdc++).
LINKED = {"openssl/": ("-lcrypto",)}

# Names in the assembled program that end in a secret of this process: the program's
# code cannot name them (to call the harness, or to define a macro that rewrites them).
_SECRET = secrets.token_hex(6)
TESTS_ENTRY = f"vf_tests_{_SECRET}"
_TEST_MAIN = f"vf_test_main_{_SECRET}"
#: The harness: the process's ``main``, in a translation unit of its own (the program's
#: macros and declarations do not reach it). C that also compiles as C++.
_HARNESS = r"""
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C"
#endif
int ENTRY(void);

static void vf_put(int fd, const char *text, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        text += w;
        n -= (size_t)w;
    }
}

int main(void) {
    int done[2];
    if (pipe(done) != 0) return 3;
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) return 3;
    if (child == 0) {
        /* The tests and the program: they never hold the nonce, nor the channel. */
        close(done[0]);
        close(4);
        close(3);
        int status = ENTRY();
        fflush(NULL);
        if (status == 0) vf_put(done[1], "k", 1);
        _exit(status & 0xff);
    }
    close(done[1]);
    char nonce[256];
    size_t have = 0;
    for (;;) {
        ssize_t r = read(4, nonce + have, sizeof nonce - 1 - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += (size_t)r;
        if (have >= sizeof nonce - 1) break;
    }
    close(4);
    while (have > 0 && (nonce[have - 1] == '\n' || nonce[have - 1] == ' ')) have--;
    nonce[have] = 0;
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) return 3;
    }
    char byte = 0;
    ssize_t got;
    do {
        got = read(done[0], &byte, 1);
    } while (got < 0 && errno == EINTR);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == 1 && byte == 'k') {
        char record[400];
        int n = snprintf(record, sizeof record, "{\"event\":\"pass\",\"nonce\":\"%s\"}\n", nonce);
        if (n > 0 && (size_t)n < sizeof record) vf_put(3, record, (size_t)n);
        return 0;
    }
    if (WIFSIGNALED(status)) {
        /* Die of the child's signal, so that its limits read as a plain program's. */
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 4;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
""".replace("ENTRY", TESTS_ENTRY)
#: A function-like macro's definition (tree-sitter cannot parse what uses it).
_FUNCTION_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+\w+\(", re.M)
#: Which files of a judge program given as ``files`` alone are compiled (the others are
#: headers), by dialect.
JUDGE_SOURCE_SUFFIXES = {"cpp": ("cpp", "cc", "cxx", "C"), "c": ("c",)}
#: The harness's exit status when the child exited 0 without the tests' returning.
_NOT_RETURNED = 4


@dataclass(frozen=True)
class Dialect:
    """What differs between C and C++: the compiler, the standard, file names, the grammar."""

    name: str
    grammar: str
    tool: ToolchainSpec
    placeholder: str
    flags: tuple[str, ...]
    suffix: str
    #: Prefix of the test entry's declaration (``extern "C"`` in C++).
    linkage: str


def cc_recipe() -> ImageRecipe:
    """The ``cc`` image family: GCC for C and C++, and the headers HumanEval-X C++ uses."""
    return ImageRecipe(
        family="cc",
        packages={
            "gcc": "4:12.2.0-3",
            "g++": "4:12.2.0-3",
            "libboost-dev": "1.74.0.3",
            "libssl-dev": "3.0.19-1~deb12u2",
        },
        labels={"{gcc}": "/usr/bin/gcc", "{gxx}": "/usr/bin/g++"},
    )


_HINT = "apt-get install gcc g++ (and libboost-dev libssl-dev for HumanEval-X C++)"
#: g++: C++ programs (one image family with gcc, ``cc``).
GXX = binary_toolchain("g++", "g++", "{gxx}", ("--version",), _HINT, cc_recipe())
CPP = Dialect(
    name="cpp",
    grammar="tree_sitter_cpp",
    tool=GXX,
    placeholder="{gxx}",
    flags=("-std=gnu++17", "-O2", "-pipe", "-w"),
    suffix="cpp",
    linkage='extern "C" ',
)


def _parse(grammar_module: str, code: str) -> Source:
    return Source(grammar_module, code)


def _main_function(src: Source) -> tree_sitter.Node | None:
    """The top-level ``main`` function definition of test code, or None."""
    for node in src.root.named_children:
        if node.type != "function_definition":
            continue
        if _function_name(src, node) == "main":
            return node
    return None


def _function_name(src: Source, fn: tree_sitter.Node) -> str:
    """The name a function definition or declaration declares ("" if none)."""
    declarator = fn.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ""
    return src.text(declarator.child_by_field_name("declarator"))


def test_program(dialect: Dialect, test: str) -> str:
    """The test code with its ``main`` renamed, and the entry the harness calls.

    Raises nothing: test code without ``main`` gets an entry that returns 0 (compiling is
    all there is to check).
    """
    src = _parse(dialect.grammar, test)
    main = _main_function(src)
    argv_decl = ""
    if main is None:
        body = test
        call = "0"
    else:
        declarator = main.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        assert declarator is not None
        name = declarator.child_by_field_name("declarator")
        assert name is not None
        params = declarator.child_by_field_name("parameters")
        count = (
            0
            if params is None
            else len([p for p in params.named_children if p.type == "parameter_declaration"])
        )
        data = src.data
        block = main.child_by_field_name("body")
        # Only `main` may end without a return (it returns 0): the renamed function gets
        # the return it implied, so that falling off its end is not undefined behaviour.
        close = (
            block.end_byte - 1
            if block is not None and data[block.end_byte - 1 :].startswith(b"}")
            else None
        )
        if close is not None:
            data = data[:close] + b"    return 0;\n" + data[close:]
        body = (data[: name.start_byte] + _TEST_MAIN.encode() + data[name.end_byte :]).decode(
            "utf-8", errors="surrogateescape"
        )
        call = f"{_TEST_MAIN}()"
        if count >= 2:
            call = f"{_TEST_MAIN}(1, vf_argv_{_SECRET})"
            argv_decl = (
                f'static char vf_prog_{_SECRET}[] = "prog";\n'
                f"static char *vf_argv_{_SECRET}[] = {{vf_prog_{_SECRET}, 0}};\n"
            )
    return (
        f"{body}\n\n{argv_decl}{dialect.linkage}int {TESTS_ENTRY}(void) {{\n"
        f"    return {call};\n}}\n"
    )


class CFamilyLanguage(TreeSitterLanguage):
    """What C and C++ share: a GCC build, the forking harness, the code policy.

    Args:
        compiler: A host compiler to pin (default: the runtime's toolchain, which the
            local runtime finds on ``PATH`` and the Docker runtime in its image).
    """

    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = CASE_KINDS
    dialect: Dialect = CPP

    def __init__(self, compiler: str | None = None) -> None:
        self._compiler = compiler
        self.code_policy = CFamilyCodePolicy(self.dialect)

    def toolchain(self) -> str:
        """The host compiler's version (for ``verifiers doctor``)."""
        return self.dialect.tool.host(self._compiler).description

    def check_syntax(self, code: str, spec: TestSpec | None = None) -> SyntaxIssue | None:
        """tree-sitter's first error, except in code that defines function-like macros.

        tree-sitter does not expand macros, so ``FOR(i, n) a[i] = 0;`` after
        ``#define FOR(i, n) ...`` (common in competitive programming) looks like an error
        to it; the compiler in the sandbox judges such code instead.
        """
        if _FUNCTION_MACRO.search(code):
            return None
        return super().check_syntax(code, spec)

    def check_code(self, code: str, spec: TestSpec) -> TestOutcome | None:
        """Function-style tasks: the code policy's refusal (failed, a suspected hack), or None.

        Their tests share the process with the program, so the program may not use what
        would reach the harness or rewrite the tests (see :class:`CFamilyCodePolicy`).
        stdin/stdout programs are judged on their output alone and are not restricted.
        """
        if not isinstance(spec, AssertScriptTests):
            return None
        tests = (spec.test_setup or "", spec.test)
        refusal = self.code_policy.check(code, tests, spec.declaration)
        return refusal.outcome() if refusal is not None else None

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One compiler run, then one run per selected test."""
        dialect = self.dialect
        step_limits = limits.step_limits()
        tests = []
        files: dict[str, bytes] = {}
        main = f"main.{dialect.suffix}"
        sources = [f"{{program_dir}}/{main}"]
        if isinstance(spec, StdioTests):
            source = code
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                step = Step(argv=("{work_dir}/prog",), limits=step_limits, stdin=stdin)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            setup = f"{spec.test_setup}\n" if spec.test_setup else ""
            source = f"{code}\n\n{setup}{test_program(dialect, spec.test)}"
            harness = f"vf_harness.{dialect.suffix}"
            files[harness] = _HARNESS.encode()
            sources.append(f"{{program_dir}}/{harness}")
            for index in selected:
                step = Step(argv=("{work_dir}/prog",), limits=step_limits)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "assert"}))
        files[main] = source.encode("utf-8", errors="surrogateescape")
        libraries = tuple(
            flag for prefix, flags in LINKED.items() if f"<{prefix}" in source for flag in flags
        )
        argv = (
            dialect.placeholder,
            *dialect.flags,
            "-o",
            "{work_dir}/prog",
            *sources,
            *libraries,
            "-lm",
        )
        build = Step(
            argv=argv,
            limits=limits.step_limits(build=True, runtime_reserve=True),
            env={"PATH": "/usr/bin:/bin", "TMPDIR": "{work_dir}"},
        )
        contents = "\0".join(f"{k}\0{v.decode(errors='replace')}" for k, v in sorted(files.items()))
        # The toolchain's identity (its version, an image) joins the key in the pipeline.
        program = Program(
            files=files,
            tests=tuple(tests),
            build=build,
            build_key=content_key(dialect.name, " ".join(argv), contents),
            artefacts=("prog",),
            toolchains=(dialect.tool,),
        )
        return pin_toolchain(program, dialect.tool, self._compiler)

    def executable(
        self, source: str | None, files: Mapping[str, bytes], limits: Limits, field: str
    ) -> Executable:
        """A checker or interactor in this language: built once (the build cache), then run.

        ``source`` is the main file; ``files`` are written beside it at their relative paths
        (``common/testlib.h``), and every directory holding one is on the include path.
        Without ``source``, every source file among ``files`` is compiled together.

        Raises:
            SpecError: There is no source file to compile.
        """
        dialect = self.dialect
        sources = {f"src/{path}": data for path, data in files.items()}
        main = f"src/judge_main.{dialect.suffix}"
        if source is not None:
            if main in sources:
                raise SpecError(f"{field}.files", f"{main[4:]} is the source's own name")
            sources[main] = source.encode("utf-8", "surrogateescape")
            units = [main]
        else:
            units = sorted(
                p
                for p in sources
                if p.rsplit(".", 1)[-1]
                in JUDGE_SOURCE_SUFFIXES.get(dialect.name, (dialect.suffix,))
            )
            if not units:
                raise SpecError(f"{field}.files", f"no {dialect.name} source among the files")
        includes = sorted({os.path.dirname(p) for p in sources})
        argv = (
            dialect.placeholder,
            *dialect.flags,
            *(f"-I{{work_dir}}/{d}" for d in includes),
            "-o",
            "{work_dir}/judge_bin",
            *(f"{{work_dir}}/{u}" for u in units),
            "-lm",
        )
        build = Step(
            argv=argv,
            limits=limits.step_limits(build=True, runtime_reserve=True),
            env={"PATH": "/usr/bin:/bin", "TMPDIR": "{work_dir}"},
        )
        contents = "\0".join(
            f"{k}\0{v.decode(errors='replace')}" for k, v in sorted(sources.items())
        )
        return Executable(
            files=sources,
            run=("{dir}/judge_bin",),
            build=build,
            artefacts=("judge_bin",),
            build_key=content_key("judge", dialect.name, " ".join(argv), contents),
            toolchains=(dialect.tool,),
        )

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then failed assertions (wrong answer) and crashes, then the pass record."""
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event, MEMORY_MARKERS)
        if limit is not None:
            return limit
        if test.meta["mode"] == "stdio":
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        if "pass" not in by_event:
            if proc.signal == signal.SIGABRT and b"Assertion" in proc.stderr:
                return TestOutcome(Status.FAILED, stderr_tail(proc) or "an assertion failed")
            if proc.exit_code == _NOT_RETURNED and proc.signal is None:
                message = "the program exited (status 0) before the tests returned"
                return TestOutcome(Status.RUNTIME_ERROR, message, hack=message)
        return judge_pass_record(proc, by_event)


class CppLanguage(CFamilyLanguage):
    """C++17 (GNU dialect) with the sandbox's ``g++ -O2``.

    Args:
        compiler: A host ``g++`` to pin (default: the runtime's ``g++`` toolchain).
    """

    name = "cpp"
    aliases = ("cpp", "c++", "cxx", "cc", "hpp")
    grammar = CPP.grammar
    toolchains = (GXX,)
    dialect = CPP

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()


# --- the code policy -----------------------------------------------------------------------


class CFamilyCodePolicy:
    """The rules a C or C++ function-style program is checked against before it is built."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def check(
        self, code: str, test_files: Sequence[str] = (), declaration: str | None = None
    ) -> Refusal | None:
        """The first rule the code breaks, or None."""
        del code, test_files, declaration
        return None


# --- the case table ------------------------------------------------------------------------

_CPP_READ = "#include <iostream>\n\nint main() {\n    long long a, b;\n    std::cin >> a >> b;\n"
_CPP_ADD = {
    "test": "#undef NDEBUG\n#include <assert.h>\nint main() {\n    assert(add(1, 2) == 3);\n"
    "    assert(add(2, 0) == 2);\n}\n",
    "declaration": "int add(int a, int b) {\n",
}


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "cpp",
        {
            "ok:stdio sum": (
                _CPP_READ + "    std::cout << a + b << '\\n';\n}",
                SUM_TESTS,
                Status.PASSED,
            ),
            "ok:assert add": (
                "int add(int a, int b) {\n    return a + b;\n}",
                _CPP_ADD,
                Status.PASSED,
            ),
            "wrong_answer:stdio difference": (
                _CPP_READ + "    std::cout << a - b << '\\n';\n}",
                SUM_TESTS,
                Status.FAILED,
            ),
            "wrong_answer:assert fails": (
                "int add(int a, int b) {\n    return a * b;\n}",
                _CPP_ADD,
                Status.FAILED,
            ),
            "no_code:prose": ("Read both numbers with std::cin.", SUM_TESTS, Status.NO_CODE),
            "syntax_error:unbalanced": ("int main( {\n}", SUM_TESTS, Status.SYNTAX_ERROR),
            "compile_error:undeclared": (
                "#include <iostream>\n\nint main() {\n    std::cout << x;\n}",
                SUM_TESTS,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:uncaught exception": (
                '#include <stdexcept>\n\nint main() {\n    throw std::runtime_error("no");\n}',
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "runtime_error:null pointer": (
                "int main() {\n    volatile int *p = nullptr;\n    return *p;\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "timeout:busy loop": (
                "int main() {\n    volatile unsigned long n = 0;\n    for (;;) n++;\n}",
                ONE_TEST,
                Status.TIMEOUT,
            ),
            "memory_limit:growing vector": (
                "#include <vector>\n\nint main() {\n    std::vector<std::vector<char>> keep;\n"
                "    for (;;) keep.emplace_back(1 << 20, 1);\n}",
                ONE_TEST,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:stdout": (
                "#include <cstdio>\n#include <string>\n\nint main() {\n"
                "    std::string s(10000, 'x');\n"
                "    for (;;) if (fwrite(s.data(), 1, s.size(), stdout) != s.size()) return 1;\n}",
                ONE_TEST,
                Status.OUTPUT_LIMIT,
            ),
            # The harness sees that the tests did not return (a suspected hack).
            "early_exit:exit(0) in the function": (
                "#include <cstdlib>\n\nint add(int a, int b) {\n    exit(0);\n}",
                _CPP_ADD,
                Status.RUNTIME_ERROR,
            ),
            "kill_self:abort": (
                "#include <cstdlib>\n\nint main() {\n    std::abort();\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "kill_supervisor:signals PID 1 and goes on": (
                "#include <iostream>\n#include <csignal>\n\nint main() {\n    long long a, b;\n"
                "    std::cin >> a >> b;\n    kill(1, SIGKILL);\n    kill(1, SIGSTOP);\n"
                "    std::cout << a + b << '\\n';\n}",
                SUM_TESTS,
                Status.PASSED,
            ),
            "fork_bomb:fork until it fails": (
                "#include <unistd.h>\n#include <cstdlib>\n\nint main() {\n"
                "    for (;;) if (fork() < 0) abort();\n}",
                ONE_TEST,
                Status.RUNTIME_ERROR,
            ),
        },
    )
