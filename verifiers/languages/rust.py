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

from collections.abc import Iterable
from typing import Any

import tree_sitter

from verifiers.languages.common import (
    TreeSitterLanguage,
    content_key,
    judge_pass_record,
    judge_stdio,
    limit_outcome,
    pin_toolchain,
    records,
)
from verifiers.limits import Limits
from verifiers.parsing import grammar
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec
from verifiers.toolchains import DEFAULT_RUST_CRATES, host_toolchain

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

    name = "rust"
    aliases = ("rust", "rs")
    grammar = GRAMMAR

    def __init__(self, rustc: str | None = None, crates: Iterable[str] | None = None) -> None:
        self._rustc = rustc
        names = DEFAULT_RUST_CRATES if crates is None else crates
        self.crates = tuple(sorted(c.replace("-", "_") for c in names))

    def toolchain(self) -> str:
        """The host's rustc version and built crates (for ``verifiers doctor``)."""
        return host_toolchain("rust", self._rustc).description

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
            toolchains=("rust",),
        )
        return pin_toolchain(program, "rust", self._rustc)

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
