"""Rust: compiled once per program with ``rustc -O`` (edition 2021), then run per test.

stdin/stdout programs are ordinary binaries. A program with test code (a
``#[cfg(test)] mod tests`` with ``#[test]`` functions, as in HumanEval-X) is
compiled with ``--cfg test`` into a binary whose ``main`` (generated here) runs one
named test per process: an assertion panic is a wrong answer, any other panic a
runtime error, and a test passes only when ``main`` returns and echoes the
sandbox's nonce, so ``std::process::exit(0)`` never passes.

Crates built by ``verifiers toolchains build`` (``rand``, ``regex``, ``md5`` by
default) are linked with ``--extern``, offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.errors import RuntimeUnavailableError
from verifiers.keys import content_key
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_pass_record,
    judge_stdio,
    limit_outcome,
    pin_toolchain,
    records,
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
from verifiers.toolchains import HOST, cache_dir, make_readable, slug, tool_version, which

GRAMMAR = "tree_sitter_rust"
FLAGS = ("--edition", "2021", "-O", "-C", "strip=symbols", "-A", "warnings")
MEMORY_MARKERS = (b"memory allocation of", b"out of memory", b"failed to allocate")

_HARNESS = r"""
#[allow(dead_code)]
mod __vf_harness {
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;

    pub trait Outcome {
        fn failure(self) -> Option<String>;
    }
    impl Outcome for () {
        fn failure(self) -> Option<String> {
            None
        }
    }
    impl<E: std::fmt::Debug> Outcome for Result<(), E> {
        fn failure(self) -> Option<String> {
            self.err().map(|e| format!("the test returned Err({:?})", e))
        }
    }

    fn json(text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 2);
        for c in text.chars().take(4000) {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out
    }

    fn record(line: String) {
        let mut channel = unsafe { std::fs::File::from_raw_fd(3) };
        let _ = channel.write_all(line.as_bytes());
        std::mem::forget(channel);
    }

    pub fn run(tests: &[(&str, bool, fn() -> Option<String>)]) {
        // The nonce is read, and its descriptor closed, before any test (any code of the
        // program) runs: the program cannot read it to forge a pass record.
        let mut nonce = String::new();
        {
            let mut offer = unsafe { std::fs::File::from_raw_fd(4) };
            let _ = offer.read_to_string(&mut nonce);
        }
        let name = std::env::args().nth(1).unwrap_or_default();
        if tests.is_empty() {
            // Test code without a #[test] function: compiling is all there is to check.
            return pass(&nonce);
        }
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let message = if let Some(s) = payload.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                String::from("panic")
            };
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            record(format!(
                "{{\"event\":\"panic\",\"message\":\"{}\",\"location\":\"{}\"}}\n",
                json(&message),
                json(&location)
            ));
            eprintln!("thread panicked at {}:\n{}", location, message);
        }));
        let Some(&(_, should_panic, test)) = tests.iter().find(|t| t.0 == name) else {
            eprintln!("no test named {:?}", name);
            std::process::exit(3);
        };
        match (std::panic::catch_unwind(test), should_panic) {
            (Ok(None), false) | (Err(_), true) => {}
            (Ok(Some(failure)), false) => {
                record(format!("{{\"event\":\"fail\",\"message\":\"{}\"}}\n", json(&failure)));
                std::process::exit(1);
            }
            (Ok(_), true) => {
                let message = "the test should have panicked";
                record(format!("{{\"event\":\"fail\",\"message\":\"{}\"}}\n", message));
                std::process::exit(1);
            }
            (Err(_), false) => std::process::exit(101),
        }
        pass(&nonce);
    }

    fn pass(nonce: &str) {
        record(format!("{{\"event\":\"pass\",\"nonce\":\"{}\"}}\n", json(nonce.trim())));
    }
}
"""


# --- the toolchain -------------------------------------------------------------------------

#: Crates every Rust program may use. rand 0.7 because the tests of HumanEval-X call its
#: two-argument ``gen_range``. More crates: ``VERIFIERS_RUST_CRATES="itertools=0.13,..."``
#: when running ``verifiers toolchains build``, and ``RustLanguage(crates=...)``.
DEFAULT_RUST_CRATES = {"rand": "0.7", "regex": "1", "md5": "0.7"}
CRATES_ENV = "VERIFIERS_RUST_CRATES"
#: Debian bookworm packages of the Docker image (rustc-web is bookworm's current rustc).
_RUSTC_WEB = "1.96.0+dfsg1-1~deb12u2"
_IMAGE_DEPS = "/opt/verifiers/rust/deps"


def rust_sysroot(rustc: str = "rustc") -> Path:
    """The toolchain directory of ``rustc`` (its real binary is ``bin/rustc`` there)."""
    done = subprocess.run(
        [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=True
    )
    return Path(done.stdout.strip())


def rust_crates_dir(rustc_version: str) -> Path:
    """Directory of the crates built for one rustc version."""
    return cache_dir() / "rust-crates" / slug(rustc_version)


def rust_crates_manifest(rustc_version: str) -> dict[str, Any] | None:
    """The built crates for this rustc: ``{"deps": dir, "externs": {name: rlib}}``, or None."""
    path = rust_crates_dir(rustc_version) / "manifest.json"
    try:
        manifest: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not all(Path(p).is_file() for p in manifest.get("externs", {}).values()):
        return None
    return manifest


def cargo_manifest(crates: dict[str, str]) -> str:
    """The Cargo.toml of the crate build (a library depending on every crate)."""
    deps = "\n".join(f'{name} = "{req}"' for name, req in sorted(crates.items()))
    return (
        '[package]\nname = "verifiers-crates"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{deps}\n'
    )


def _extra_crates() -> dict[str, str]:
    out = {}
    for item in filter(None, (p.strip() for p in os.environ.get(CRATES_ENV, "").split(","))):
        name, sep, version = item.partition("=")
        if not sep or not name or not version:
            raise ValueError(f"{CRATES_ENV}: {item!r} is not NAME=VERSION")
        out[name.strip()] = version.strip()
    return out


def build_rust_crates(crates: dict[str, str] | None = None, cargo: str = "cargo") -> Path:
    """Build crates (name -> version requirement) for the host's rustc, with the network.

    Returns:
        The path of the manifest the Rust toolchain reads.
    """
    crates = {**DEFAULT_RUST_CRATES, **_extra_crates(), **(crates or {})}
    rustc = shutil.which("rustc") or "rustc"
    real_rustc = str(rust_sysroot(rustc) / "bin" / "rustc")
    version = tool_version([real_rustc, "--version"])
    target = rust_crates_dir(version)
    project = target / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "Cargo.toml").write_text(cargo_manifest(crates))
    (project / "lib.rs").write_text("")
    env = {**os.environ, "RUSTC": real_rustc, "CARGO_TARGET_DIR": str(target / "target")}
    done = subprocess.run(
        [cargo, "build", "--release", "--message-format=json", "--quiet"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cargo build of {sorted(crates)} failed:\n{done.stderr[-3000:]}")
    externs: dict[str, str] = {}
    for line in done.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("reason") != "compiler-artifact":
            continue
        name = message["target"]["name"].replace("-", "_")
        if name.replace("_", "-") in crates or name in crates:
            for filename in message["filenames"]:
                if filename.endswith(".rlib"):
                    externs[name] = filename
    missing = {c.replace("-", "_") for c in crates} - set(externs)
    if missing:
        raise RuntimeError(f"cargo built no rlib for {sorted(missing)}")
    deps = target / "target" / "release" / "deps"
    manifest = {"rustc": version, "crates": crates, "deps": str(deps), "externs": externs}
    path = target / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2))
    make_readable(target)
    return path


def _host(path: str | None) -> Toolchain:
    def resolve() -> Toolchain:
        rustc = which(path, "rustc")
        if not rustc:
            raise RuntimeUnavailableError(
                "rustc not found: install Rust (rustup or apt-get install rustc)"
            )
        try:
            sysroot = rust_sysroot(rustc)
        except (OSError, subprocess.SubprocessError) as err:
            raise RuntimeUnavailableError(f"{rustc} --print sysroot failed: {err}") from err
        real = str(sysroot / "bin" / "rustc")
        version = tool_version([real, "--version"])
        manifest = rust_crates_manifest(version)
        paths = [str(sysroot)]
        deps = "/nonexistent-rust-crates"
        crates = "none built (run: verifiers toolchains build)"
        if manifest:
            deps = str(manifest["deps"])
            paths.append(str(Path(deps).parent.parent.parent))
            crates = ", ".join(sorted(manifest["externs"]))
        externs = json.dumps(manifest and manifest["externs"], sort_keys=True)
        return Toolchain(
            "rust",
            {"{rustc}": real, "{rust_deps}": deps},
            f"host {version}; crates {externs}",
            tuple(paths),
            f"{version} at {real}; crates: {crates}",
        )

    return HOST.get("rust", path, resolve)


def _setup() -> str:
    return f"rust crates: {build_rust_crates()}"


_CRATES_LOCK = resources.files("verifiers.languages").joinpath("_rust_crates.lock")

RUST = ToolchainSpec(
    name="rust",
    placeholders=("{rustc}", "{rust_deps}"),
    host=_host,
    image=ImageRecipe(
        family="rust",
        packages={
            "rustc-web": _RUSTC_WEB,
            "libstd-rust-web-dev": _RUSTC_WEB,
            "gcc": "4:12.2.0-3",
            "libc6-dev": "",
            "ca-certificates": "",
        },
        # The crates at the versions of _rust_crates.lock, built from crates.io; cargo
        # is installed for that and removed again (programs are compiled with rustc alone).
        run=(
            "apt-get update -qq\n"
            f"apt-get install -y -qq --no-install-recommends cargo-web={_RUSTC_WEB}\n"
            'if [ -n "${VERIFIERS_BUILD_CA:-}" ]; then\n'
            "  export CARGO_HTTP_CAINFO=$VERIFIERS_BUILD_CA\n"
            "fi\n"
            "CARGO_HOME=/tmp/cargo-home cargo build --release --locked --quiet\n"
            f"mkdir -p {os.path.dirname(_IMAGE_DEPS)}\n"
            f"cp -r target/release/deps {_IMAGE_DEPS}\n"
            f"chmod -R a+rX {os.path.dirname(_IMAGE_DEPS)}\n"
            "rm -rf target /tmp/cargo-home\n"
            "apt-get purge -y -qq cargo-web\n"
            "apt-get clean\n"
            "rm -rf /var/lib/apt/lists/*"
        ),
        files={
            "Cargo.toml": cargo_manifest(DEFAULT_RUST_CRATES).encode(),
            "Cargo.lock": _CRATES_LOCK.read_bytes(),
            "lib.rs": b"",
        },
        keep=(os.path.dirname(_IMAGE_DEPS),),
        labels={"{rustc}": "/usr/bin/rustc", "{rust_deps}": _IMAGE_DEPS},
    ),
    setup=_setup,
)


def _parse(code: str) -> tuple[bytes, tree_sitter.Node]:
    data = code.encode("utf-8", errors="surrogatepass")
    return data, tree_sitter.Parser(grammar(GRAMMAR)).parse(data).root_node


def _attributes(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The attribute items right before an item."""
    out = []
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in ("attribute_item", "line_comment"):
        if sibling.type == "attribute_item":
            out.append(sibling)
        sibling = sibling.prev_named_sibling
    return out


def _text(data: bytes, node: tree_sitter.Node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _walk(node: tree_sitter.Node, path: tuple[str, ...], found: list[Any]) -> None:
    for child in node.named_children:
        if child.type == "mod_item":
            name = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            if name is not None and body is not None:
                found.append(("mod", child, path))
                _walk(body, (*path, name.text.decode() if name.text else ""), found)
        elif child.type == "function_item":
            attrs = _attributes(child)
            texts = [a.text.decode() if a.text else "" for a in attrs]
            if any(t.replace(" ", "") == "#[test]" for t in texts):
                found.append(("test", child, path, attrs))


def rust_test_functions(test_code: str) -> list[tuple[str, bool]]:
    """``(path, should_panic)`` of every ``#[test]`` function, such as ``tests::test_add``."""
    data, root = _parse(test_code)
    found: list[Any] = []
    _walk(root, (), found)
    out = []
    for entry in found:
        if entry[0] != "test":
            continue
        _, node, path, attrs = entry
        name = node.child_by_field_name("name")
        should_panic = any("should_panic" in _text(data, a) for a in attrs)
        out.append(("::".join((*path, _text(data, name))), should_panic))
    return out


def _edit(data: bytes, edits: list[tuple[int, int, str]]) -> str:
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text.encode() + data[end:]
    return data.decode("utf-8", errors="surrogateescape")


def _without_main(code: str) -> str:
    """The program with its own top-level ``fn main`` renamed (the harness brings one)."""
    data, root = _parse(code)
    edits = []
    for child in root.named_children:
        name = child.child_by_field_name("name") if child.type == "function_item" else None
        if name is not None and _text(data, name) == "main":
            edits.append((name.start_byte, name.end_byte, "__vf_program_main"))
            edits.append((child.start_byte, child.start_byte, "#[allow(dead_code)]\n"))
    return _edit(data, edits)


def _callable_tests(test_code: str) -> str:
    """Test code whose ``#[test]`` functions (and their modules) the harness can call."""
    data, root = _parse(test_code)
    found: list[Any] = []
    _walk(root, (), found)
    edits: list[tuple[int, int, str]] = []
    for entry in found:
        node = entry[1]
        has_visibility = any(c.type == "visibility_modifier" for c in node.children)
        if not has_visibility:
            edits.append((node.start_byte, node.start_byte, "pub(crate) "))
        if entry[0] == "test":
            for attr in entry[3]:
                text = _text(data, attr).replace(" ", "")
                if text == "#[test]" or text.startswith("#[should_panic"):
                    edits.append((attr.start_byte, attr.end_byte, "#[allow(dead_code)]"))
    _qualify_macros(root, edits)
    # Insertions at the same offset as an attribute replacement must come after it.
    return _edit(data, edits)


#: Standard macros the tests call by their bare names. A ``macro_rules!`` of the program
#: with one of these names would shadow the standard one for the tests that follow it
#: (``macro_rules! assert_eq { ($($t:tt)*) => {} }`` made every assertion pass), so the
#: tests call them by their full path instead.
STD_MACROS = frozenset(
    [
        "assert",
        "assert_eq",
        "assert_ne",
        "debug_assert",
        "debug_assert_eq",
        "debug_assert_ne",
        "panic",
        "unreachable",
        "unimplemented",
        "todo",
        "vec",
        "format",
        "print",
        "println",
        "eprint",
        "eprintln",
        "write",
        "writeln",
        "matches",
        "concat",
        "stringify",
    ]
)


def _qualify_macros(node: tree_sitter.Node, edits: list[tuple[int, int, str]]) -> None:
    """Edits that turn ``assert_eq!`` and the like in the tests into ``::std::assert_eq!``."""
    for child in node.children:
        if child.type == "identifier" and child.text and child.text.decode() in STD_MACROS:
            after, before = child.next_sibling, child.prev_sibling
            if after is not None and after.type == "!" and (before is None or before.type != "::"):
                edits.append((child.start_byte, child.end_byte, f"::std::{child.text.decode()}"))
        elif child.child_count:
            _qualify_macros(child, edits)


class RustLanguage(TreeSitterLanguage):
    """Rust with the sandbox's ``rustc`` (edition 2021, ``-O``).

    Args:
        rustc: A host ``rustc`` to pin (default: the runtime's ``rust`` toolchain: the
            local runtime finds ``rustc`` on ``PATH`` and resolves a rustup proxy to the
            real binary, the Docker runtime uses its image's).
        crates: Crates passed with ``--extern`` (found in the toolchain's crate
            directory; one that is not there is an error only for a program that uses it).
    """

    #: The kinds of outcome its case table covers (see :mod:`verifiers.cases`).
    case_kinds = CASE_KINDS

    def cases(self) -> list[Case]:
        """Real programs, one or more per kind of outcome, and the verdict each must get."""
        return _cases()

    name = "rust"
    aliases = ("rust", "rs")
    grammar = GRAMMAR
    toolchains = (RUST,)

    def __init__(self, rustc: str | None = None, crates: Iterable[str] | None = None) -> None:
        self._rustc = rustc
        names = DEFAULT_RUST_CRATES if crates is None else crates
        self.crates = tuple(sorted(c.replace("-", "_") for c in names))

    def toolchain(self) -> str:
        """The host's rustc version and built crates (for ``verifiers doctor``)."""
        return RUST.host(self._rustc).description

    def parse_tests(self, raw: Any) -> TestSpec:
        """stdin/stdout, or test code whose ``#[test]`` functions become the tests."""
        spec = super().parse_tests(raw)
        if isinstance(spec, AssertScriptTests):
            # Without any #[test] function (commented out, say) the program is one
            # test that passes when it compiles, as `cargo test` would have it.
            names = [name for name, _ in rust_test_functions(spec.test)]
            spec = spec.model_copy(update={"test_names": names})
        return spec

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One ``rustc`` build, then one run per selected test."""
        # `--extern NAME` without a path: rustc finds the crate's one rlib in the -L
        # directory, so the language needs no path of any runtime's crate build.
        link = ["-L", "{rust_deps}"]
        for crate in self.crates:
            link += ["--extern", crate]
        tests = []
        step_limits = limits.step_limits()
        if isinstance(spec, StdioTests):
            source = code
            cfg: tuple[str, ...] = ()
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                step = Step(argv=("{work_dir}/prog",), limits=step_limits, stdin=stdin)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            functions = rust_test_functions(spec.test)
            table = ",\n        ".join(
                f'("{path}", {"true" if panics else "false"}, '
                f"|| __vf_harness::Outcome::failure({path}()))"
                for path, panics in functions
            )
            source = (
                f"{_without_main(code)}\n\n{_callable_tests(spec.test)}\n{_HARNESS}\n"
                f"fn main() {{\n    __vf_harness::run(&[\n        {table}\n    ]);\n}}\n"
            )
            cfg = ("--cfg", "test")
            for index in selected:
                name = functions[index][0] if functions else ""
                step = Step(argv=("{work_dir}/prog", name), limits=step_limits)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "assert"}))
        # Trailing whitespace changes nothing the compiler sees: keep it out of the key.
        source = "\n".join(line.rstrip() for line in source.strip().splitlines()) + "\n"
        flags = (*FLAGS, *cfg)
        build = Step(
            argv=("{rustc}", *flags, "-o", "{work_dir}/prog", "{program_dir}/main.rs", *link),
            limits=limits.step_limits(build=True),
            env={"PATH": "/usr/bin:/bin"},
        )
        # The toolchain's identity (rustc, crates, an image) joins the key in the pipeline.
        program = Program(
            files={"main.rs": source.encode("utf-8", errors="surrogateescape")},
            tests=tuple(tests),
            build=build,
            build_key=content_key("rust", " ".join(flags), " ".join(link), source),
            artefacts=("prog",),
            toolchains=(RUST,),
        )
        return pin_toolchain(program, RUST, self._rustc)

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then panics (assertion: wrong answer; others: runtime error), then the answer."""
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event, MEMORY_MARKERS)
        if limit is not None:
            return limit
        if test.meta["mode"] == "stdio":
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        panic = by_event.get("panic")
        if panic is not None and "pass" not in by_event:  # a #[should_panic] test passes
            message = f"panicked at {panic.get('location', '?')}: {panic.get('message', '')}"
            status = (
                Status.FAILED
                if str(panic.get("message", "")).startswith("assertion")
                else Status.RUNTIME_ERROR
            )
            return TestOutcome(status, message)
        return judge_pass_record(proc, by_event)


# --- the case table ------------------------------------------------------------------------

_RS_READ = (
    "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n"
    "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
    "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n"
)
_RS_ADD = {
    "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_add() {\n"
    "        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn test_zero() {\n"
    "        assert_eq!(add(2, 0), 2);\n    }\n}\n"
}


def _cases() -> list[Case]:
    """One program per kind of outcome (see :mod:`verifiers.cases`)."""
    return table(
        "rust",
        {
            "ok:stdio sum": (
                _RS_READ + '    println!("{}", v[0] + v[1]);\n}',
                SUM_TESTS,
                Status.PASSED,
            ),
            "ok:assert add": (
                "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}",
                _RS_ADD,
                Status.PASSED,
            ),
            "wrong_answer:stdio difference": (
                _RS_READ + '    println!("{}", v[0] - v[1]);\n}',
                SUM_TESTS,
                Status.FAILED,
            ),
            "wrong_answer:assert_eq fails": (
                "fn add(a: i32, b: i32) -> i32 {\n    a * b\n}",
                _RS_ADD,
                Status.FAILED,
            ),
            "no_code:prose": ("Sum the numbers.", SUM_TESTS, Status.NO_CODE),
            "syntax_error:unbalanced": ("fn main( {\n}", SUM_TESTS, Status.SYNTAX_ERROR),
            "compile_error:type mismatch": (
                'fn main() {\n    let x: i32 = "a";\n}',
                SUM_TESTS,
                Status.COMPILE_ERROR,
            ),
            "runtime_error:index out of bounds": (
                'fn main() {\n    let v: Vec<i32> = Vec::new();\n    println!("{}", v[3]);\n}',
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "runtime_error:panic in the tested function": (
                "fn add(a: i32, b: i32) -> i32 {\n    let v: Vec<i32> = vec![];\n"
                "    v[(a + b) as usize]\n}",
                _RS_ADD,
                Status.RUNTIME_ERROR,
            ),
            "timeout:busy loop": ("fn main() {\n    loop {}\n}", ONE_TEST, Status.TIMEOUT),
            "memory_limit:growing vector": (
                "fn main() {\n    let mut keep: Vec<Vec<u8>> = Vec::new();\n"
                "    loop {\n        keep.push(vec![1u8; 1 << 20]);\n    }\n}",
                ONE_TEST,
                Status.MEMORY_LIMIT,
            ),
            "output_flood:stdout": (
                'use std::io::Write;\n\nfn main() {\n    let s = "x".repeat(10000);\n'
                "    let mut out = std::io::stdout();\n    loop {\n"
                "        if out.write_all(s.as_bytes()).is_err() {\n            break;\n        }\n"
                "    }\n}",
                ONE_TEST,
                Status.OUTPUT_LIMIT,
            ),
            "early_exit:process::exit(0) in the function": (
                "fn add(a: i32, b: i32) -> i32 {\n    std::process::exit(0)\n}",
                _RS_ADD,
                Status.RUNTIME_ERROR,
            ),
            "kill_self:abort": (
                "fn main() {\n    std::process::abort();\n}",
                SUM_TESTS,
                Status.RUNTIME_ERROR,
            ),
            "kill_supervisor:signals PID 1 and goes on": (
                _RS_READ
                + '    let _ = std::process::Command::new("kill").args(["-9", "1"]).status();\n'
                '    println!("{}", v[0] + v[1]);\n}',
                SUM_TESTS,
                Status.PASSED,
            ),
            "fork_bomb:spawn until it fails": (
                'fn main() {\n    loop {\n        std::process::Command::new("sleep").arg("100")'
                ".spawn().unwrap();\n    }\n}",
                ONE_TEST,
                Status.RUNTIME_ERROR,
            ),
        },
    )
