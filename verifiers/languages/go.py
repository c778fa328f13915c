"""Go: built once per program, run per test.

stdin/stdout programs are built with ``go build``. A program with test code
(HumanEval-X: ``func TestX(t *testing.T)`` using testify) becomes one
``_test.go`` file compiled with ``go test -c``; each ``TestX`` is one test, run as
``prog.test -test.run ^TestX$``. Assembling that file is this module's job:
the package clauses and import blocks of the code, the test set-up and the tests
are merged into one clause and one import block, imports nobody uses are
dropped and standard packages the code uses without importing them are added
(what ``goimports`` does, and what the HumanEval-X harness expects).

A generated ``TestMain`` writes the sandbox's nonce after the tests ran, so
``os.Exit(0)`` (in ``init`` or anywhere else) never passes. Builds use GOPATH
mode offline (``GO111MODULE=off``, Debian's packages under /usr/share/gocode),
``CGO_ENABLED=0``, and a read-only build cache warmed by
``verifiers toolchains build``.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.keys import content_key
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
from verifiers.parsing import grammar
from verifiers.program import (
    ImageRecipe,
    ProcessResult,
    Program,
    ProgramTest,
    Step,
    Toolchain,
    ToolchainSpec,
)
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec
from verifiers.toolchains import (
    HOST,
    cache_dir,
    install_dirs,
    make_readable,
    require,
    slug,
    tool_version,
)

GRAMMAR = "tree_sitter_go"
MEMORY_MARKERS = (b"runtime: out of memory", b"fatal error: out of memory")
_TEST_FUNC = re.compile(r"^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)
_TEST_MAIN = re.compile(r"^func\s+TestMain\s*\(", re.M)

#: Standard packages added when code uses them without importing them, by package name.
_STD = """bufio bytes container/heap container/list crypto/md5 crypto/sha1 crypto/sha256
encoding/binary encoding/hex encoding/json errors fmt hash io math math/big math/bits math/rand
os reflect regexp sort strconv strings sync time unicode unicode/utf8"""
STD_PACKAGES = {name.rsplit("/", 1)[-1]: name for name in _STD.split()}

# The nonce variable's name ends in a secret of this process, so that the program (in
# the same package) cannot name it; the file sorts first, so that the variable is
# initialised before any variable or init() of the program, and closes the descriptor.
_NAME_SECRET = secrets.token_hex(6)
_NONCE_FILE = "src/0_verifiers_main_test.go"
_NONCE_MAIN = """package main

import (
	"os"
	"strings"
	"testing"
)

var vfNonce_SECRET = vfTakeNonce_SECRET()

func vfTakeNonce_SECRET() string {
	offer := os.NewFile(4, "nonce")
	buf := make([]byte, 256)
	n, _ := offer.Read(buf)
	offer.Close()
	if n < 0 {
		n = 0
	}
	return strings.TrimSpace(string(buf[:n]))
}

// TestMain reports a pass with the sandbox's nonce only after the tests ran and passed.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		record := "{\\"event\\":\\"pass\\",\\"nonce\\":\\"" + vfNonce_SECRET + "\\"}\\n"
		os.NewFile(3, "channel").Write([]byte(record))
	}
	os.Exit(code)
}
""".replace("SECRET", _NAME_SECRET)


# --- the toolchain -------------------------------------------------------------------------

#: Build settings shared by the warm-up and by every sandboxed Go build: a cache entry is
#: only reused under the same settings.
GO_ENV = {
    "GO111MODULE": "off",
    "GOPATH": "/usr/share/gocode",
    "CGO_ENABLED": "0",
    "GOFLAGS": "-trimpath",
    "GOPROXY": "off",
    "GOTOOLCHAIN": "local",
}
_WARMUP = b"""package main

import (
\t"testing"

\t"github.com/stretchr/testify/assert"
)

func TestWarmup(t *testing.T) {
\tassert.Equal(t, 1, 1)
}
"""
_IMAGE_CACHE = "/opt/verifiers/go-build"


def go_cache_dir(go_version: str) -> Path:
    """The warmed build cache for one Go version."""
    return cache_dir() / "go-build" / slug(go_version)


def build_go_cache(go: str = "go") -> Path:
    """Warm a Go build cache with testify (and the standard library) for read-only use."""
    version = tool_version([go, "version"])
    target = go_cache_dir(version)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="verifiers-go-") as work:
        Path(work, "warmup_test.go").write_bytes(_WARMUP)
        env = {**os.environ, **GO_ENV, "GOCACHE": str(target), "HOME": work}
        done = subprocess.run(
            [go, "test", "-c", "-vet=off", "-o", os.path.join(work, "warmup.test"), "."],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(
            f"go could not build a testify program ({done.stderr.strip()[-2000:]}); install "
            "golang-go and golang-github-stretchr-testify-dev"
        )
    make_readable(target)  # the sandbox user only reads it
    return target


def _host(path: str | None) -> Toolchain:
    def resolve() -> Toolchain:
        go = require(path, "go", "apt-get install golang-go golang-github-stretchr-testify-dev")
        version = tool_version([go, "version"])
        cache = go_cache_dir(version)
        warmed = cache.is_dir()
        return Toolchain(
            "go",
            {"{go}": go, "{go_cache}": str(cache) if warmed else "/tmp/go-build"},
            f"host {version}",
            (*install_dirs(go), *((str(cache),) if warmed else ())),
            f"{version} at {go}; build cache "
            + ("warmed" if warmed else "not warmed (run: verifiers toolchains build)"),
        )

    return HOST.get("go", path, resolve)


def _setup() -> str:
    return f"go build cache: {build_go_cache()}"


GO = ToolchainSpec(
    name="go",
    placeholders=("{go}", "{go_cache}"),
    host=_host,
    image=ImageRecipe(
        family="go",
        packages={"golang-go": "2:1.19~1", "golang-github-stretchr-testify-dev": "1.8.1-1"},
        # The cache warmed under the settings of GO_ENV (entries are reused only under them).
        run=(
            " ".join(f"{k}={v}" for k, v in GO_ENV.items())
            + f" GOCACHE={_IMAGE_CACHE} HOME=$PWD go test -c -vet=off -o warmup.test .\n"
            f"chmod -R a+rX {_IMAGE_CACHE}"
        ),
        files={"warmup_test.go": _WARMUP},
        keep=(_IMAGE_CACHE,),
        labels={"{go}": "/usr/bin/go", "{go_cache}": _IMAGE_CACHE},
    ),
    setup=_setup,
)


def _parse(code: str) -> tuple[bytes, tree_sitter.Node]:
    data = code.encode("utf-8", errors="surrogatepass")
    return data, tree_sitter.Parser(grammar(GRAMMAR)).parse(data).root_node


def _text(node: tree_sitter.Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text else ""


def _imports_and_body(code: str) -> tuple[str | None, list[tuple[str, str]], str]:
    """A file's package name, its imports as (name or "", path), and the rest of its text."""
    data, root = _parse(code)
    package = None
    imports: list[tuple[str, str]] = []
    cut: list[tuple[int, int]] = []
    for child in root.named_children:
        if child.type == "package_clause":
            package = _text(child.named_children[0]) if child.named_children else None
            cut.append((child.start_byte, child.end_byte))
        elif child.type == "import_declaration":
            for spec in _descendants(child, "import_spec"):
                alias = spec.child_by_field_name("name")
                path = spec.child_by_field_name("path")
                imports.append((_text(alias), _text(path).strip('"`')))
            cut.append((child.start_byte, child.end_byte))
    for start, end in sorted(cut, reverse=True):
        data = data[:start] + data[end:]
    return package, imports, data.decode("utf-8", errors="surrogateescape")


def _descendants(node: tree_sitter.Node, kind: str) -> list[tree_sitter.Node]:
    out = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            out.append(current)
        stack.extend(reversed(current.named_children))
    return out


def _package_uses(body: str) -> tuple[set[str], set[str]]:
    """Names used as ``pkg.X`` qualifiers, and names the code declares itself."""
    _, root = _parse(body)
    used: set[str] = set()
    for node in _descendants(root, "selector_expression"):
        operand = node.child_by_field_name("operand")
        if operand is not None and operand.type == "identifier":
            used.add(_text(operand))
    for node in _descendants(root, "qualified_type"):
        package = node.child_by_field_name("package")
        if package is not None:
            used.add(_text(package))
    declared: set[str] = set()
    for kind in (
        "parameter_declaration",
        "var_spec",
        "const_spec",
        "short_var_declaration",
        "range_clause",
        "function_declaration",
        "type_spec",
    ):
        for node in _descendants(root, kind):
            for child in node.children:
                if child.type == "identifier":
                    declared.add(_text(child))
                elif child.type == "expression_list":
                    declared.update(
                        _text(c) for c in child.named_children if c.type == "identifier"
                    )
    return used, declared


def merge_sources(*parts: str) -> str:
    """One Go file from several: one package clause, one import block of what is used."""
    package = "main"
    imports: dict[tuple[str, str], None] = {}
    bodies = []
    for part in parts:
        found, specs, body = _imports_and_body(part)
        package = found or package
        imports.update(dict.fromkeys(specs))
        bodies.append(body.strip("\n"))
    body = "\n\n".join(b for b in bodies if b.strip())
    used, declared = _package_uses(body)
    kept = []
    names = set()
    for alias, path in imports:
        name = alias or path.rsplit("/", 1)[-1]
        if alias in ("_", ".") or name in used:
            kept.append((alias, path))
            names.add(name)
    for name in sorted(used - names - declared):
        if name in STD_PACKAGES:
            kept.append(("", STD_PACKAGES[name]))
    lines = "".join(f'\t{alias + " " if alias else ""}"{path}"\n' for alias, path in kept)
    block = f"import (\n{lines})\n\n" if kept else ""
    return f"package {package}\n\n{block}{body}\n"


def go_test_functions(test_code: str) -> list[str]:
    """The ``TestX(t *testing.T)`` functions of test code."""
    return _TEST_FUNC.findall(test_code)


class GoLanguage(TreeSitterLanguage):
    """Go with the sandbox's ``go`` (GOPATH mode, offline).

    Args:
        go: A host ``go`` command to pin (default: the runtime's ``go`` toolchain, which
            the local runtime finds on ``PATH`` and the Docker runtime in its image).
    """

    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = CASE_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "go"
    aliases = ("go", "golang")
    grammar = GRAMMAR
    toolchains = (GO,)

    def __init__(self, go: str | None = None) -> None:
        self._go = go

    def toolchain(self) -> str:
        """The host's go version and warmed cache (for ``verifiers doctor``)."""
        return GO.host(self._go).description

    def parse_tests(self, raw: Any) -> TestSpec:
        """stdin/stdout, or test code whose ``TestX`` functions become the tests."""
        spec = super().parse_tests(raw)
        if isinstance(spec, AssertScriptTests):
            spec = spec.model_copy(update={"test_names": go_test_functions(spec.test)})
        return spec

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """A ``go build`` or ``go test -c``, then one run per selected test."""
        env = {**GO_ENV, "GOCACHE": "{go_cache}"}
        tests = []
        step_limits = limits.step_limits()
        work_files: dict[str, bytes] = {}
        if isinstance(spec, StdioTests):
            work_files["src/main.go"] = code.encode("utf-8", errors="surrogateescape")
            argv: tuple[str, ...] = ("{go}", "build", "-o", "{work_dir}/prog", ".")
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                step = Step(argv=("{work_dir}/prog",), limits=step_limits, stdin=stdin)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            source = merge_sources(code, spec.test_setup or "", spec.test)
            work_files["src/main_test.go"] = source.encode("utf-8", errors="surrogateescape")
            own_main = bool(_TEST_MAIN.search(spec.test))
            if not own_main:
                work_files[_NONCE_FILE] = _NONCE_MAIN.encode()
            argv = ("{go}", "test", "-c", "-vet=off", "-o", "{work_dir}/prog", ".")
            for index in selected:
                name = spec.test_names[index] if spec.test_names else "^$"
                pattern = f"^{name}$" if spec.test_names else name
                run = (
                    "{work_dir}/prog",
                    "-test.run",
                    pattern,
                    "-test.v",
                    "-test.count=1",
                    "-test.paniconexit0",
                )
                step = Step(argv=run, limits=step_limits)
                meta = {"mode": "assert", "own_main": own_main}
                tests.append(ProgramTest(index=index, step=step, meta=meta))
        build = Step(
            argv=argv,
            limits=limits.step_limits(build=True),
            env={**env, "HOME": "{work_dir}"},
            cwd="{work_dir}/src",
        )
        sources = "\0".join(
            f"{k}\0{v.decode(errors='replace')}" for k, v in sorted(work_files.items())
        )
        # The toolchain's identity (its version, an image) joins the key in the pipeline.
        program = Program(
            files={},
            work_files=work_files,
            tests=tuple(tests),
            build=build,
            build_key=content_key("go", " ".join(argv), sources),
            artefacts=("prog",),
            toolchains=(GO,),
        )
        return pin_toolchain(program, GO, self._go)

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then panics (runtime error) and failed tests (wrong answer), then the nonce."""
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event, MEMORY_MARKERS)
        if limit is not None:
            return limit
        if test.meta["mode"] == "stdio":
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        output = proc.stdout + proc.stderr
        if b"\npanic: " in b"\n" + output or proc.exit_code == 2:
            return TestOutcome(Status.RUNTIME_ERROR, stderr_tail(proc) or _tail(proc.stdout))
        if b"--- FAIL" in proc.stdout:
            return TestOutcome(Status.FAILED, _tail(proc.stdout))
        if test.meta.get("own_main"):
            # The tests bring their own TestMain: no nonce, only the test binary's word.
            ran = b"--- PASS" in proc.stdout or b"testing: warning: no tests to run" in output
            if proc.exit_code == 0 and ran:
                return TestOutcome(Status.PASSED)
        return judge_pass_record(proc, by_event)


def _tail(data: bytes, limit: int = 2000) -> str:
    return data.decode(errors="replace").strip()[-limit:]


# --- the case table ------------------------------------------------------------------------

_GO_SETUP = 'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n'
_GO_ADD = {
    "test": "func TestAdd(t *testing.T) {\n    assert.Equal(t, 3, Add(1, 2))\n}\n"
    "func TestAddZero(t *testing.T) {\n    assert.Equal(t, 2, Add(2, 0))\n}\n",
    "test_setup": _GO_SETUP,
}
_GO_MAIN = 'package main\n\nimport "fmt"\n\nfunc main() {\n    var a, b int\n    fmt.Scan(&a, &b)\n'


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "go",
        {
            "ok:stdio sum": (_GO_MAIN + "    fmt.Println(a + b)\n}", SUM_TESTS, Status.PASSED),
            "ok:assert add": (
                "func Add(a, b int) int {\n    return a + b\n}",
                _GO_ADD,
                Status.PASSED,
            ),
            "wrong_answer:stdio difference": (
                _GO_MAIN + "    fmt.Println(a - b)\n}",
                SUM_TESTS,
                Status.FAILED,
            ),
            "wrong_answer:testify fails": (
                "func Add(a, b int) int {\n    return a * b\n}",
                _GO_ADD,
                Status.FAILED,
            ),
            "no_code:prose": ("Use fmt.Scan.", SUM_TESTS, Status.NO_CODE),
            "syntax_error:unbalanced": (
                "package main\n\nfunc main( {\n}",
                SUM_TESTS,
                Status.SYNTAX_ERROR,
            ),
            "compile_error:undefined": (
                'package main\n\nimport "fmt"\n\nfunc main() {\n    fmt.Println(x)\n}',
                SUM_TESTS,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:index out of range": (
                "package main\n\nfunc main() {\n    var s []int\n    println(s[3])\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "timeout:busy loop": (
                "package main\n\nfunc main() {\n    for {\n    }\n}",
                ONE_TEST,
                Status.TIMEOUT,
            ),
            "memory_limit:growing slice": (
                "package main\n\nfunc main() {\n    var keep [][]byte\n    for {\n"
                "        keep = append(keep, make([]byte, 1<<20))\n"
                "        keep[len(keep)-1][0] = 1\n    }\n}",
                ONE_TEST,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:stdout": (
                'package main\n\nimport (\n    "fmt"\n    "strings"\n)\n\nfunc main() {\n'
                '    s := strings.Repeat("x", 10000)\n    for {\n        fmt.Println(s)\n    }\n}',
                ONE_TEST,
                Status.OUTPUT_LIMIT,
            ),
            "early_exit:os.Exit(0) in init": (
                'import "os"\n\nfunc init() {\n    os.Exit(0)\n}\n\nfunc Add(a, b int) int {\n'
                "    return 0\n}",
                _GO_ADD,
                Status.RUNTIME_ERROR,
            ),
            "early_exit:os.Exit(0) in the function": (
                'import "os"\n\nfunc Add(a, b int) int {\n    os.Exit(0)\n    return 0\n}',
                _GO_ADD,
                Status.RUNTIME_ERROR,
            ),
            "kill_self:SIGKILL": (
                'package main\n\nimport (\n    "os"\n    "syscall"\n)\n\n'
                "func main() {\n    syscall.Kill(os.Getpid(), syscall.SIGKILL)\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "kill_supervisor:signals PID 1 and goes on": (
                _GO_MAIN.replace('import "fmt"', 'import (\n    "fmt"\n    "syscall"\n)')
                + "    syscall.Kill(1, syscall.SIGKILL)\n    syscall.Kill(1, syscall.SIGSTOP)\n"
                "    fmt.Println(a + b)\n}",
                SUM_TESTS,
                Status.PASSED,
            ),
            "fork_bomb:start processes until it fails": (
                'package main\n\nimport "os/exec"\n\nfunc main() {\n    for {\n'
                '        if err := exec.Command("sleep", "100").Start(); err != nil {\n'
                "            panic(err)\n        }\n    }\n}",
                ONE_TEST,
                Status.RUNTIME_ERROR,
            ),
        },
    )
