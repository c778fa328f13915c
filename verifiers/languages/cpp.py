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
never passes. The child says the tests returned only when the tests' entry stored the
run's token after the tests' ``main`` returned: a call that came back because the
program's undefined behaviour let GCC drop the code (a function that flows off its end)
never did, and such builds trap at those points too (``Dialect.checked_flags``). A failed
``assert`` (``Assertion ... failed``, then ``abort``) is a wrong answer; any other crash a
runtime error. The parent dies of the child's signal, so the limits the child hit (CPU,
memory) read as they would for a plain program.

The tests still share the child's address space with the program, and C++ is not memory
safe: code that runs before ``main`` or outside the tests' control (constructors of global
objects, ``__attribute__((constructor))``, ``exit``, ``asm``), preprocessor tricks that
change what the tests say, overloads that capture the tests' comparisons, and the
process's own descriptors and files are refused by :class:`CFamilyCodePolicy` before the
program is built (see docs/security.md for what stays out of scope). With a declaration,
the compiler checks the entry point too: a ``static_assert`` after the tests, in words the
program may not declare, fails the build unless the entry point called with the declared
parameter types returns exactly the declared type (a ``failed`` refusal, not a
``compile_error``).

:mod:`verifiers.languages.c` is C on the same machinery (``gcc -std=gnu17``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import secrets
import signal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.errors import SpecError
from verifiers.keys import build_key
from verifiers.languages import elf
from verifiers.languages.code_policy import Refusal, Source, first, leaves, walk
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_build,
    judge_first,
    judge_pass_record,
    pin_toolchain,
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
#: Unmangled functions a function-style binary defines besides the C library's: the
#: harness's ``main``, the tests' entry, and the C runtime's start-up code.
_OWN_FUNCTIONS = frozenset(
    {
        "main",
        TESTS_ENTRY,
        "_start",
        "_init",
        "_fini",
        "_dl_relocate_static_pie",
        "__libc_csu_init",
        "__libc_csu_fini",
    }
)
#: Mangled-name prefixes of the C++ library's namespaces (``std::``, ``__gnu_cxx::``).
_LIBRARY_MANGLED = ("_ZSt", "_ZNSt", "_ZNKSt", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx")
#: The file name the compiler's check of the declared signature is reported under.
SIGNATURE_FILE = f"vf_signature_{_SECRET}"
_TEST_MAIN = f"vf_test_main_{_SECRET}"
#: The harness's object the tests' entry stores the run's token in when the tests returned.
_DONE = f"vf_done_{_SECRET}"
#: The harness: the process's ``main``, in a translation unit of its own (the program's
#: macros and declarations do not reach it). C that also compiles as C++.
_HARNESS = (
    r"""
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif
int ENTRY(unsigned long long token);
/* The tests' entry stores its token here after the tests' main returned: a call that
   comes back without the tests having run to their end (undefined behaviour of the
   program: a function that flows off its end, a [[noreturn]] function that returns,
   whose code GCC drops, so execution falls into whatever follows) never stores it. */
volatile unsigned long long DONE = 0;
#ifdef __cplusplus
}
#endif

/* A value of this run, not of the build: the program's code cannot know it. */
static unsigned long long vf_token(void) {
    unsigned long long token = 0;
    if (getrandom(&token, sizeof token, GRND_NONBLOCK) != (ssize_t)sizeof token) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        token = ((unsigned long long)now.tv_nsec << 20) ^ (unsigned long long)now.tv_sec ^
                ((unsigned long long)getpid() << 40) ^ (unsigned long long)(size_t)&now;
    }
    return token | 1; /* never DONE's initial 0 */
}

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
        unsigned long long token = vf_token();
        int status = ENTRY(token);
        fflush(NULL);
        if (status == 0 && DONE != token) _exit(NOT_FINISHED);
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
    .replace("DONE", _DONE)
    .replace("NOT_FINISHED", "5")
)
#: A function-like macro's definition (tree-sitter cannot parse what uses it).
_FUNCTION_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+\w+\(", re.M)
#: Which files of a judge program given as ``files`` alone are compiled (the others are
#: headers), by dialect.
JUDGE_SOURCE_SUFFIXES = {"cpp": ("cpp", "cc", "cxx", "C"), "c": ("c",)}
#: The harness's exit status when the child exited 0 without the tests' returning.
_NOT_RETURNED = 4
#: The child's exit status (the harness passes it on) when the call into the tests came
#: back without the tests' entry having stored the run's token (see :data:`_HARNESS`).
_NOT_FINISHED = 5
_NOT_FINISHED_TEXT = (
    "the tests did not run to their end: the call into them came back without their `main` "
    "having returned (undefined behaviour, such as a function that returns a value ending "
    "without `return`, or a `[[noreturn]]` function that returns)"
)
#: What a checked build's trap (SIGILL) means.
_TRAPPED_TEXT = (
    "undefined behaviour trapped (SIGILL): a function that returns a value ended without "
    "`return`, or code the compiler was told is unreachable (after a `[[noreturn]]` call) "
    "was reached"
)


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
    #: More flags for programs compiled with their tests (function-style tasks): the
    #: undefined behaviour after which GCC drops code (a value-returning function that
    #: flows off its end, a ``[[noreturn]]`` function that returns) traps instead, and
    #: floating-point expressions are not contracted (a ``#pragma GCC target("fma")`` of
    #: the program would otherwise change the tests' own arithmetic).
    checked_flags: tuple[str, ...] = ()
    #: Whether the program's functions get mangled names (C++), so that an unmangled one
    #: in its binary is a C library function it defined (:meth:`CFamilyLanguage.audit_build`).
    mangled: bool = False


def cc_recipe() -> ImageRecipe:
    """The ``cc`` image family: GCC for C and C++, and the headers HumanEval-X C++ uses."""
    return ImageRecipe(
        family="cc",
        packages={
            "gcc": "4:12.2.0-3",
            "g++": "4:12.2.0-3",
            "libboost-dev": "1.74.0.3",
            "libssl-dev": "3.0.22-1~deb12u2",
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
    mangled=True,
    checked_flags=(
        "-fsanitize=return,unreachable",
        "-fsanitize-undefined-trap-on-error",
        "-ffp-contract=off",
    ),
)


def _parse(grammar_module: str, code: str) -> Source:
    return Source(grammar_module, readable(code))


#: ``typeid(int)``: tree-sitter-cpp 0.23 reads ``typeid`` of a type as an error (HumanEval-X
#: C++/22 has it), ``sizeof`` of one it reads; both take a type or an expression.
_TYPEID = re.compile(r"\btypeid\b")


def readable(code: str) -> str:
    """The code as the grammar reads it: ``typeid`` spelled ``sizeof``.

    Same length, so every position is unchanged; neither is anything the code policy
    looks for.
    """
    return _TYPEID.sub("sizeof", code) if "typeid" in code else code


#: A compiler's or linker's error line: ``file:line:column: error: ...``, ``cc1plus: error:``.
_ERROR_LINE = re.compile(r"^(\S[^:\n]*?)(?::\d+)*: (?:fatal )?error: ", re.M)


def _signature_failed(stderr: bytes) -> bool:
    """Whether a failed build's errors are all in the compiler's signature check."""
    text = stderr.decode(errors="replace")
    files = {m.group(1) for m in _ERROR_LINE.finditer(text)}
    return files == {SIGNATURE_FILE} and "undefined reference" not in text


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
    declarator = _function_declarator(fn.child_by_field_name("declarator"))
    if declarator is None:
        return ""
    return src.text(declarator.child_by_field_name("declarator"))


def test_program(dialect: Dialect, test: str) -> str:
    """The test code with its ``main`` renamed, and the entry the harness calls.

    Test code without ``main`` gets an entry that returns 0 (compiling is all there is to
    check).
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
        # The test's own text (the parse read `typeid` as `sizeof`, at the same positions).
        data = test.encode("utf-8", errors="surrogatepass")
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
    # The store after the call is reached only when the tests' main returned: where the
    # compiler proved it cannot (the program's undefined behaviour), it drops the store.
    return (
        f"{body}\n\n{argv_decl}{dialect.linkage or 'extern '}volatile unsigned long long "
        f"{_DONE};\n"
        f"{dialect.linkage}int {TESTS_ENTRY}(unsigned long long vf_token_{_SECRET}) {{\n"
        f"    int vf_status_{_SECRET} = {call};\n"
        f"    {_DONE} = vf_token_{_SECRET};\n"
        f"    return vf_status_{_SECRET};\n}}\n"
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
        """tree-sitter's first error, on the code as the grammar reads it (:func:`readable`).

        The compiler is the authority: tree-sitter-cpp misreads valid code
        (``decltype(std::string(s), void())``), so its error is ``deferred``: the program is
        built in the sandbox all the same, and only a failed build is a ``syntax_error``
        (tree-sitter's location with the compiler's message). Code that defines
        function-like macros gets no location at all: tree-sitter does not expand macros,
        so ``FOR(i, n) a[i] = 0;`` after ``#define FOR(i, n) ...`` (common in competitive
        programming) looks like an error to it.
        """
        if _FUNCTION_MACRO.search(code):
            return None
        issue = super().check_syntax(readable(code), spec)
        return dataclasses.replace(issue, deferred=True) if issue is not None else None

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

    def audit_build(self, spec: TestSpec, artefacts: Mapping[str, bytes]) -> TestOutcome | None:
        """Function-style tasks: a binary in which the program replaced a library function.

        The tests share the binary with the program, so a function of the C library the
        program defines (``int memcmp(...)`` matching ``<cstring>``'s ``extern "C"``
        declaration, ``int rand(void)``) is the one the tests and the library's inline
        code call: ``std::string``'s ``==`` then compares nothing. Read from the built
        binary's symbols, whatever the source's spelling: in C++ every function of the
        program has a mangled name, so any other unmangled one but ``main`` and the
        harness's is the program's replacement of a C function, and a strong definition
        in the library's namespaces (``std::``, ``__gnu_cxx::``) one of the C++ library's;
        in C, a function the C or math library exports.
        """
        if not isinstance(spec, AssertScriptTests) or "prog" not in artefacts:
            return None
        try:
            defined = elf.defined_functions(artefacts["prog"])
        except elf.ElfError:
            return None  # not an ELF binary of this reader (another toolchain's): unaudited
        cpp = self.dialect.mangled
        library = elf.c_library_functions() if not cpp else frozenset()
        replaced = sorted(
            {
                s.name
                for s in defined
                if s.name not in _OWN_FUNCTIONS
                and (
                    (cpp and not s.name.startswith("_Z"))
                    or (cpp and s.strong and s.name.startswith(_LIBRARY_MANGLED))
                    or (not cpp and s.name in library)
                )
            }
        )
        if not replaced:
            return None
        rule = f"{self.dialect.name}/library-function"
        shown = ", ".join(f"`{n}`" for n in replaced[:5])
        reason = (
            f"the program defines {shown}, a function of the language's library: the "
            "tests' code (and the library's own inline code) would call the program's "
            "version instead"
        )
        hint = "Give your functions names of their own, or put them in a namespace of yours."
        return Refusal(rule, reason, hint=hint).outcome()

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
            # Last, where nothing of the program follows: the compiler's own check that the
            # entry point is the declared function (see _compiler_check).
            entry = _declared_entry(dialect.grammar, spec.declaration)
            if entry is not None and entry.check:
                source += f"\n{entry.check}"
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
        checked = () if isinstance(spec, StdioTests) else dialect.checked_flags
        argv = (
            dialect.placeholder,
            *dialect.flags,
            *checked,
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
        # The toolchain's identity (its version, an image) joins the key in the pipeline.
        program = Program(
            files=files,
            tests=tuple(tests),
            build=build,
            build_key=build_key(dialect.name, argv, files),
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
        return Executable(
            files=sources,
            run=("{dir}/judge_bin",),
            build=build,
            artefacts=("judge_bin",),
            build_key=build_key(f"judge/{dialect.name}", argv, sources),
            toolchains=(dialect.tool,),
        )

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """``compile_error``; or ``failed`` when the compiler's signature check alone failed.

        That check (appended after the tests) compiles for every program that defines the
        entry point as declared: a build that fails there only is the code policy's
        refusal, found by the compiler (a namespace's own ``string``, a pointer to a
        function returning a type of the program).
        """
        outcome = judge_build(proc, limits)
        if outcome.status is not Status.COMPILE_ERROR or not _signature_failed(proc.stderr):
            return outcome
        rule = f"{self.dialect.name}/signature"
        reason = (
            "the entry point is not the declared function: called with the declared "
            "parameter types, it does not return the declared type (the compiler checked it)"
        )
        hint = "Define the entry point exactly as the task declares it, in the global namespace."
        shown = outcome.message.replace(SIGNATURE_FILE, "the declared signature")
        text = Refusal(rule, reason, hint=hint).describe() + f"\nThe compiler:\n{shown}"
        return TestOutcome(Status.FAILED, text, hack=f"code policy {rule}: {reason}")

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then failed assertions (wrong answer) and crashes, then the pass record."""
        by_event, decided = judge_first(test, spec, proc, limits, compare, MEMORY_MARKERS)
        if decided is not None:
            return decided
        if "pass" not in by_event:
            if proc.signal == signal.SIGABRT and b"Assertion" in proc.stderr:
                return TestOutcome(Status.FAILED, stderr_tail(proc) or "an assertion failed")
            if proc.exit_code == _NOT_RETURNED and proc.signal is None:
                message = "the program exited (status 0) before the tests returned"
                return TestOutcome(Status.RUNTIME_ERROR, message, hack=message)
            if proc.exit_code == _NOT_FINISHED and proc.signal is None:
                return TestOutcome(Status.RUNTIME_ERROR, _NOT_FINISHED_TEXT)
            if proc.signal == signal.SIGILL:
                return TestOutcome(Status.RUNTIME_ERROR, _TRAPPED_TEXT)
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
#
# Tests and candidate share one process (the child of the harness), so the candidate's code
# is checked before it is built (function-style tasks only: a stdin/stdout program is
# judged on its output). Headers are an allow-list; the names of the C library's process,
# signal, thread, file and environment functions that those headers (and what they pull
# in: Boost and OpenSSL bring <unistd.h>) declare are refused wherever they appear; so is
# every construct that runs code outside the tests or changes what the tests say. See
# docs/security.md for what stays out of scope (C and C++ are not memory safe).


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Headers a function may include: the C and C++ standard library without threads,
#: signals, non-local jumps, files or the file system, and what HumanEval-X C++ uses
#: (Boost.Any, OpenSSL's MD5).
HEADERS = _words(
    """algorithm any array bit bitset cassert cctype cfenv cfloat charconv chrono cinttypes
    climits clocale cmath compare complex concepts cstdarg cstdbool cstddef cstdint cstdio
    cstdlib cstring ctime cuchar cwchar cwctype deque exception forward_list functional
    initializer_list iomanip ios iosfwd iostream istream iterator limits list locale map memory
    new numbers numeric optional ostream queue random ranges ratio regex set sstream stack
    stdexcept streambuf string string_view system_error tuple type_traits typeindex typeinfo
    unordered_map unordered_set utility valarray variant vector version
    assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h
    math.h stdalign.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h
    string.h tgmath.h time.h uchar.h wchar.h wctype.h
    boost/any.hpp openssl/md5.h"""
)
#: Functions and objects of the process, its signals, threads, descriptors, files and
#: environment, as the allowed headers declare them (the C library's, POSIX's under
#: _GNU_SOURCE, and the C++ library's): refused wherever the name appears.
DENIED = _words(
    """exit _exit _Exit abort quick_exit at_quick_exit atexit on_exit terminate set_terminate
    set_unexpected unexpected system popen pclose fork vfork clone clone3 unshare setns daemon
    execl execle execlp execv execve execvp execvpe fexecve posix_spawn posix_spawnp wait
    waitpid waitid wait3 wait4 kill killpg tgkill tkill raise signal sigaction sigqueue
    sigprocmask sigsuspend sigwait sigwaitinfo sigtimedwait sigaltstack psignal pthread_sigmask
    alarm ualarm pause setitimer timer_create timer_settime setjmp longjmp sigsetjmp siglongjmp
    syscall ptrace prctl setrlimit prlimit getrlimit setpriority nice setsid setpgid setuid
    setgid seteuid setegid chroot chdir fchdir sched_setaffinity sched_setscheduler
    sched_setparam sched_yield getpid getppid gettid thread jthread this_thread async
    packaged_task pthread_create pthread_kill pthread_exit pthread_cancel pthread_detach
    thrd_create thrd_exit open openat open64 creat close close_range read write pread pwrite
    readv writev lseek dup dup2 dup3 pipe pipe2 fcntl ioctl mmap munmap mprotect mremap madvise
    memfd_create sendfile splice tee socket socketpair connect bind listen accept unlink
    unlinkat link symlink readlink rmdir mkdir rename renameat renameat2 remove truncate
    ftruncate chmod fchmod chown access faccessat stat fstat lstat opendir readdir fsync sync
    fopen fopen64 freopen freopen64 fdopen fclose fcloseall fileno tmpfile tmpfile64 tmpnam
    tempnam mkstemp mkostemp mkdtemp mktemp open_memstream fmemopen fopencookie getenv
    secure_getenv setenv putenv unsetenv clearenv environ program_invocation_name
    program_invocation_short_name fstream ifstream ofstream filebuf basic_fstream
    basic_ifstream basic_ofstream basic_filebuf filesystem dlopen dlsym dlclose dladdr
    dl_iterate_phdr"""
)
#: GCC builtins a function may call (bit counting, overflow checks); other ``__`` names are
#: the implementation's (``__attribute__``, ``__asm__``, ``__environ``) and refused.
BUILTINS = _words(
    """__builtin_popcount __builtin_popcountl __builtin_popcountll __builtin_clz
    __builtin_clzl __builtin_clzll __builtin_ctz __builtin_ctzl __builtin_ctzll
    __builtin_ffs __builtin_ffsl __builtin_ffsll __builtin_parity __builtin_parityl
    __builtin_parityll __builtin_expect __builtin_add_overflow __builtin_sub_overflow
    __builtin_mul_overflow __builtin_abs __builtin_sqrt __gcd __int128 __lg"""
)
#: Library functions and types the tests call by their plain names: a function of the
#: program with one of these names would take part in the tests' overload resolution
#: (`abs(long)` beside the library's `abs(int)`) or replace it (C), so where the tests use
#: one the program may not declare it. (Functions the tests call that are not the
#: library's are the task's: the program must define them.)
LIBRARY_NAMES = _words(
    """abs fabs labs llabs fmod pow sqrt cbrt exp log log2 log10 floor ceil round trunc
    sin cos tan atan atan2 hypot isnan isinf isfinite fmin fmax max min swap sort
    stable_sort reverse find find_if count count_if accumulate equal all_of any_of none_of
    min_element max_element lower_bound upper_bound binary_search unique next_permutation
    iota fill copy transform distance begin end size empty to_string stoi stol stoll stod
    atoi atol atof strtol strcmp strncmp strlen strcpy strcat memcmp memcpy memset printf
    puts putchar sprintf snprintf vector string map set pair tuple make_pair make_tuple
    unordered_map unordered_set deque list queue stack priority_queue array initializer_list
    get tolower toupper isalpha isdigit isspace isupper islower isalnum"""
)
#: C keywords spelled with an underscore and a capital (other such names are reserved).
_UNDERSCORE_KEYWORDS = _words(
    "_Bool _Complex _Imaginary _Alignas _Alignof _Static_assert _Generic _Noreturn _Atomic"
)
_RESERVED = re.compile(r"__|_[A-Z]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Standard attributes (``[[nodiscard]]``); ``__attribute__`` and ``[[gnu::...]]`` are refused.
ATTRIBUTES = _words("nodiscard maybe_unused likely unlikely fallthrough deprecated")
#: ``[[noreturn]]``, C's ``_Noreturn`` and ``<stdnoreturn.h>``'s ``noreturn``: the compiler
#: drops the code after a call of such a function, so one that returns runs into whatever
#: bytes follow (the tests' code gone: a wrong program passed so).
_NORETURN = frozenset({"noreturn", "_Noreturn"})
#: Pragmas that only tune code generation.
_PRAGMAS = ("GCC optimize", "GCC target", "once")
#: What ``#pragma GCC optimize`` may set (``-f`` and ``-`` prefixes aside; ``no-`` of the
#: options too): levels and transformations that keep the meaning of every expression. It
#: applies to the tests' code after it in the translation unit: no ``Ofast``, ``fast-math``
#: or other floating-point option (fast-math dropped a NaN check of a test's assert).
OPTIMIZE_OPTIONS = _words(
    """O O0 O1 O2 O3 Os Og unroll-loops unroll-all-loops peel-loops inline inline-functions
    inline-small-functions tree-vectorize tree-loop-vectorize tree-slp-vectorize
    omit-frame-pointer stack-protector prefetch-loop-arrays strict-aliasing gcse tracer web
    loop-interchange split-loops unswitch-loops ipa-cp-clone rename-registers
    optimize-sibling-calls expensive-optimizations schedule-insns schedule-insns2
    move-loop-invariants ivopts tree-pre align-functions align-loops align-jumps align-labels
    branch-count-reg if-conversion if-conversion2 modulo-sched"""
)
#: What ``#pragma GCC target`` may set: instruction set extensions (and ``arch=``,
#: ``tune=``), never the floating-point unit or its conventions (``fpmath=387``).
TARGET_OPTIONS = _words(
    """sse sse2 sse3 ssse3 sse4 sse4.1 sse4.2 sse4a avx avx2 fma bmi bmi2 popcnt lzcnt abm
    f16c movbe aes pclmul rdrnd rdseed adx sha"""
)
_PRAGMA_STRING = re.compile(r'"([^"\\\n]*)"')
#: Keywords of C and C++: a macro of one of these names rewrites the tests.
KEYWORDS = _words(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires restrict return short signed sizeof static
    static_assert static_cast struct switch template this thread_local throw true try typedef
    typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq main
    assert NDEBUG"""
)
_NAMES = ("identifier", "type_identifier", "field_identifier", "namespace_identifier")
#: Expressions that run code when a namespace-scope or static variable is initialised.
_RUNS_CODE = frozenset(
    {
        "call_expression",
        "lambda_expression",
        "new_expression",
        "user_defined_literal",
        "co_await_expression",
        "throw_expression",
    }
)
#: Longest region the parser could not read that is checked word by word (else refused).
_ERROR_CHARS = 40
#: Words that never appear in such a region of honest code.
_STRUCTURAL = _words(
    "asm extern operator static namespace template define include pragma main class struct "
    "union typedef using thread_local"
)
_CLASS_SPECIFIERS = ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier")
_WRAPPERS = ("pointer_declarator", "reference_declarator", "init_declarator")
#: What a declarator derives from its name's type: the nearest one decides what it declares.
_DERIVATIONS = (
    "function_declarator",
    "pointer_declarator",
    "reference_declarator",
    "array_declarator",
)
_NAME_NODES = ("qualified_identifier", "operator_name", "destructor_name", "template_function")
#: Declarations that name what they declare in their ``declarator`` fields.
_WITH_DECLARATORS = (
    "function_definition",
    "declaration",
    "field_declaration",
    "type_definition",
    "parameter_declaration",
    "optional_parameter_declaration",
)
#: Declarations whose names :func:`_declared_names` reads.
_DECLARING = (
    *_WITH_DECLARATORS,
    "alias_declaration",
    "namespace_definition",
    "concept_definition",
    "for_range_loop",
    "preproc_def",
    "preproc_function_def",
    *_CLASS_SPECIFIERS,
)
_TEMPLATE_PARAMETERS = (
    "type_parameter_declaration",
    "optional_type_parameter_declaration",
    "variadic_type_parameter_declaration",
    "template_template_parameter_declaration",
)
_USED_NAMES = ("identifier", "type_identifier", "namespace_identifier")
#: Types no constructor of which can run the program's code.
_SCALAR_TYPES = ("primitive_type", "sized_type_specifier", "placeholder_type_specifier")
#: Scopes whose declarations hide a name only after the point of declaration.
_BLOCK_SCOPES = frozenset(
    {"compound_statement", "for_statement", "if_statement", "while_statement", "switch_statement"}
)
#: What a declaration states before its functions that the compiler's check restates.
_PREAMBLE = ("type_definition", "alias_declaration", "using_declaration")


@dataclass(frozen=True)
class _TestFacts:
    """What the rules need of the test code: the names it depends on and all its words."""

    #: Names the tests use that the program must not declare at namespace scope: those the
    #: tests declare at namespace scope and the library's (:data:`LIBRARY_NAMES`) they use;
    #: the tests' local variables are their own.
    protected: frozenset[str]
    #: Names the tests declare at namespace scope (their helpers and tables).
    declared: frozenset[str]
    #: Every word of the tests: a macro of any of these names rewrites them.
    words: frozenset[str]


@functools.lru_cache(maxsize=256)
def _test_facts(grammar_module: str, files: tuple[str, ...]) -> _TestFacts:
    """Cached: the samples of one problem share their tests."""
    used: set[str] = set()
    top: set[str] = set()
    local: set[str] = set()
    words: set[str] = set()
    for text in files:
        if not text:
            continue
        src = Source(grammar_module, text)
        words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        for leaf in leaves(src.root):
            if leaf.type in ("identifier", "type_identifier", "namespace_identifier"):
                used.add(src.text(leaf))
        for node in src.root.named_children:
            top |= {src.text(n) for n in _declared_names(node)}
        for node in walk(src.root):
            if node.type in ("compound_statement", "parameter_list"):
                for inner in walk(node):
                    if inner.type in ("declaration", "parameter_declaration", "for_range_loop"):
                        local |= {src.text(n) for n in _declared_names(inner)}
    library = (used - local) & LIBRARY_NAMES
    return _TestFacts(frozenset(top | library), frozenset(top), frozenset(words))


def _declarator_name(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The name a declarator declares (through pointers, references, arrays, functions)."""
    while node is not None and node.type not in (*_NAMES, "qualified_identifier", "operator_name"):
        if node.type in ("destructor_name", "operator_cast", "template_function"):
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None and node.type in ("parenthesized_declarator", "reference_declarator"):
            named = [c for c in node.named_children if c.type not in ("comment", "type_qualifier")]
            inner = named[-1] if named else None
        node = inner
    return node


def _declared_names(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The name nodes a declaration, definition or specifier declares."""
    kind = node.type
    if kind == "template_declaration":
        inner = [c for c in node.named_children if c.type != "template_parameter_list"]
        return [n for c in inner for n in _declared_names(c)]
    out: list[tree_sitter.Node | None] = []
    if kind in _WITH_DECLARATORS:
        out += [_declarator_name(d) for d in node.children_by_field_name("declarator")]
        kind_node = node.child_by_field_name("type")
        if kind_node is not None and kind_node.type in _CLASS_SPECIFIERS:
            out += _specifier_names(kind_node)
    elif kind in _CLASS_SPECIFIERS:
        out += _specifier_names(node)
    elif kind in ("alias_declaration", "namespace_definition", "concept_definition"):
        out.append(node.child_by_field_name("name"))
    elif kind == "for_range_loop":
        out.append(_declarator_name(node.child_by_field_name("declarator")))
    elif kind in ("preproc_def", "preproc_function_def"):
        out.append(node.child_by_field_name("name"))
    return [n for n in out if n is not None]


def _specifier_names(node: tree_sitter.Node) -> list[tree_sitter.Node | None]:
    names: list[tree_sitter.Node | None] = [node.child_by_field_name("name")]
    if node.type == "enum_specifier":
        body = node.child_by_field_name("body")
        if body is not None:
            names += [e.child_by_field_name("name") for e in body.named_children]
    return names


def _function_declarator(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The function declarator of a function's declarator (not of a function pointer)."""
    while node is not None and node.type in _WRAPPERS:
        node = node.child_by_field_name("declarator") or (
            node.named_children[-1] if node.named_children else None
        )
    return node if node is not None and node.type == "function_declarator" else None


def _inner_declarator(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The declarator one level in (``(*f)`` is ``*f``, ``*f`` is ``f``)."""
    inner = node.child_by_field_name("declarator")
    if inner is None and node.type in ("parenthesized_declarator", "reference_declarator"):
        named = [c for c in node.named_children if c.type not in ("comment", "type_qualifier")]
        inner = named[-1] if named else None
    return inner


def _declares_function(declarator: tree_sitter.Node | None) -> bool:
    """Whether a declarator declares a function rather than a variable.

    What a declarator declares is its derivation nearest the name: ``*f(int)`` is a function
    (returning a pointer), ``(*f)(int)`` a pointer (to a function), ``(f)(int)`` a function,
    ``(&r)[3]`` a reference. Parentheses and initialisers change nothing.
    """
    if declarator is not None and declarator.type == "operator_cast":
        return True
    return _derivation(declarator) == "function_declarator"


def _derivation(declarator: tree_sitter.Node | None) -> str | None:
    """A declarator's derivation nearest the name (None for a plain name)."""
    nearest = None
    node = declarator
    while node is not None and node.type not in (*_NAMES, *_NAME_NODES):
        if node.type in _DERIVATIONS:
            nearest = node.type
        node = _inner_declarator(node)
    return nearest


def _at_global_scope(node: tree_sitter.Node) -> bool:
    """Whether a declaration is in the global namespace itself (conditionals aside)."""
    parent = node.parent
    while parent is not None and parent.type.startswith("preproc_"):
        parent = parent.parent
    return parent is not None and parent.type == "translation_unit"


def _all_declared(root: tree_sitter.Node) -> Iterator[tuple[tree_sitter.Node, tree_sitter.Node]]:
    """Every (declaration, name node) of the code, at any scope.

    Namespaces, classes, functions and their parameters, templates' parameters,
    using-declarations, namespace aliases, structured bindings, macros.
    """
    for node in walk(root):
        kind = node.type
        if kind in _DECLARING:
            for name in _declared_names(node):
                yield node, name
        elif kind == "using_declaration":
            names = [c for c in node.named_children if c.type in (*_NAMES, "qualified_identifier")]
            if names and not any(c.type == "namespace" for c in node.children):
                yield node, names[-1]
        elif kind in _TEMPLATE_PARAMETERS or kind == "namespace_alias_definition":
            found = node.child_by_field_name("name") or next(
                (c for c in node.named_children if c.type in _NAMES), None
            )
            if found is not None:
                yield node, found
        elif kind == "structured_binding_declarator":
            for bound in node.named_children:
                if bound.type == "identifier":
                    yield node, bound


@dataclass(frozen=True)
class _Entry:
    """The declared entry point, the names the declaration gives, and its compiler check."""

    name: str
    signature: str
    #: Helper name -> its definition's tokens (HumanEval-X's ``poly``, ``encode_shift``:
    #: the tests call them to check the answer, so the program must keep them as given).
    helpers: tuple[tuple[str, str], ...] = ()
    #: What the declaration defines at global scope (the entry, its helpers, its typedefs
    #: such as ``list_any``): the program may declare these names there only.
    owned: frozenset[str] = frozenset()
    #: What the declaration names without declaring it (``vector``, ``string``, ``std``, the
    #: ``pow`` its helper calls): the program may declare none of these, in any scope, so
    #: that each means in the program what it means in the declaration.
    names: frozenset[str] = frozenset()
    #: Every word of the declaration: a macro of one would rewrite the compiler's check.
    words: frozenset[str] = frozenset()
    #: Code appended after the tests that compiles only if the entry point, called with
    #: the declared parameter types, returns exactly the declared type ("" if the header
    #: is too unusual to restate).
    check: str = ""


@functools.lru_cache(maxsize=256)
def _declared_entry(grammar_module: str, declaration: str | None) -> _Entry | None:
    """The declared entry point's name and signature (None without a declaration)."""
    if not declaration:
        return None
    src = Source(grammar_module, declaration.rstrip() + "\n}\n")
    top = _top_level(src.root)
    functions = [n for n in top if n.type == "function_definition"]
    if not functions:
        return None
    fn = functions[-1]
    name = _function_name(src, fn)
    helpers = tuple((_function_name(src, h), " ".join(_tokens(src, h))) for h in functions[:-1])
    types = [n for n in top if n.type in ("type_definition", "alias_declaration")]
    owned = {name, *(h for h, _ in helpers)}
    owned |= {src.text(n) for t in types for n in _declared_names(t)}
    used = {src.text(n) for n in leaves(src.root) if n.type in _USED_NAMES}
    local: set[str] = set()
    for node in walk(src.root):
        if node.type in ("compound_statement", "parameter_list"):
            local |= {src.text(n) for _, n in _all_declared(node)}
    # Its typedefs and using-directives (`using namespace std;`), restated before the check.
    preamble = [src.text(n) for n in src.root.named_children if n.type in _PREAMBLE]
    check = _compiler_check(src, fn, name, preamble, grammar_module == CPP.grammar)
    return _Entry(
        name,
        _signature(src, fn),
        helpers,
        frozenset(owned),
        frozenset(used - local - owned - KEYWORDS),
        frozenset(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", declaration)),
        check,
    )


#: The check in C++: the declared return type, exactly, from a call with the declared
#: parameter types (the ``@NAME@`` fields are filled in at once). Top-level ``const`` is
#: set aside: a call of ``const char *const f()`` has the type ``const char *``.
_CPP_CHECK = """namespace @NS@ {
template <class A, class B> struct vf_same_@SECRET@ { enum { vf_is_@SECRET@ = 0 }; };
template <class A> struct vf_same_@SECRET@<A, A> { enum { vf_is_@SECRET@ = 1 }; };
template <class T> struct vf_plain_@SECRET@ { typedef T vf_type_@SECRET@; };
template <class T> struct vf_plain_@SECRET@<const T> { typedef T vf_type_@SECRET@; };
template <class T> struct vf_plain_@SECRET@<volatile T> { typedef T vf_type_@SECRET@; };
template <class T> struct vf_plain_@SECRET@<const volatile T> { typedef T vf_type_@SECRET@; };
template <class T> T &vf_lvalue_@SECRET@();
}
static_assert(@NS@::vf_same_@SECRET@<
                  @NS@::vf_plain_@SECRET@<decltype(@ENTRY@(@ARGS@))>::vf_type_@SECRET@,
                  @NS@::vf_plain_@SECRET@<@RETURNS@>::vf_type_@SECRET@>::vf_is_@SECRET@,
              "the entry point must return the declared type");
"""
#: The check in C: the entry point is a function (a pointer's type is not its pointee's),
#: and its call with the declared parameter types has the declared type.
_C_CHECK = """_Static_assert(
    __builtin_types_compatible_p(__typeof__(@ENTRY@), __typeof__(*@ENTRY@)),
    "the entry point must be a function");
_Static_assert(__builtin_types_compatible_p(__typeof__(@ENTRY@(@ARGS@)), @RETURNS@),
               "the entry point must return the declared type");
"""


def _compiler_check(
    src: Source, fn: tree_sitter.Node, name: str, preamble: list[str], cpp: bool
) -> str:
    """The compiler's check of the declared signature, in C or C++ (see :attr:`_Entry.check`).

    The names in it are the declaration's (which the program may not declare or define),
    keywords and names with this process's secret: the program can change none of them.
    Its lines are reported as the file :data:`SIGNATURE_FILE`, so that a failed build
    caused by it alone is told apart (:meth:`CFamilyLanguage.interpret_build`).
    """
    declarator = fn.child_by_field_name("declarator")
    function = _function_declarator(declarator)
    kind = fn.child_by_field_name("type")
    if function is None or kind is None or not name.isidentifier():
        return ""
    data = src.data
    result = [src.text(c) for c in fn.children if c.type == "type_qualifier" or c.id == kind.id]
    wrapper = declarator
    while wrapper is not None and wrapper.id != function.id:
        inner = _inner_declarator(wrapper)
        if inner is None:
            return ""
        result.append(data[wrapper.start_byte : inner.start_byte].decode(errors="replace"))
        wrapper = inner
    params: list[str] = []
    plist = function.child_by_field_name("parameters")
    for param in plist.named_children if plist is not None else []:
        if param.type == "comment":
            continue
        if param.type not in ("parameter_declaration", "optional_parameter_declaration"):
            return ""  # variadic: nothing to restate
        inner = param.child_by_field_name("declarator")
        end = inner.end_byte if inner is not None else param.end_byte
        named = _declarator_name(inner)
        if named is not None and named.type in _NAMES:
            text = data[param.start_byte : named.start_byte] + data[named.end_byte : end]
        else:
            text = data[param.start_byte : end]
        params.append(" ".join(text.decode(errors="replace").split()))
    if params == ["void"]:
        params = []
    returns = " ".join(" ".join(result).split())
    head = f'#line 1 "{SIGNATURE_FILE}"\n' + "".join(f"{p}\n" for p in preamble)
    if cpp:
        # decltype of a call, not of the name: the name may also be the library's (CPP/23
        # declares `strlen(string)` beside C's `strlen`), and parameters the program takes
        # by const reference are its choice. An overload of its own is the policy's refusal.
        args = ", ".join(f"{SIGNATURE_FILE}::vf_lvalue_{_SECRET}<{p}>()" for p in params)
        template = _CPP_CHECK
    else:
        args = ", ".join(f"*(__typeof__({p}) *)0" for p in params)
        template = _C_CHECK
    fill = {"ENTRY": name, "ARGS": args, "RETURNS": returns, "NS": SIGNATURE_FILE}
    fill["SECRET"] = _SECRET
    return head + re.sub(r"@(\w+)@", lambda m: fill[m.group(1)], template)


def _top_level(root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Namespace-scope declarations: inside namespaces and templates too."""
    out = []
    stack = list(reversed(root.named_children))
    while stack:
        node = stack.pop()
        if node.type == "namespace_definition":
            body = node.child_by_field_name("body")
            out.append(node)
            stack.extend(reversed(body.named_children if body is not None else []))
        elif node.type == "template_declaration":
            out.extend(c for c in node.named_children if c.type != "template_parameter_list")
        elif node.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
            stack.extend(reversed(node.named_children))
        else:
            out.append(node)
    return out


def _signature(src: Source, fn: tree_sitter.Node) -> str:
    """A function's return and parameter types, without names, ``std::``, comments or layout.

    Parameters also drop ``const`` and references: passing by value or by const reference
    is the program's choice; the return type is kept exactly.
    """
    declarator = fn.child_by_field_name("declarator")
    function = _function_declarator(declarator)
    shown = []
    wrapper = declarator
    while wrapper is not None and wrapper is not function and wrapper.type in _WRAPPERS:
        shown.append("*" if wrapper.type == "pointer_declarator" else "&")
        wrapper = wrapper.child_by_field_name("declarator") or (
            wrapper.named_children[-1] if wrapper.named_children else None
        )
    result = _tokens(src, fn.child_by_field_name("type")) + shown
    params = []
    if function is not None:
        plist = function.child_by_field_name("parameters")
        for param in plist.named_children if plist is not None else []:
            if param.type == "comment":
                continue
            name = _declarator_name(param.child_by_field_name("declarator"))
            kept = [t for t in _tokens(src, param, skip=name) if t not in ("const", "&", "&&")]
            if param.type == "optional_parameter_declaration":
                value = param.child_by_field_name("default_value")
                drop = set(_tokens(src, value)) if value is not None else set()
                kept = [t for t in kept if t not in drop and t != "="]
            params.append(" ".join(kept))
    return f"{' '.join(result)} ({', '.join(params)})"


def _tokens(
    src: Source, node: tree_sitter.Node | None, skip: tree_sitter.Node | None = None
) -> list[str]:
    """A node's tokens without comments, one name node, or ``std::`` qualifiers."""
    if node is None:
        return []
    out: list[str] = []
    for leaf in leaves(node):
        if (
            skip is not None
            and leaf.start_byte >= skip.start_byte
            and leaf.end_byte <= skip.end_byte
        ):
            continue
        out.append(src.text(leaf))
    cleaned: list[str] = []
    i = 0
    while i < len(out):
        if out[i] == "std" and i + 1 < len(out) and out[i + 1] == "::":
            i += 2
            continue
        cleaned.append(out[i])
        i += 1
    return cleaned


def _pragma_refused(argument: str) -> str | None:
    """Why a ``#pragma GCC optimize/target`` is refused (None: allowed; ``once`` is)."""
    if argument.strip() == "once":
        return None
    kind, _, rest = argument.partition(" ")[2].lstrip().partition("(")
    kind = kind.strip()
    if kind not in ("optimize", "target") or not rest.rstrip().endswith(")"):
        head = argument.split("(", maxsplit=1)[0].split('"', maxsplit=1)[0].strip()
        return f'`{head}` is not `GCC optimize("...")` or `GCC target("...")`'
    inside = rest.rstrip()[:-1]
    if _PRAGMA_STRING.sub("", inside).replace(",", "").strip():
        return "its arguments are not string literals"
    for literal in _PRAGMA_STRING.findall(inside):
        for option in (o.strip() for o in literal.split(",")):
            if kind == "optimize":
                plain = option[2:] if option.startswith("-f") else option.lstrip("-")
                plain = plain.removeprefix("no-")
                if plain not in OPTIMIZE_OPTIONS:
                    return f"the option `{option}` may change what the code computes"
            elif (
                option.partition("=")[0] not in ("arch", "tune")
                and option not in (TARGET_OPTIONS)
                and not option.startswith("avx512")
            ):
                return f"the target option `{option}` is not an instruction set extension"
    return None


class CFamilyCodePolicy:
    """The rules a C or C++ function-style program is checked against before it is built.

    Args:
        dialect: C or C++ (the grammar, and the prefix of the rules' names).
    """

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def check(
        self, code: str, test_files: Sequence[str] = (), declaration: str | None = None
    ) -> Refusal | None:
        """The first rule the code breaks, or None.

        Args:
            code: The candidate's code (never the trusted tests or declaration).
            test_files: The test code: the names it uses, which the program may not
                declare, and its words, which the program may not define as macros.
            declaration: The declared entry point (HumanEval-X's ``declaration``), if known.
        """
        grammar_module = self.dialect.grammar
        tests = _test_facts(grammar_module, tuple(test_files))
        entry = _declared_entry(grammar_module, declaration)
        return _CCheck(self, Source(grammar_module, readable(code)), tests, entry).run()

    def hint(self) -> str:
        """What a program may include instead."""
        return f"Allowed headers: {', '.join(sorted(HEADERS))}."


class _CCheck:
    """One program's check: the parse, the walk over its tree, its declarations, its signature."""

    def __init__(
        self, policy: CFamilyCodePolicy, src: Source, tests: _TestFacts, entry: _Entry | None
    ) -> None:
        self.policy = policy
        self.prefix = policy.dialect.name
        self.src = src
        self.tests = tests
        self.entry = entry
        self.top = _top_level(src.root)
        self.defined = {
            self._last_name(_declarator_name(n.child_by_field_name("declarator")))
            for n in walk(src.root)
            if n.type == "function_definition"
        }
        self.types = {
            self.src.text(n)
            for node in walk(src.root)
            if node.type in (*_CLASS_SPECIFIERS, "type_definition", "alias_declaration")
            for n in _declared_names(node)
        }
        # Every declaration of the program, at any scope.
        self.declared = list(_all_declared(src.root))
        self._seen: tuple[frozenset[str], bool] | None = None
        self._scopes: dict[str, list[tuple[tree_sitter.Node, tree_sitter.Node, bool]]] | None
        self._scopes = None
        self._member_names: dict[str, frozenset[str]] | None = None

    def run(self) -> Refusal | None:
        return first(
            [
                self._parsed(),
                self._walk(),
                self._namespace_scope(),
                self._declarations(),
                self._judging(),
                self._signature(),
            ]
        )

    def refuse(self, node: tree_sitter.Node | None, rule: str, reason: str, hint: str) -> Refusal:
        return self.src.refuse(node, f"{self.prefix}/{rule}", reason, hint)

    def _last_name(self, node: tree_sitter.Node | None) -> str:
        text = self.src.text(node)
        return text.rsplit("::", 1)[-1].strip()

    def _parsed(self) -> Iterator[Refusal]:
        # tree-sitter-cpp misreads a few valid expressions (`typeid(int)` in some contexts):
        # a short region it could not read is checked word by word, anything larger refused.
        for node in walk(self.src.root) if self.src.root.has_error else ():
            if not (node.type == "ERROR" or node.is_missing):
                continue
            text = self.src.text(node)
            words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
            if len(text) > _ERROR_CHARS or "\n" in text.strip() or words & _STRUCTURAL:
                yield self.refuse(
                    node,
                    "unparsed",
                    "the code does not parse here, so it cannot be checked",
                    "Write code the parser reads whole.",
                )
            for word in words:
                yield from self._name(node, word)
        if "\\\n" in self.src.text(self.src.root):
            yield self.refuse(
                None,
                "line-splice",
                "backslash-newline line splices are not allowed (they join names the "
                "checks read apart)",
                "Write each name and directive on one line.",
            )

    def _walk(self) -> Iterator[Refusal]:
        for node in walk(self.src.root):
            kind = node.type
            if kind == "preproc_include":
                yield from self._include(node)
            elif kind in ("preproc_def", "preproc_function_def"):
                yield from self._macro(node)
            elif kind == "preproc_call":
                yield from self._directive(node)
            elif "asm" in kind:
                yield self.refuse(node, "asm", "inline assembly is not allowed", "Write C/C++.")
            elif kind in ("attribute_specifier", "ms_declspec_modifier"):
                yield self.refuse(
                    node,
                    "attribute",
                    "`__attribute__` and `__declspec` are not allowed (constructors, sections, "
                    "aliases run or place code outside the tests)",
                    f"Standard attributes are allowed: {', '.join(sorted(ATTRIBUTES))}.",
                )
            elif kind in _NORETURN or (
                kind == "attribute"
                and self.src.text(node.child_by_field_name("name")) == "noreturn"
            ):
                yield self._noreturn(node)
            elif kind == "attribute":
                name = self.src.text(node.child_by_field_name("name"))
                prefix = node.child_by_field_name("prefix")
                if prefix is not None or name not in ATTRIBUTES:
                    yield self.refuse(
                        node,
                        "attribute",
                        f"the attribute `{self.src.text(node)}` is not allowed",
                        f"Standard attributes are allowed: {', '.join(sorted(ATTRIBUTES))}.",
                    )
            elif kind == "linkage_specification" or (
                kind == "storage_class_specifier"
                and self.src.text(node) in ("extern", "thread_local", "__thread")
            ):
                yield self._extern(node)
            elif kind == "declaration" and not self._function_ok(node):
                yield self.refuse(
                    node,
                    "declaration",
                    "declaring a function the code does not define is not allowed (it binds "
                    "to whatever the C library has of that name)",
                    "Define every function you declare.",
                )
            elif node.child_count == 0 and kind in (*_NAMES, "statement_identifier"):
                yield from self._name(node, self.src.text(node), scoped=True)

    def _own_name(self, leaf: tree_sitter.Node, name: str) -> bool:
        """Whether a name token means the program's own declaration, not the library's.

        A label, a member (``obj.close``, a field or method name), a name qualified by a
        class of the program (``Pool::close``), a declaration of the program's in a scope
        the tests do not see (a parameter, a local, a member: not at namespace scope, not a
        friend, not a block-scope function prototype, which binds to the C library), and a
        use that such a declaration in an enclosing scope hides. A C library function,
        type or object of that name is named nowhere else: a plain ``close(fd)``,
        ``::close``, ``std::exit``, ``using std::exit``, a macro's body.
        """
        kind = leaf.type
        if kind in ("statement_identifier", "field_identifier"):
            return True  # a label; a member of a class (never a C library function)
        parent = leaf.parent
        if parent is not None and parent.type == "qualified_identifier":
            if parent.child_by_field_name("name") != leaf:
                return False  # a qualifier (`filesystem::`)
            qualifier = parent.child_by_field_name("scope")
            return qualifier is not None and self.src.text(qualifier) in self._classes()
        own = self._own_scopes().get(name, ())
        for name_node, scope, ordered in own:
            if name_node == leaf:
                return True
            if not (scope.start_byte <= leaf.start_byte and leaf.end_byte <= scope.end_byte):
                continue
            if not ordered or name_node.end_byte <= leaf.start_byte:
                return True
            if scope.type == "field_declaration_list" and self._in_body(leaf, scope):
                return True  # a member function's body sees every member of its class
        owner = self._out_of_class_owner(leaf)
        return owner is not None and name in self._members().get(owner, frozenset())

    @staticmethod
    def _in_body(leaf: tree_sitter.Node, klass: tree_sitter.Node) -> bool:
        """Whether a token is in the body (or initialisers) of a member function of a class."""
        node = leaf.parent
        while node is not None and node != klass:
            if node.type in ("compound_statement", "field_initializer_list"):
                return True
            node = node.parent
        return False

    def _classes(self) -> frozenset[str]:
        """The names of the classes (and enums) the program defines."""
        return frozenset(
            self.src.text(n.child_by_field_name("name"))
            for n in walk(self.src.root)
            if n.type in _CLASS_SPECIFIERS
            and n.child_by_field_name("body") is not None
            and n.child_by_field_name("name") is not None
        )

    def _members(self) -> dict[str, frozenset[str]]:
        """Each class's member names (for its member functions defined outside it)."""
        if self._member_names is None:
            members: dict[str, set[str]] = {}
            for _node, name_node, scope, _ in self._scoped_declarations():
                owner = scope.parent
                if scope.type == "field_declaration_list" and owner is not None:
                    klass = self.src.text(owner.child_by_field_name("name"))
                    members.setdefault(klass, set()).add(self.src.text(name_node))
            self._member_names = {k: frozenset(v) for k, v in members.items()}
        return self._member_names

    def _out_of_class_owner(self, leaf: tree_sitter.Node) -> str | None:
        """The class of the member function (``int Pool::get() {...}``) a token is in."""
        node = leaf.parent
        while node is not None:
            if node.type == "function_definition":
                name = _declarator_name(node.child_by_field_name("declarator"))
                if name is not None and name.type == "qualified_identifier":
                    scope = name.child_by_field_name("scope")
                    return self.src.text(scope) if scope is not None else None
            node = node.parent
        return None

    def _own_scopes(self) -> dict[str, list[tuple[tree_sitter.Node, tree_sitter.Node, bool]]]:
        """Denied names the program declares itself: name node, scope, whether ordered.

        ``ordered``: the declaration hides the name only after it (a block's); a class's
        members, a function's parameters and a template's parameters hide it in all of
        their scope.
        """
        if self._scopes is None:
            found: dict[str, list[tuple[tree_sitter.Node, tree_sitter.Node, bool]]] = {}
            for _, name_node, scope, ordered in self._scoped_declarations():
                name = self.src.text(name_node)
                if name in DENIED:
                    found.setdefault(name, []).append((name_node, scope, ordered))
            self._scopes = found
        return self._scopes

    def _scoped_declarations(
        self,
    ) -> Iterator[tuple[tree_sitter.Node, tree_sitter.Node, tree_sitter.Node, bool]]:
        """The program's declarations below namespace scope that declare a name of its own.

        (declaration, name node, scope, ordered). Not: using-declarations and namespace
        aliases (the library's names under another scope), macros, friends (namespace
        names), block-scope function prototypes (the C library's functions), enumerators
        of scoped enums (not in the enclosing scope).
        """
        for node, name_node in self.declared:
            if name_node.type not in _NAMES or node.type in (
                "using_declaration",
                "namespace_alias_definition",
                "preproc_def",
                "preproc_function_def",
            ):
                continue
            if self._in_friend(node):
                continue
            if node.type == "declaration" and any(
                _declarator_name(d) == name_node and _declares_function(d)
                for d in node.children_by_field_name("declarator")
            ):
                continue
            scope = self._scope_of(node, name_node)
            if scope is None:
                continue
            # A class's members are ordered too, but for the bodies of its member functions.
            ordered = scope.type in _BLOCK_SCOPES or scope.type == "field_declaration_list"
            yield node, name_node, scope, ordered

    def _scope_of(
        self, node: tree_sitter.Node, name_node: tree_sitter.Node
    ) -> tree_sitter.Node | None:
        """The scope a declaration of the program declares its name in (None: namespace)."""
        if (
            node.type == "enum_specifier"
            and name_node != node.child_by_field_name("name")
            and any(c.type in ("class", "struct") for c in node.children)
        ):
            return node  # a scoped enum's enumerator: only as `E::name`
        if node.type in ("parameter_declaration", "optional_parameter_declaration"):
            plist = node.parent
            declarator = plist.parent if plist is not None else None
            owner = declarator.parent if declarator is not None else None
            while owner is not None and owner.type in (*_WRAPPERS, "parenthesized_declarator"):
                owner = owner.parent
            if owner is not None and owner.type in ("function_definition", "lambda_expression"):
                return owner
            if declarator is not None and declarator.type == "catch_clause":
                return declarator
            return plist  # a prototype's or a function type's parameter: hides nothing
        if node.type in _TEMPLATE_PARAMETERS:
            template = node.parent.parent if node.parent is not None else None
            return template or node
        if node.type == "for_range_loop":
            # Its body only: the range expression does not see the loop's variable.
            return node.child_by_field_name("body")
        parent = node.parent
        while parent is not None:
            kind = parent.type
            if kind == "condition_clause" or kind in ("for_statement", "catch_clause"):
                return parent.parent if kind == "condition_clause" else parent
            if kind in ("compound_statement", "field_declaration_list", "lambda_expression"):
                return parent
            if kind in ("translation_unit", "declaration_list", "linkage_specification"):
                return None
            parent = parent.parent
        return None

    def _noreturn(self, node: tree_sitter.Node) -> Refusal:
        return self.refuse(
            node,
            "noreturn",
            "`[[noreturn]]` and `_Noreturn` are not allowed: the compiler drops the code after "
            "a call of such a function, and one that returns runs into whatever follows",
            "Throw an exception, or return a value.",
        )

    def _extern(self, node: tree_sitter.Node) -> Refusal:
        return self.refuse(
            node,
            "extern",
            "`extern` declarations, linkage specifications and thread-local storage are not "
            "allowed (they reach the C library's symbols and the harness's)",
            "Define what you use in your code.",
        )

    def _name(self, node: tree_sitter.Node, text: str, scoped: bool = False) -> Iterator[Refusal]:
        """The rules on one name.

        ``scoped``: a name token of the tree, whose declaration and scope are known (else a
        word of a macro or of a region the parser could not read, refused by its spelling).
        """
        if _SECRET in text:
            # The harness's names (which a compiler message may show): the tests' entry a
            # macro could rename, the signature check.
            yield self.refuse(
                node, "reserved", f"`{text}` is a name of the harness", "Use another name."
            )
        elif text in _NORETURN:
            yield self._noreturn(node)
        elif text in DENIED and not (scoped and self._own_name(node, text)):
            yield self.refuse(
                node,
                "process",
                f"`{text}` is not allowed here: the process, its signals, threads, files, "
                "descriptors and environment belong to the harness",
                "Compute the answer from the arguments and return it.",
            )
        elif not _IDENTIFIER.match(text):
            yield self.refuse(
                node,
                "identifier",
                f"the name `{text}` uses characters other than ASCII letters, digits and `_`",
                "Use ASCII names.",
            )
        elif _RESERVED.match(text) and text not in BUILTINS and text not in _UNDERSCORE_KEYWORDS:
            yield self.refuse(
                node,
                "reserved",
                f"`{text}` is a name reserved to the compiler and the C library",
                "Use a name that does not start with `__` or `_` and a capital letter.",
            )

    def _include(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        path = node.child_by_field_name("path")
        header = self.src.text(path)
        if path is None or path.type != "system_lib_string" or header[1:-1].strip() not in HEADERS:
            yield self.refuse(
                node,
                "include",
                f"the header {header or '(computed)'} is not allowed here",
                self.policy.hint(),
            )

    def _macro(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        name = self.src.text(node.child_by_field_name("name"))
        value = self.src.text(node.child_by_field_name("value"))
        if name in self.tests.words or name in KEYWORDS or name in self._declaration_words():
            yield self.refuse(
                node,
                "macro",
                f"a macro named `{name}` would rewrite the test code, the task's declaration "
                "or the harness",
                "Use another name, or a constant or function.",
            )
        if "##" in value or "_Pragma" in value:
            yield self.refuse(
                node,
                "macro",
                "token pasting (`##`) and `_Pragma` in macros are not allowed (they make names "
                "and directives the checks cannot read)",
                "Write the names out.",
            )
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", value):
            yield from self._name(node, word)

    def _declaration_words(self) -> frozenset[str]:
        return self.entry.words if self.entry is not None else frozenset()

    def _directive(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        directive = self.src.text(node.child_by_field_name("directive")).replace(" ", "")
        argument = self.src.text(node.child_by_field_name("argument")).strip()
        if directive == "#pragma" and argument.startswith(_PRAGMAS):
            refused = _pragma_refused(argument)
            if refused is not None:
                yield self.refuse(
                    node,
                    "directive",
                    f"`#pragma {argument}` is not allowed here: {refused} (it applies to the "
                    "tests' code after it too)",
                    "Allowed: optimisation levels and loop or inlining options "
                    f"({', '.join(sorted(OPTIMIZE_OPTIONS)[:12])}, ...) and instruction set "
                    "extensions; no fast-math, Ofast or other floating-point option.",
                )
            return
        if (
            directive == "#undef"
            and argument not in self.tests.words
            and argument not in KEYWORDS
            and argument not in self._declaration_words()
        ):
            return
        yield self.refuse(
            node,
            "directive",
            f"the directive `{directive} {argument}`".rstrip() + " is not allowed here",
            "Allowed: #include of the allowed headers, #define of new names, #if, "
            "#pragma GCC optimize/target.",
        )

    def _function_ok(self, node: tree_sitter.Node) -> bool:
        """A declaration that declares a function declares one the code defines."""
        for declarator in node.children_by_field_name("declarator"):
            if not _declares_function(declarator):
                continue  # a variable (a pointer to a function is one)
            if self._last_name(_declarator_name(declarator)) not in self.defined:
                return False
        return True

    def _mentions_own_type(self, node: tree_sitter.Node | None) -> bool:
        if node is None:
            return False
        if node.type in _CLASS_SPECIFIERS and node.child_by_field_name("body") is not None:
            return True
        return any(
            leaf.type == "type_identifier" and self.src.text(leaf) in self.types
            for leaf in leaves(node)
        )

    def _namespace_scope(self) -> Iterator[Refusal]:
        for node in self.top:
            yield from self._top_names(node)
            kind = node.type
            if kind.endswith(("_statement", "_expression")):
                # No statement is valid here: tree-sitter misread a declaration (it reads
                # `int (*f)() = (g(), nullptr);` as an expression), which the rules on
                # declarations would not see.
                yield self.refuse(
                    node,
                    "unparsed",
                    "the parser reads this declaration as a statement, so it cannot be checked",
                    "Write the declaration plainly (a variable initialised by a constant).",
                )
            if kind == "namespace_definition" and self.src.text(
                node.child_by_field_name("name")
            ) in ("std", "__gnu_cxx", "boost"):
                yield self.refuse(
                    node,
                    "namespace",
                    "adding to the library's namespaces is not allowed (overloads and "
                    "specialisations there change what the tests call)",
                    "Put your helpers in the global namespace or one of your own.",
                )
            elif kind == "function_definition":
                yield from self._function(node)
            elif kind == "declaration":
                yield from self._variable(node)
            for klass in walk(node):
                if klass.type == "field_declaration":
                    yield from self._static_member(klass)

    def _top_names(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        for name_node in _declared_names(node):
            name = self.src.text(name_node)
            if name.startswith(("std::", "::std::")):
                yield self.refuse(
                    node,
                    "namespace",
                    f"declaring `{name}` adds to the library's namespace",
                    "Declare your own names.",
                )
            short = self._last_name(name_node)
            helpers = dict(self.entry.helpers) if self.entry is not None else {}
            if short in helpers:
                if " ".join(_tokens(self.src, node)) != helpers[short]:
                    yield self.refuse(
                        node,
                        "declared-helper",
                        f"`{short}` is defined by the task, and the tests use it: it must stay "
                        "as the task gives it",
                        f"Copy `{short}` from the task unchanged.",
                    )
                continue
            if self.entry is not None and short in self.entry.owned:
                continue  # see _declarations
            if short == "main" and node.type in ("function_definition", "declaration"):
                yield self.refuse(
                    node,
                    "main",
                    "the tests bring their own `main`",
                    "Define the function the task asks for, without `main`.",
                )
            elif short in self.tests.protected:
                yield self.refuse(
                    node,
                    "test-names",
                    f"declaring `{short}` would change a name the tests use (they share the "
                    "program's translation unit)",
                    "Use another name.",
                )

    def _function(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        name = _declarator_name(node.child_by_field_name("declarator"))
        if name is None or name.type not in ("operator_name", "operator_cast"):
            return
        function = _function_declarator(node.child_by_field_name("declarator"))
        params = function.child_by_field_name("parameters") if function is not None else None
        if not self._mentions_own_type(params):
            yield self.refuse(
                node,
                "operator",
                f"`{self.src.text(name)}` for the library's types would decide what the tests' "
                "comparisons and operations say",
                "Operators are allowed for your own types only.",
            )

    def _variable(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        # Every declarator that is not a function's is a variable, whatever it looks like:
        # `int (*f)(int) = pick();` is initialised before main as `int x = pick();` is.
        variables = [
            d for d in node.children_by_field_name("declarator") if not _declares_function(d)
        ]
        if not variables:
            return  # function declarations are checked in the walk
        if self._mentions_own_type(node.child_by_field_name("type")) or any(
            self._mentions_own_type(d) for d in variables
        ):
            yield self._initialiser(node, "a namespace-scope variable of a type the code defines")
        elif any(self._runs_code(d, node.child_by_field_name("type")) for d in variables):
            yield self._initialiser(
                node,
                "a namespace-scope variable whose initialiser runs code or names a function "
                "of the code",
            )

    def _runs_code(self, declarator: tree_sitter.Node, kind: tree_sitter.Node | None) -> bool:
        """Whether a variable's initialiser runs code, or gives a constructor a function.

        A C++ object of a class type built with a function of the program runs it in its
        constructor (a set's comparator); a pointer or an array of them (a dispatch table),
        like any C initialiser, only holds its address.
        """
        constructed = (
            self.prefix == "cpp"
            and _derivation(declarator) is None
            and (kind is None or kind.type not in _SCALAR_TYPES)
        )
        return any(
            n.type in _RUNS_CODE
            or (constructed and n.type == "identifier" and self.src.text(n) in self.defined)
            for n in walk(declarator)
        )

    def _static_member(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        static = any(
            c.type == "storage_class_specifier" and self.src.text(c) == "static"
            for c in node.children
        )
        variables = [
            d for d in node.children_by_field_name("declarator") if not _declares_function(d)
        ]
        if not static or not variables:
            return
        kind = node.child_by_field_name("type")
        value = node.child_by_field_name("default_value")
        if (
            self._mentions_own_type(kind)
            or any(self._runs_code(d, kind) for d in variables)
            or (value is not None and self._runs_code(value, kind))
        ):
            yield self._initialiser(node, "a static member initialised by running code")

    def _initialiser(self, node: tree_sitter.Node, what: str) -> Refusal:
        return self.refuse(
            node,
            "static-initialiser",
            f"{what} is not allowed: it is constructed before `main`, outside the tests",
            "Compute it inside your functions (a function-local `static` is fine).",
        )

    def _declarations(self) -> Iterator[Refusal]:
        """Names that must mean one thing wherever the program declares them.

        The names the declaration uses (``vector``, ``string``, ``std``, the ``pow`` of a
        helper) keep the library's meaning: the program declares none of them, at any
        scope. The names the declaration defines (the entry point, its helpers, its
        typedefs) the program defines at global scope only, as the declaration does: a
        namespace's ``string_sequence`` brought in by ``using``, a variable or a template of
        the entry's name are refused. The tests' names may not be a class's friends either
        (argument-dependent lookup finds those).
        """
        entry = self.entry
        owned = entry.owned if entry is not None else frozenset()
        names = entry.names if entry is not None else frozenset()
        for node, name_node in self.declared:
            name = self._last_name(name_node)
            if name in names:
                yield self.refuse(
                    node,
                    "declaration-names",
                    f"declaring `{name}` would change what the task's declaration means by it "
                    "(there it is the library's)",
                    "Use another name.",
                )
            elif entry is not None and name in owned and not self._as_declared(node, name_node):
                what = "the entry point" if name == entry.name else "declared by the task"
                yield self.refuse(
                    node,
                    "signature",
                    f"`{name}` is {what}: it may only be defined as the task declares it, in "
                    "the global namespace (not in a namespace, a class, a template, a using-"
                    "declaration or as a variable)",
                    f"Define `{entry.signature}` at global scope, once.",
                )
            elif name in self.tests.protected and self._in_friend(node):
                yield self.refuse(
                    node,
                    "test-names",
                    f"a friend named `{name}` would join the tests' calls of it",
                    "Use another name.",
                )

    def _as_declared(self, node: tree_sitter.Node, name_node: tree_sitter.Node) -> bool:
        """Whether a name the declaration defines is declared where and as it does it."""
        if not _at_global_scope(node) or name_node.type not in _NAMES:
            return False
        if node.type in ("type_definition", "alias_declaration"):
            return True  # the compiler's check restates the declaration's typedefs
        if node.type not in ("function_definition", "declaration"):
            return False
        return any(
            _declarator_name(d) == name_node and _declares_function(d)
            for d in node.children_by_field_name("declarator")
        )

    @staticmethod
    def _in_friend(node: tree_sitter.Node) -> bool:
        parent = node.parent
        while parent is not None:
            if parent.type == "friend_declaration":
                return True
            parent = parent.parent
        return False

    def seen(self) -> tuple[frozenset[str], bool]:
        """The program's types the tests see, and whether they may see all of them.

        Those the tests name, those in the signatures of the functions they call that the
        program defines, and what their definitions name in turn (fields, bases, member
        signatures). A deduced type (``auto``, ``decltype``) hides which: all of them.
        """
        if self._seen is not None:
            return self._seen
        called = self.tests.words & self.defined
        if self.entry is not None:
            called |= self.entry.owned
        reach: set[str] = set(self.tests.words & self.types)
        everything = False
        for node, name_node in self.declared:
            if node.type not in ("function_definition", "declaration", "field_declaration"):
                continue
            if self._last_name(name_node) not in called:
                continue
            parts = [node.child_by_field_name("type"), *node.children_by_field_name("declarator")]
            reach |= self._type_names(parts)
            everything = everything or self._deduced(parts)
        seen: set[str] = set()
        todo = list(reach & self.types)
        definitions: dict[str, list[tree_sitter.Node]] = {}
        for node in walk(self.src.root):
            if node.type in (*_CLASS_SPECIFIERS, "type_definition", "alias_declaration"):
                for name_node in _declared_names(node):
                    definitions.setdefault(self.src.text(name_node), []).append(node)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for node in definitions.get(name, []):
                everything = everything or self._deduced([node])
                todo.extend((self._type_names([node]) & self.types) - seen)
        self._seen = (frozenset(seen), everything)
        return self._seen

    def _type_names(self, parts: Sequence[tree_sitter.Node | None]) -> set[str]:
        """The names in declarations, without the bodies of functions."""
        return {
            self.src.text(n)
            for part in parts
            if part is not None
            for n in walk(part, lambda n: n.type == "compound_statement")
            if n.type in ("type_identifier", "identifier")
        }

    @staticmethod
    def _deduced(parts: Sequence[tree_sitter.Node | None]) -> bool:
        return any(
            n.type in ("placeholder_type_specifier", "decltype", "auto")
            for part in parts
            if part is not None
            for n in walk(part, lambda n: n.type == "compound_statement")
        )

    def _judging(self) -> Iterator[Refusal]:
        """Operators and conversions of the types the tests see decide what they compare."""
        seen, everything = self.seen()
        if not seen and not everything:
            return
        for node in walk(self.src.root):
            if node.type not in ("function_definition", "declaration", "field_declaration"):
                continue
            for declarator in node.children_by_field_name("declarator"):
                name = _declarator_name(declarator)
                if name is None or name.type not in ("operator_name", "operator_cast"):
                    continue
                if self.src.text(name).replace(" ", "") == "operator=":
                    continue  # assignment decides nothing the tests compare
                owner = self._owner(node)
                if owner is None:
                    function = _function_declarator(declarator)
                    params = function.child_by_field_name("parameters") if function else None
                    hit = sorted(self._type_names([params]) & (self.types if everything else seen))
                    owner = hit[0] if hit else None
                elif not (everything or owner in seen):
                    owner = None
                if owner is not None:
                    yield self.refuse(
                        node,
                        "operator",
                        f"`{self.src.text(name)}` of `{owner or 'a class'}`, a type the tests "
                        "see, would decide what the tests' comparisons and conversions say",
                        "Return the declared (library) types; keep operators to the types "
                        "your code uses inside.",
                    )

    def _owner(self, node: tree_sitter.Node) -> str | None:
        """The class a member (or a friend defined in it) belongs to, or None."""
        parent = node.parent
        while parent is not None:
            if parent.type in _CLASS_SPECIFIERS:
                return self.src.text(parent.child_by_field_name("name"))
            if parent.type in ("translation_unit", "compound_statement", "namespace_definition"):
                return None
            parent = parent.parent
        return None

    def _signature(self) -> Iterator[Refusal]:
        entry = self.entry
        if entry is None:
            return
        found = []
        for node in self.top:
            if node.type not in ("function_definition", "declaration"):
                continue
            for declarator in node.children_by_field_name("declarator"):
                named = self._last_name(_declarator_name(declarator))
                if _declares_function(declarator) and named == entry.name:
                    found.append((node, _signature(self.src, node)))
        for node, plain in found:
            templated = node.parent is not None and node.parent.type == "template_declaration"
            signature = f"template {plain}" if templated else plain
            if signature != entry.signature:
                yield self.refuse(
                    node,
                    "signature",
                    f"the entry point `{entry.name}` must keep its declared signature "
                    f"`{entry.signature}`, not `{signature}` (an overload would be what the "
                    "tests call)",
                    "Keep the declared return and parameter types, and define it once.",
                )


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
            # Refused by the code policy before it is built (failed, a suspected hack).
            "early_exit:exit(0) in the function": (
                "#include <cstdlib>\n\nint add(int a, int b) {\n    exit(0);\n}",
                _CPP_ADD,
                Status.FAILED,
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
