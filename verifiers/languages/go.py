"""Go: built once per program, run per test.

stdin/stdout programs are built with ``go build``. A program with test code
(HumanEval-X: ``func TestX(t *testing.T)`` using testify) becomes one
``_test.go`` file compiled with ``go test -c``; each ``TestX`` is one test, run as
``prog.test TestX``. Assembling that file is this module's job: the package
clauses and import blocks of the code, the test set-up and the tests are merged
into one clause and one import block, imports nobody uses are dropped and standard
packages the code uses without importing them are added (what ``goimports`` does,
and what the HumanEval-X harness expects).

The tests share the binary with the program, so two things keep a pass honest. A
generated ``TestMain`` takes the sandbox's nonce and the test's name before any
code of the program runs, runs exactly that test through ``testing.RunTests`` and
writes the pass record only when the test ran to its end without failing: early
exits, rewritten ``os.Args`` or flags, skips never pass (tests that bring their own
``TestMain`` are refused). And before the program is built, its code is checked
against :class:`GoCodePolicy` (an allow-list of packages, no ``init``, no
directives, no shadowed predeclared names, the declared signature kept); a
refused program is failed with the rule in ``hack_suspected``.

Builds use GOPATH mode offline (``GO111MODULE=off``, Debian's packages under
/usr/share/gocode), ``CGO_ENABLED=0``, and a read-only build cache warmed by
``verifiers toolchains build``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.errors import SpecError
from verifiers.keys import build_key
from verifiers.languages.code_policy import (
    AllowList,
    Refusal,
    Source,
    first,
    leaves,
    normalized,
    unparsed,
    walk,
)
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_first,
    judge_pass_record,
    pin_toolchain,
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

#: Standard packages added when code uses them without importing them, by package name.
_STD = """bufio bytes container/heap container/list crypto/md5 crypto/sha1 crypto/sha256
encoding/binary encoding/hex encoding/json errors fmt hash io math math/big math/bits math/rand
os reflect regexp sort strconv strings sync time unicode unicode/utf8"""
STD_PACKAGES = {name.rsplit("/", 1)[-1]: name for name in _STD.split()}

# The generated TestMain. Its names end in a secret of this process, so that the program
# (in the same package) cannot name them; its file sorts first, so that its first variable
# is initialised before any variable or init function of the program: the nonce (whose
# descriptor it closes) and the name of the test to run are taken before any code of the
# program runs. The test then runs through testing.RunTests with a match function of our
# own, wrapped so that the pass record is written only when that test ran to its end
# without failing: arguments or flags the program rewrote, skips, Goexit and early exits
# never pass. The file uses no predeclared function or constant (len, make, true, nil...):
# the program's package-level declarations could replace those for it too.
_NAME_SECRET = secrets.token_hex(6)
_HARNESS_FILE = "src/0_verifiers_main_test.go"
_HARNESS = """package main

import (
	"os"
	"strings"
	"testing"
)

var vfRun_SECRET = vfTake_SECRET()

type vfState_SECRET struct {
	nonce, test, program string
	runs                 int
}

func vfTake_SECRET() *vfState_SECRET {
	offer := os.NewFile(4, "nonce")
	var buf [256]byte
	n, _ := offer.Read(buf[:])
	offer.Close()
	if n < 0 {
		n = 0
	}
	state := &vfState_SECRET{nonce: strings.TrimSpace(string(buf[:n]))}
	for i, arg := range os.Args {
		if i == 0 {
			state.program = arg
		} else if i == 1 {
			state.test = arg
		}
	}
	return state
}

func vfRecord_SECRET(line string) {
	os.NewFile(3, "channel").Write([]byte(line + "\\n"))
}

func vfPass_SECRET(state *vfState_SECRET) {
	vfRecord_SECRET(`{"event":"pass","nonce":"` + state.nonce + `"}`)
	os.Exit(0)
}

func TestMain(m *testing.M) {
	state := vfRun_SECRET
	state.runs++
	if state.runs != 1 {
		os.Exit(3)
	}
	// m.Run parses the testing flags (ours, not whatever os.Args holds now) and sets up
	// the package; it runs no test, and what it prints about that is dropped.
	os.Args = []string{state.program, "-test.run=^$", "-test.v", "-test.count=1"}
	var quiet *os.File
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = quiet, quiet
	m.Run()
	os.Stdout, os.Stderr = stdout, stderr
	RUN
}
""".replace("SECRET", _NAME_SECRET)
#: Test code without a TestX function: compiling is all there is to check.
_COMPILES = "vfPass_SECRET(state)".replace("SECRET", _NAME_SECRET)
_RUN_ONE = """var test func(*testing.T)
	switch state.test {CASES
	default:
		os.Stderr.WriteString("no test named " + state.test + "\\n")
		os.Exit(3)
	}
	var completed bool
	wrapped := func(t *testing.T) {
		test(t)
		completed = !t.Failed()
	}
	match := func(_, name string) (bool, error) {
		var none error
		return name == state.test, none
	}
	ok := testing.RunTests(match, []testing.InternalTest{{Name: state.test, F: wrapped}})
	if ok && completed {
		vfPass_SECRET(state)
	}
	if ok {
		vfRecord_SECRET(`{"event":"fail","message":"the test did not run to its end (skipped)"}`)
	}
	os.Exit(1)""".replace("SECRET", _NAME_SECRET)


def go_harness(tests: list[str]) -> str:
    """The generated TestMain file for test code with these ``TestX`` functions."""
    if not tests:
        return _HARNESS.replace("RUN", _COMPILES)
    cases = "".join(f"\n\tcase {json.dumps(name)}:\n\t\ttest = {name}" for name in tests)
    return _HARNESS.replace("RUN", _RUN_ONE.replace("CASES", cases))


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
    return _uses_in(_parse(body)[1])


def _uses_in(root: tree_sitter.Node) -> tuple[set[str], set[str]]:
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
    """The ``TestX(t *testing.T)`` functions of test code (``TestMain`` is not one)."""
    src = Source(GRAMMAR, test_code)
    out = []
    for node in src.root.named_children:
        name = src.text(node.child_by_field_name("name"))
        params = node.child_by_field_name("parameters")
        if (
            node.type == "function_declaration"
            and name.startswith("Test")
            and name != "TestMain"
            and params is not None
            and normalized(src, params).replace(" ", "").endswith("*testing.T)")
        ):
            out.append(name)
    return out


def _defines_test_main(code: str) -> bool:
    src = Source(GRAMMAR, code)
    return any(
        n.type == "function_declaration" and src.text(n.child_by_field_name("name")) == "TestMain"
        for n in src.root.named_children
    )


# --- the code policy -----------------------------------------------------------------------
#
# Tests and candidate share one binary, so the candidate's code is checked before it is
# built (function-style tasks only: a stdin/stdout program is judged on its output). The
# packages and members it may use are an allow-list; init functions, directives,
# goroutines and shadowed predeclared names are refused by name. See docs/security.md.

#: Standard packages a function may use, whole (``strings``) or member by member
#: (``fmt.Sprintf``): computation, formatting and hashing, nothing that reaches the process
#: (no os, syscall, unsafe, runtime, reflect but DeepEqual, flag, testing; no fmt.Scan,
#: which reads the process's stdin).
GO_ALLOWED = """bufio bytes container/heap container/list container/ring crypto/md5 crypto/sha1
crypto/sha256 crypto/sha512 encoding/base64 encoding/binary encoding/hex encoding/json errors
hash hash/crc32 hash/fnv io math math/big math/bits math/cmplx math/rand regexp sort strconv
strings sync sync/atomic time unicode unicode/utf16 unicode/utf8 reflect.DeepEqual fmt.Append
fmt.Appendf fmt.Appendln fmt.Errorf fmt.Fprint fmt.Fprintf fmt.Fprintln fmt.Fscan fmt.Fscanf
fmt.Fscanln fmt.Print fmt.Printf fmt.Println fmt.Sprint fmt.Sprintf fmt.Sprintln fmt.Sscan
fmt.Sscanf fmt.Sscanln fmt.Formatter fmt.GoStringer fmt.ScanState fmt.Scanner fmt.State
fmt.Stringer"""
_GO_ENTRIES = [tuple(e.rsplit(".", 1)) if "." in e else (e,) for e in GO_ALLOWED.split()]
_GO_PACKAGES = frozenset(e[0] for e in _GO_ENTRIES)
#: The universe block: a package-level declaration of one of these names changes it for
#: the tests too (``const true = false``, ``func len(...)``) where they use it.
_UNIVERSE = """any bool byte comparable complex64 complex128 error float32 float64 int int8 int16
int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr true false iota nil append cap
clear close complex copy delete imag len make max min new panic print println real recover"""
PREDECLARED = frozenset(_UNIVERSE.split())
#: Methods that standard helpers the tests may call consult to decide a comparison
#: (``errors.Is`` and ``errors.As``, hence testify's ``ErrorIs`` and ``ErrorAs``).
JUDGING_METHODS = frozenset({"Is", "As"})
#: Members of allowed packages that run the program's code on a goroutine of its own.
_GOROUTINE_MEMBERS = frozenset({("time", "AfterFunc")})
#: Compiler directives: ``//go:linkname``, ``//go:embed`` and the like, ``//line file:n``.
_DIRECTIVE = re.compile(r"//go:|(//|/\*)line \S*:\d")
_SPECS = ("var_spec", "const_spec", "type_spec", "type_alias")
#: Tokens that name something (``true``, ``nil`` and ``iota`` are tokens of their own).
_USED = ("identifier", "type_identifier", "true", "false", "nil", "iota")


class GoCodePolicy:
    """The allow-list a Go function-style program is checked against before it is built."""

    def __init__(self) -> None:
        self.allowed = AllowList(_GO_ENTRIES)

    def check(
        self,
        code: str,
        test_files: Sequence[str] = (),
        declaration: str | None = None,
        prompt: str | None = None,
    ) -> Refusal | None:
        """The first rule the code breaks, or None.

        Args:
            code: The candidate's code (never the trusted tests or declaration).
            test_files: The test code (its set-up and its tests): the packages it imports,
                which the assembled file imports for the program too, and the names it
                declares, which the program may not use.
            declaration: The declared entry point (``func F(..) T {``), if known.
            prompt: The task's prompt, if known: the functions it defines besides the
                entry point (HumanEval-X Go/32's ``Poly``) are the task's, which the tests
                call, and the program keeps them token for token.
        """
        tests = _test_files(tuple(test_files))
        return _GoCheck(self, Source(GRAMMAR, code), tests, declaration, prompt).run()

    def hint(self) -> str:
        """What a program may use instead."""
        whole = sorted(e[0] for e in _GO_ENTRIES if len(e) == 1)
        members = sorted(".".join(e) for e in _GO_ENTRIES if len(e) == 2)
        return f"Allowed packages: {', '.join(whole)}; and {', '.join(members)}."


class _TestFiles:
    """What the policy needs of the test code: its imports, its names, the names it uses."""

    def __init__(self, files: Sequence[str]) -> None:
        self.imports: dict[str, str] = {}
        self.names: set[str] = set()
        self.used: set[str] = set()
        for text in files:
            src = Source(GRAMMAR, text)
            self.used |= {src.text(n) for n in leaves(src.root) if n.type in _USED}
            for decl in src.root.named_children:
                self.names |= {src.text(n) for n in _declared_names(decl)}
                for spec in _descendants(decl, "import_spec"):
                    path = src.text(spec.child_by_field_name("path")).strip('"`')
                    alias = src.text(spec.child_by_field_name("name"))
                    self.imports[alias or path.rsplit("/", 1)[-1]] = path


@functools.lru_cache(maxsize=256)
def _test_files(files: tuple[str, ...]) -> _TestFiles:
    """Cached: the samples of one problem share their tests."""
    return _TestFiles(files)


def _declared_names(decl: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The name nodes a package-level declaration declares."""
    if decl.type == "function_declaration":
        name = decl.child_by_field_name("name")
        return [name] if name is not None else []
    if decl.type not in ("var_declaration", "const_declaration", "type_declaration"):
        return []
    return [
        name
        for spec in walk(decl, lambda n: n.type in _SPECS)
        if spec.type in _SPECS
        for name in spec.children_by_field_name("name")
    ]


class _GoCheck:
    """One program's check: its imports, the walk over its tree, its names, its signature."""

    def __init__(
        self,
        policy: GoCodePolicy,
        src: Source,
        tests: _TestFiles,
        declaration: str | None,
        prompt: str | None = None,
    ) -> None:
        self.policy = policy
        self.src = src
        self.test_imports = tests.imports
        # The generated TestMain belongs to the tests too.
        self.test_names = tests.names | {"TestMain"}
        self.entry, self.declared_signature, signature_words = _declared_entry(declaration)
        self.helpers, helper_words = _prompt_helpers(prompt, self.entry)
        # A predeclared name the program redeclares changes the tests only where they use
        # it (the generated TestMain uses none), and the declared signature or the task's
        # helpers where they name it (`type int = ...` would be what the spelled check's
        # `int` means); elsewhere it is the program's own (`func max` is an honest helper
        # under Go 1.19).
        self.shadowable = PREDECLARED & (tests.used | signature_words | helper_words)
        self.imports: dict[str, str] = {}
        _, self.declared = _uses_in(src.root)

    def run(self) -> Refusal | None:
        return first(
            [
                unparsed(self.src, "go/unparsed"),
                self._imports(),
                self._walk(),
                self._names(),
                self._signature(),
                self._helpers(),
            ]
        )

    def _helpers(self) -> Iterator[Refusal]:
        """The task's helpers (from its prompt), where the program defines them: unchanged."""
        for node in self.src.root.named_children:
            if node.type != "function_declaration":
                continue
            name = self._name(node)
            if name in self.helpers and normalized(self.src, node) != self.helpers[name]:
                yield self.src.refuse(
                    node,
                    "go/declared-helper",
                    f"`{name}` is the task's own function (its prompt defines it, and the "
                    "tests call it): it must stay as the prompt gives it",
                    f"Keep `{name}` exactly as the prompt defines it.",
                )

    def _imports(self) -> Iterator[Refusal]:
        for node in walk(
            self.src.root,
            lambda n: n.type not in ("source_file", "import_declaration", "import_spec_list"),
        ):
            if node.type != "import_spec":
                continue
            path = self.src.text(node.child_by_field_name("path")).strip('"`')
            alias = node.child_by_field_name("name")
            name = self.src.text(alias) if alias is not None else path.rsplit("/", 1)[-1]
            self.imports[name] = path
            if path not in _GO_PACKAGES:
                yield self.src.refuse(
                    node,
                    "go/import",
                    f'the package "{path}" is not allowed here',
                    self.policy.hint(),
                )
            elif alias is not None and alias.type in ("dot", "blank_identifier"):
                yield self.src.refuse(
                    node,
                    "go/import",
                    f"{'dot' if alias.type == 'dot' else 'blank'} imports are not allowed",
                    "Import the package by its name.",
                )
            elif name in self.shadowable or self.test_imports.get(name, path) != path:
                yield self._shadowing(node, f"importing a package as `{name}`")

    def _walk(self) -> Iterator[Refusal]:
        for node in walk(self.src.root):
            kind = node.type
            if kind == "comment" and _DIRECTIVE.match(self.src.text(node)):
                yield self.src.refuse(
                    node,
                    "go/directive",
                    "compiler directives (`//go:linkname`, `//go:embed`, `//line`) are not allowed",
                    "Remove the directive.",
                )
            elif kind == "function_declaration" and self._name(node) == "init":
                yield self.src.refuse(
                    node,
                    "go/init",
                    "`func init()` is not allowed: it runs before the tests, outside them",
                    "Compute what you need inside your functions.",
                )
            elif kind == "go_statement":
                yield self._goroutine(node)
            elif kind == "method_declaration" and self._name(node) in JUDGING_METHODS:
                yield self.src.refuse(
                    node,
                    "go/judging-method",
                    f"a method `{self._name(node)}` would decide what `errors.Is` and "
                    "`errors.As` (testify's ErrorIs, ErrorAs) say about the program's values",
                    "Give the method another name.",
                )
            elif kind in ("selector_expression", "qualified_type"):
                yield from self._selector(node)
            elif kind in ("identifier", "type_identifier", "field_identifier") and (
                self.src.text(node) in self.test_names or _NAME_SECRET in self.src.text(node)
            ):
                # The generated TestMain's names end in a secret: the program may not call
                # them (its pass function), should a compiler message have shown one.
                yield self.src.refuse(
                    node,
                    "go/test-names",
                    f"`{self.src.text(node)}` belongs to the test code (the same package): the "
                    "program may not use what the tests hold",
                    "Compute the answer from the arguments alone; rename a local of that name.",
                )

    def _selector(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        """``pkg.Member``: the package and the member must be allowed."""
        selector = node.type == "selector_expression"
        operand = node.child_by_field_name("operand" if selector else "package")
        if operand is None or operand.type not in ("identifier", "package_identifier"):
            return
        qualifier = self.src.text(operand)
        member = self.src.text(node.child_by_field_name("field" if selector else "name"))
        if qualifier in self.imports:
            path = self.imports[qualifier]
        elif qualifier in self.test_imports:
            path = self.test_imports[qualifier]  # the assembled file imports it
        elif qualifier in STD_PACKAGES and qualifier not in self.declared:
            path = STD_PACKAGES[qualifier]  # imported for it when the file is assembled
        else:
            return  # a value of the program's own (or a compile error)
        if path not in _GO_PACKAGES:
            reason = f'the package "{path}" (`{qualifier}.{member}`) is not allowed here'
            yield self.src.refuse(node, "go/import", reason, self.policy.hint())
        elif (path, member) in _GOROUTINE_MEMBERS:
            yield self._goroutine(node)
        elif not self.policy.allowed.allows((path, member)):
            reason = f"`{qualifier}.{member}` is not allowed here"
            yield self.src.refuse(node, "go/package-member", reason, self.policy.hint())

    def _goroutine(self, node: tree_sitter.Node) -> Refusal:
        # Go is memory-safe only without data races: racing goroutines can tear an
        # interface or slice value and read or write any memory of the process, the
        # harness's included. Without a goroutine of its own, the program cannot race.
        return self.src.refuse(
            node,
            "go/goroutine",
            "goroutines are not allowed here: a data race can corrupt the memory the "
            "tests' harness shares with the program",
            "Compute sequentially.",
        )

    def _names(self) -> Iterator[Refusal]:
        """Package-level declarations: no predeclared names, the entry point only as a function."""
        for decl in self.src.root.named_children:
            for name_node in _declared_names(decl):
                name = self.src.text(name_node)
                if name in self.shadowable:
                    yield self._shadowing(decl, f"declaring `{name}` at package level")
                elif name == self.entry and decl.type != "function_declaration":
                    yield self.src.refuse(
                        decl,
                        "go/signature",
                        f"the entry point `{name}` must be a function",
                        f"Define `{self.declared_signature}`.",
                    )

    def _shadowing(self, node: tree_sitter.Node, what: str) -> Refusal:
        return self.src.refuse(
            node,
            "go/shadowing",
            f"{what} would change a predeclared or imported name for the tests, which share "
            "the program's package",
            "Use another name.",
        )

    def _name(self, node: tree_sitter.Node) -> str:
        return self.src.text(node.child_by_field_name("name"))

    def _signature(self) -> Iterator[Refusal]:
        declared = self.declared_signature
        for node in self.src.root.named_children:
            if (
                self.entry
                and node.type == "function_declaration"
                and self._name(node) == self.entry
            ):
                found = _go_signature(self.src, node)
                if found != declared:
                    yield self.src.refuse(
                        node,
                        "go/signature",
                        f"the entry point must keep its declared signature `{declared}`, not "
                        f"`{found}`",
                        "Keep the declared parameter and result types.",
                    )


@functools.lru_cache(maxsize=256)
def _prompt_helpers(prompt: str | None, entry: str) -> tuple[dict[str, str], frozenset[str]]:
    """The functions a task's prompt defines besides its entry point, and their words.

    The entry point is the prompt's last function, left open. Returns the helpers' tokens
    by name, and the names their code uses.
    """
    if not prompt:
        return {}, frozenset()
    src = Source(GRAMMAR, prompt.rstrip() + "\n}\n")
    functions = [n for n in src.root.named_children if n.type == "function_declaration"]
    helpers = {}
    words: set[str] = set()
    for fn in functions[:-1]:
        name = src.text(fn.child_by_field_name("name"))
        if name and name != entry:
            helpers[name] = normalized(src, fn)
            words |= {src.text(n) for n in leaves(fn) if n.type in _USED}
    return helpers, frozenset(words)


@functools.lru_cache(maxsize=256)
def _declared_entry(declaration: str | None) -> tuple[str, str, frozenset[str]]:
    """The declared entry point's name and signature, and the names its types use.

    Empty without a declaration.
    """
    if not declaration:
        return "", "", frozenset()
    decl = Source(GRAMMAR, declaration.rstrip() + "\n}\n")
    functions = [n for n in decl.root.named_children if n.type == "function_declaration"]
    if not functions:
        return "", "", frozenset()
    fn = functions[-1]
    parts = [fn.child_by_field_name(f) for f in ("type_parameters", "parameters", "result")]
    names = {
        n.id
        for p in parts
        if p
        for d in walk(p)
        if d.type.endswith("parameter_declaration")
        for n in d.children_by_field_name("name")
    }
    words = {decl.text(n) for p in parts if p for n in leaves(p) if n.type in _USED}
    words -= {decl.text(n) for p in parts if p for n in leaves(p) if n.id in names}
    return decl.text(fn.child_by_field_name("name")), _go_signature(decl, fn), frozenset(words)


def _go_signature(src: Source, fn: tree_sitter.Node) -> str:
    """A function's signature without parameter names, comments or layout."""

    def types(params: tree_sitter.Node | None) -> list[str]:
        if params is None:
            return []
        if params.type != "parameter_list":
            return [normalized(src, params)]
        out = []
        for param in params.named_children:
            if param.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            kind = normalized(src, param.child_by_field_name("type"))
            if param.type == "variadic_parameter_declaration":
                kind = "..." + kind
            out += [kind] * max(1, len(param.children_by_field_name("name")))
        return out

    generics = normalized(src, fn.child_by_field_name("type_parameters"))
    params = ", ".join(types(fn.child_by_field_name("parameters")))
    results = types(fn.child_by_field_name("result"))
    shown = results[0] if len(results) == 1 else f"({', '.join(results)})"
    name = src.text(fn.child_by_field_name("name"))
    return f"func {name}{generics}({params}) {shown}".rstrip()


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
        self.code_policy = GoCodePolicy()

    def toolchain(self) -> str:
        """The host's go version and warmed cache (for ``verifiers doctor``)."""
        return GO.host(self._go).description

    def parse_tests(self, raw: Any) -> TestSpec:
        """stdin/stdout, or test code whose ``TestX`` functions become the tests.

        Raises:
            SpecError: The test code defines its own ``TestMain``: the verdict comes from
                the generated one, which runs one test and proves that it ran.
        """
        spec = super().parse_tests(raw)
        if isinstance(spec, AssertScriptTests):
            for field, text in (("test", spec.test), ("test_setup", spec.test_setup or "")):
                if _defines_test_main(text):
                    raise SpecError(
                        f"tests.{field}",
                        "Go tests with their own TestMain are not supported: a generated "
                        "TestMain runs each test and writes the pass record the program "
                        "cannot forge; move the set-up into the test functions",
                    )
            spec = spec.model_copy(update={"test_names": go_test_functions(spec.test)})
        return spec

    def check_code(self, code: str, spec: TestSpec) -> TestOutcome | None:
        """Function-style tasks: the code policy's refusal (failed, a suspected hack), or None.

        Their tests share the binary with the program, so the program may not use what
        would reach the harness (see :class:`GoCodePolicy`). stdin/stdout programs are
        judged on their output alone and are not restricted.
        """
        if not isinstance(spec, AssertScriptTests):
            return None
        tests = (spec.test_setup or "", spec.test)
        refusal = self.code_policy.check(code, tests, spec.declaration, spec.prompt)
        return refusal.outcome() if refusal is not None else None

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """A ``go build`` or ``go test -c``, then one run per selected test."""
        env = {**GO_ENV, "GOCACHE": "{go_cache}"}
        tests = []
        step_limits = limits.step_limits(runtime_reserve=True)
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
            work_files[_HARNESS_FILE] = go_harness(spec.test_names).encode()
            argv = ("{go}", "test", "-c", "-vet=off", "-o", "{work_dir}/prog", ".")
            for index in selected:
                name = spec.test_names[index] if spec.test_names else ""
                step = Step(argv=("{work_dir}/prog", name), limits=step_limits)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "assert"}))
        build = Step(
            argv=argv,
            limits=limits.step_limits(build=True),
            env={**env, "HOME": "{work_dir}"},
            cwd="{work_dir}/src",
        )
        # The toolchain's identity (its version, an image) joins the key in the pipeline.
        program = Program(
            files={},
            work_files=work_files,
            tests=tuple(tests),
            build=build,
            build_key=build_key("go", argv, work_files),
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
        by_event, decided = judge_first(test, spec, proc, limits, compare, MEMORY_MARKERS)
        if decided is not None:
            return decided
        output = proc.stdout + proc.stderr
        if b"\npanic: " in b"\n" + output or proc.exit_code == 2:
            return TestOutcome(Status.RUNTIME_ERROR, stderr_tail(proc) or _tail(proc.stdout))
        if b"--- FAIL" in proc.stdout:
            return TestOutcome(Status.FAILED, _tail(proc.stdout))
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
            # Refused by the code policy before they are built (failed, a suspected hack).
            "early_exit:os.Exit(0) in init": (
                'import "os"\n\nfunc init() {\n    os.Exit(0)\n}\n\nfunc Add(a, b int) int {\n'
                "    return 0\n}",
                _GO_ADD,
                Status.FAILED,
            ),
            "early_exit:os.Exit(0) in the function": (
                'import "os"\n\nfunc Add(a, b int) int {\n    os.Exit(0)\n    return 0\n}',
                _GO_ADD,
                Status.FAILED,
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
