"""Rust: compiled once per program with ``rustc -O`` (edition 2021), then run per test.

stdin/stdout programs are ordinary binaries. A program with test code (a
``#[cfg(test)] mod tests`` with ``#[test]`` functions, as in HumanEval-X) is
compiled with ``--cfg test`` into a binary whose ``main`` (generated here) runs one
named test per process: an assertion panic is a wrong answer, any other panic a
runtime error, and a test passes only when ``main`` returns and echoes the
sandbox's nonce, so ``std::process::exit(0)`` never passes.

The tests share the binary with the program, and code that runs before ``main``
(a constructor in ``.init_array``) could read the nonce first. So before the program
is built its code is checked against :class:`RustCodePolicy`: no ``unsafe`` or
``extern``, an allow-list of std modules, crates, macros and attributes, no items
shadowing the names the tests use, no hand-written comparison or operator impls for
the types the tests see, the declared signature kept. A refused program is failed
with the rule in ``hack_suspected``. The harness's module name is secret and its
``run`` runs once per process.

Crates built by ``verifiers toolchains build`` (``rand``, ``regex``, ``md5`` by
default) are linked with ``--extern``, offline.
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import tree_sitter

from verifiers.cases import CASE_KINDS, ONE_TEST, SUM_TESTS, Case, table
from verifiers.errors import RuntimeUnavailableError
from verifiers.keys import build_key
from verifiers.languages.code_policy import (
    COMMENTS,
    AllowList,
    Refusal,
    Source,
    first,
    leaves,
    unparsed,
    walk,
)
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_build,
    judge_first,
    judge_pass_record,
    pin_toolchain,
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

# The harness module's name ends in a secret of this process: the program (in the same
# crate) cannot name it, so it cannot call the harness's functions. Its macros are called
# by their full paths: a program's macro_rules! defined before it would shadow them.
_HARNESS_MODULE = f"__vf_harness_{secrets.token_hex(6)}"
#: The module (and file) of the compiler's check of the declared signature.
SIGNATURE_MODULE = f"__vf_signature_{secrets.token_hex(6)}"
#: Where a rustc error is: its first ``--> file:line:column`` (warnings are off).
_ERROR_AT = re.compile(r"^error(?:\[\w+\])?: .*\n\s*--> (.+?):\d+:\d+", re.M)
_HARNESS = r"""
#[allow(dead_code)]
mod __vf_harness {
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};

    static STARTED: AtomicBool = AtomicBool::new(false);

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
            self.err().map(|e| ::std::format!("the test returned Err({:?})", e))
        }
    }

    fn json(text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 2);
        for c in text.chars().take(4000) {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&::std::format!("\\u{:04x}", c as u32)),
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
        // Once per process: a program that calls main again gets no second run.
        if STARTED.swap(true, Ordering::SeqCst) {
            std::process::abort();
        }
        // The nonce is read, and its descriptor closed, before any test (any code of the
        // program) runs: the program cannot read it to forge a pass record. (Code that
        // runs before main could, so the code policy refuses everything that can.)
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
                .map(|l| ::std::format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            record(::std::format!(
                "{{\"event\":\"panic\",\"message\":\"{}\",\"location\":\"{}\"}}\n",
                json(&message),
                json(&location)
            ));
            ::std::eprintln!("thread panicked at {}:\n{}", location, message);
        }));
        let Some(&(_, should_panic, test)) = tests.iter().find(|t| t.0 == name) else {
            ::std::eprintln!("no test named {:?}", name);
            std::process::exit(3);
        };
        match (std::panic::catch_unwind(test), should_panic) {
            (Ok(None), false) | (Err(_), true) => {}
            (Ok(Some(failure)), false) => {
                let message = json(&failure);
                record(::std::format!("{{\"event\":\"fail\",\"message\":\"{}\"}}\n", message));
                std::process::exit(1);
            }
            (Ok(_), true) => {
                let message = "the test should have panicked";
                record(::std::format!("{{\"event\":\"fail\",\"message\":\"{}\"}}\n", message));
                std::process::exit(1);
            }
            (Err(_), false) => std::process::exit(101),
        }
        pass(&nonce);
    }

    fn pass(nonce: &str) {
        record(::std::format!("{{\"event\":\"pass\",\"nonce\":\"{}\"}}\n", json(nonce.trim())));
    }
}
""".replace("__vf_harness", _HARNESS_MODULE)


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


# --- the code policy -----------------------------------------------------------------------
#
# Tests and candidate share one binary, so the candidate's code is checked before it is
# built (function-style tasks only: a stdin/stdout program is judged on its output). What
# it may name is an allow-list (modules of std, crates, macros, attributes); the few
# constructs that are escape hatches are refused by name. See docs/security.md.


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ROOTS = ("std", "core", "alloc")
#: Modules of the standard library a function may use (and everything below them).
STD_MODULES = _words(
    "any array ascii borrow boxed cell char clone cmp collections convert default error f32 f64 "
    "fmt hash hint i8 i16 i32 i64 i128 io isize iter marker mem num ops option prelude primitive "
    "rc result slice str string sync time u8 u16 u32 u64 u128 usize vec"
)
PRIMITIVES = _words("bool char str f32 f64 i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize")
#: The names the 2021 prelude gives every module, the tests' module included.
PRELUDE = _words(
    "Copy Send Sized Sync Unpin Drop Fn FnMut FnOnce drop Box ToOwned Clone PartialEq PartialOrd "
    "Eq Ord AsRef AsMut Into From Default Iterator Extend IntoIterator DoubleEndedIterator "
    "ExactSizeIterator Option Some None Result Ok Err String ToString Vec TryFrom TryInto "
    "FromIterator"
)
#: Macros a function may call: the standard ones that only compute, format or panic.
MACROS = STD_MACROS | {"format_args", "dbg", "cfg", "line", "column"}
#: Traits a program may derive (the derived code compares field by field).
DERIVES = _words("Debug Clone Copy PartialEq Eq PartialOrd Ord Hash Default")
_LINTS = frozenset({"allow", "warn", "deny", "forbid", "expect"})
#: Attributes that change nothing but diagnostics, layout or documentation.
_PLAIN_ATTRIBUTES = _words(
    "inline cold must_use track_caller non_exhaustive deprecated repr doc cfg rustfmt::skip"
)
#: Keywords a macro argument may hold: those of expressions (items go outside the call).
_TOKEN_KEYWORDS = _words(
    "as async await break continue crate dyn else false for if in let loop match move mut ref "
    "return self Self super true while"
)
#: Traits whose methods decide comparisons and arithmetic in the tests' own code: a value the
#: tests see may only derive them (`#[derive(PartialEq)]`), never implement them by hand.
JUDGING_TRAITS = _words(
    "PartialEq Eq PartialOrd Ord Add Sub Mul Div Rem Neg Not BitAnd BitOr BitXor Shl Shr "
    "AddAssign SubAssign MulAssign DivAssign RemAssign BitAndAssign BitOrAssign BitXorAssign "
    "ShlAssign ShrAssign"
)
#: Iterator methods a hand-written iterator the tests see may define (the others, such as
#: ``eq`` or ``cmp``, have provided versions that compare what ``next`` returns).
_ITERATOR_METHODS = frozenset({"next", "next_back", "size_hint"})
_TYPE_ITEMS = ("struct_item", "enum_item", "union_item")
_ITEMS = (
    *_TYPE_ITEMS,
    "type_item",
    "trait_item",
    "function_item",
    "const_item",
    "static_item",
    "mod_item",
)
_PATHS = ("scoped_identifier", "scoped_type_identifier")
_OPAQUE = ("abstract_type", "dynamic_type")
#: The names a format string captures (``{name}``, ``{name:?}``).
_CAPTURED = re.compile(r"\{(?:r#)?([A-Za-z_][A-Za-z0-9_]*)\s*[:}]")
_PRUNE = frozenset(
    {"attribute_item", "inner_attribute_item", "macro_invocation", "use_declaration"}
)
_IDENTS = ("identifier", "type_identifier", "primitive_type")
_PATH_TOKENS = ("identifier", "crate", "self", "super", "primitive_type")
_ITEM_WORDS = {
    "struct_item": "struct",
    "enum_item": "enum",
    "union_item": "union",
    "type_item": "type",
    "trait_item": "trait",
    "function_item": "fn",
    "const_item": "const",
    "static_item": "static",
    "mod_item": "mod",
}


def _name(text: str) -> str:
    """An identifier without its raw prefix (``r#std`` is ``std``)."""
    return text[2:] if text.startswith("r#") else text


def _hint_list(names: Iterable[str], wrap: str = "{}") -> str:
    return ", ".join(wrap.format(n) for n in sorted(names))


class RustCodePolicy:
    """The allow-list a Rust function-style program is checked against before it is built.

    Args:
        crates: Crates the program may use (all of their paths).
    """

    def __init__(self, crates: Iterable[str]) -> None:
        self.crates = frozenset(crates)
        self.paths = AllowList([(root, m) for root in _ROOTS for m in STD_MODULES])

    def check(self, code: str, test: str, declaration: str | None = None) -> Refusal | None:
        """The first rule the code breaks, or None.

        Args:
            code: The candidate's code (never the trusted tests or declaration).
            test: The test code (what it names decides which types the tests see).
            declaration: The declared entry point (``use`` header and signature), if known.
        """
        return _RustCheck(self, Source(GRAMMAR, code), test, declaration).run()

    def path_problem(self, segments: Sequence[str]) -> str | None:
        """Why a path may not be used, or None (paths of the program's own items are fine)."""
        if not segments or segments[0] not in _ROOTS:
            return None
        shown = "::".join(segments)
        if len(segments) == 1:
            return f"`{shown}` names the standard library's root; name the modules you use"
        if self.paths.allows(segments):
            return None
        return f"`{shown}`: the module `{segments[0]}::{segments[1]}` is not allowed here"

    def path_hint(self) -> str:
        """What a program may use instead."""
        crates = f" and the crates {_hint_list(self.crates)}" if self.crates else ""
        return f"Allowed: std::{{{_hint_list(STD_MODULES)}}}{crates}."


class _RustCheck:
    """One program's check: the walk over its tree, its items, its declared signature."""

    def __init__(
        self, policy: RustCodePolicy, source: Source, test: str, declaration: str | None
    ) -> None:
        self.policy = policy
        self.src = source
        # The test code's own top-level items (its `mod tests`, helpers, tables of
        # expected answers), which the program may not name, and the names it uses.
        self.test_items, self.test_values, self.test_uses = _test_facts(test)
        self.items = _module_items(source.root)
        # Types and traits wherever they are defined: one defined inside a function can
        # still reach the tests (returned as `impl Trait`).
        anywhere = [n for n in walk(source.root, lambda n: n.type in _PRUNE) if n.type in _ITEMS]
        self.types = {self._item_name(i): i for i in anywhere if i.type in _TYPE_ITEMS}
        self.aliases = {self._item_name(i): i for i in anywhere if i.type == "type_item"}
        self.traits = {self._item_name(i) for i in anywhere if i.type == "trait_item"}
        # Names bound by `use ... as` anywhere (inline modules and functions too): the rules
        # on impls read a trait by its name, so an impl may not name its trait by one.
        uses = [n.child_by_field_name("argument") for n in walk(source.root)]
        self.renamed = {
            binding
            for argument in uses
            if argument is not None
            and argument.parent is not None
            and argument.parent.type == "use_declaration"
            for _, binding, renamed, _ in _use_paths(source, argument, [])
            if renamed and binding
        }
        self.trait_items: dict[str, list[tree_sitter.Node]] = {}
        for item in anywhere:
            if item.type == "trait_item":
                self.trait_items.setdefault(self._item_name(item), []).append(item)
        # Names of the standard library, the prelude, the crates and the declaration's
        # header that the tests use: an item of the program with one of them would take its
        # place for the tests (their `use super::*` imports the program's names). Macros
        # are not here: the tests call the standard ones by their full path.
        facts = _declaration_facts(declaration or "")
        self.entry, self.declared = facts.entry, facts.signature
        protected = PRIMITIVES | PRELUDE | set(_ROOTS) | policy.crates | facts.header
        # The names the tests use, and those of the declared signature: a `struct String`
        # of the program would be what the signature's `String` means to the spelled check.
        self.protected = protected & (self.test_uses | facts.words)
        self._exposed: set[str] | None = None

    def run(self) -> Refusal | None:
        return first(
            [
                unparsed(self.src, "rust/unparsed"),
                self._walk(),
                self._item_names(),
                self._signature(),
            ]
        )

    # -- helpers ----------------------------------------------------------------------------

    def _item_name(self, node: tree_sitter.Node) -> str:
        return _name(self.src.text(node.child_by_field_name("name")))

    def _segments(self, node: tree_sitter.Node | None) -> list[str]:
        return _path_segments(self.src, node)

    def _refuse_path(self, node: tree_sitter.Node, segments: Sequence[str]) -> Iterator[Refusal]:
        problem = self.policy.path_problem(segments)
        if problem:
            yield self.src.refuse(node, "rust/path", problem, self.policy.path_hint())
        named = [s for s in segments if s in self.test_items]
        if named and not (len(segments) == 1 and named[0] not in self.test_values):
            yield self._test_item(node, named[0])

    def _test_item(self, node: tree_sitter.Node, name: str) -> Refusal:
        return self.src.refuse(
            node,
            "rust/test-items",
            f"`{name}` belongs to the test code: the program may not use what the tests hold",
            "Compute the answer from the arguments alone.",
        )

    def _idents(self, node: tree_sitter.Node | None, src: Source | None = None) -> set[str]:
        src = src or self.src
        if node is None:
            return set()
        return {_name(src.text(n)) for n in leaves(node) if n.type in _IDENTS}

    # -- the walk ---------------------------------------------------------------------------

    def _walk(self) -> Iterator[Refusal]:
        for node in walk(self.src.root, lambda n: n.type in _PRUNE):
            kind = node.type
            if kind == "unsafe":
                yield self._unsafe(node)
            elif kind == "extern":
                yield self._extern(node)
            elif kind == "macro_definition":
                yield self.src.refuse(
                    node,
                    "rust/macro-definition",
                    "`macro_rules!` is not allowed here: a macro's expansion cannot be "
                    "checked before it is built",
                    "Write a function instead.",
                )
            elif kind in ("attribute_item", "inner_attribute_item"):
                yield from self._attribute(node)
            elif kind == "macro_invocation":
                yield from self._macro(node, self._segments(node.child_by_field_name("macro")))
                arguments = [c for c in node.named_children if c.type == "token_tree"]
                yield from self._tokens(arguments[-1]) if arguments else iter(())
            elif kind == "use_declaration":
                yield from self._use(node)
            elif kind in _PATHS and not _inner_path(node):
                yield from self._refuse_path(node, self._segments(node))
            elif kind == "identifier" and _name(self.src.text(node)) in self.test_values:
                yield self._test_item(node, _name(self.src.text(node)))
            elif kind == "mod_item" and node.child_by_field_name("body") is None:
                yield self.src.refuse(
                    node,
                    "rust/module-file",
                    "a module loaded from another file (`mod name;`) is not allowed",
                    "Write the module inline: `mod name { ... }`.",
                )
            elif kind == "impl_item":
                yield from self._impl(node)

    def _unsafe(self, node: tree_sitter.Node) -> Refusal:
        return self.src.refuse(
            node,
            "rust/unsafe",
            "`unsafe` is not allowed: it reaches outside what the tests can observe",
            "Use safe code only.",
        )

    def _extern(self, node: tree_sitter.Node) -> Refusal:
        return self.src.refuse(
            node,
            "rust/extern",
            "`extern` (foreign functions, ABIs, `extern crate`) is not allowed",
            "Use the standard library and the provided crates through `use`.",
        )

    def _attribute(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        attr = next((c for c in node.named_children if c.type == "attribute"), None)
        if attr is None or not attr.named_children:
            return
        name = "::".join(self._segments(attr.named_children[0]))
        args = attr.child_by_field_name("arguments")
        value = attr.child_by_field_name("value")
        hint = (
            f"Allowed: #[derive({_hint_list(DERIVES)})], lint levels (#[allow(..)] and the "
            f"like), and #[{_hint_list(_PLAIN_ATTRIBUTES, '{}')}]; at the top of the code "
            "(#![..]) only lint levels."
        )
        if name in _LINTS:
            return
        if node.type == "inner_attribute_item" or name not in _PLAIN_ATTRIBUTES | {"derive"}:
            yield self.src.refuse(
                node, "rust/attribute", f"the attribute `{name}` is not allowed here", hint
            )
            return
        tokens = [*(leaves(args) if args else []), *(leaves(value) if value else [])]
        if any(t.type == "!" for t in tokens):
            yield self.src.refuse(
                node, "rust/attribute", "a macro inside an attribute is not allowed", hint
            )
        if name == "derive" and args is not None:
            for token in tokens:
                if token.type == "identifier" and _name(self.src.text(token)) not in DERIVES:
                    yield self.src.refuse(
                        node,
                        "rust/attribute",
                        f"deriving `{self.src.text(token)}` is not allowed here",
                        hint,
                    )

    def _macro(self, node: tree_sitter.Node, segments: Sequence[str]) -> Iterator[Refusal]:
        if not segments:
            return
        name = segments[-1]
        qualified_elsewhere = len(segments) > 1 and segments[0] not in _ROOTS
        if name not in MACROS or qualified_elsewhere:
            yield self.src.refuse(
                node,
                "rust/macro",
                f"the macro `{'::'.join(segments)}!` is not allowed here",
                f"Allowed macros: {_hint_list(MACROS, '{}!')}.",
            )

    def _tokens(self, tree: tree_sitter.Node) -> Iterator[Refusal]:
        """A macro's argument tokens: expression keywords, allowed paths and macros only."""
        tokens = leaves(tree)
        i = 0
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            lifetime = i > 0 and tokens[i - 1].type == "'"
            if kind == "string_content":
                # Format strings capture names: `format!("{CASES:?}")` reads a constant.
                for name in _CAPTURED.findall(self.src.text(token).replace("{{", "")):
                    if name in self.test_values:
                        yield self._test_item(token, name)
            elif kind == "#":
                yield self.src.refuse(
                    token,
                    "rust/attribute",
                    "an attribute inside a macro argument is not allowed",
                    "Put attributes on items outside the macro call.",
                )
            elif kind == "unsafe":
                yield self._unsafe(token)
            elif kind == "extern":
                yield self._extern(token)
            elif kind == "macro_rules!":
                yield self.src.refuse(
                    token, "rust/macro-definition", "`macro_rules!` is not allowed here"
                )
            elif (
                not token.is_named
                and kind.isidentifier()
                and kind not in _TOKEN_KEYWORDS
                and kind != "_"
                and not lifetime
            ):
                yield self.src.refuse(
                    token,
                    "rust/macro-argument",
                    f"`{kind}` inside a macro argument is not allowed",
                    "Macro arguments hold expressions; define items outside the call.",
                )
            if kind in (*_PATH_TOKENS, "::"):
                segments, i = _token_path(self.src, tokens, i)
                after = tokens[i].type if i < len(tokens) else ""
                follows = tokens[i + 1].type if i + 1 < len(tokens) else ""
                if after == "!" and follows in ("(", "[", "{") and segments:
                    yield from self._macro(token, segments)
                else:
                    yield from self._refuse_path(token, segments)
                continue
            i += 1

    def _use(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        argument = node.child_by_field_name("argument")
        if argument is None:
            return
        for path, binding, renamed, at in _use_paths(self.src, argument, []):
            root = path[0] if path else ""
            if root in _ROOTS and len(path) < 2:
                yield self.src.refuse(
                    at,
                    "rust/path",
                    f"importing the root `{root}` itself is not allowed (it would name "
                    "every module under another name)",
                    self.policy.path_hint(),
                )
            yield from self._refuse_path(at, path)
            if binding is None:
                continue
            from_library = root in _ROOTS or root in self.policy.crates
            if binding in self.protected and (renamed or not from_library):
                yield self._shadowing(at, f"`use ... as {binding}`" if renamed else f"`{binding}`")
            if binding == self.entry:
                yield self.src.refuse(
                    at,
                    "rust/signature",
                    f"the entry point `{binding}` must be the function itself, not an import",
                    f"Define `{self.declared}`.",
                )

    def _shadowing(self, node: tree_sitter.Node, what: str) -> Refusal:
        return self.src.refuse(
            node,
            "rust/shadowing",
            f"{what} would replace a name the tests use from the standard library, the "
            "prelude or the declaration (the tests import the program's names with "
            "`use super::*`)",
            "Give your item another name.",
        )

    # -- impls ------------------------------------------------------------------------------

    def _head(self, node: tree_sitter.Node | None) -> str | None:
        """The named type at the head of a type (``&mut Vec<T>`` is ``Vec``)."""
        while node is not None:
            if node.type in ("reference_type", "pointer_type", "generic_type"):
                node = node.child_by_field_name("type")
            elif node.type in ("dynamic_type", "abstract_type"):
                node = node.child_by_field_name("trait")
            elif node.type == "scoped_type_identifier":
                return _name(self.src.text(node.child_by_field_name("name")))
            elif node.type == "type_identifier":
                return _name(self.src.text(node))
            else:
                return None
        return None

    def _impl(self, node: tree_sitter.Node) -> Iterator[Refusal]:
        trait_node = node.child_by_field_name("trait")
        if trait_node is None:
            return
        trait = self._head(trait_node)
        self_type = node.child_by_field_name("type")
        head = self._head(self_type)
        params = self._idents(node.child_by_field_name("type_parameters"))
        own = set(self.types) | self.traits
        if trait in self.renamed:
            yield self.src.refuse(
                trait_node,
                "rust/impl-alias",
                f"the trait of this impl is named by an alias (`use ... as {trait}`): which "
                "trait an impl is for must be plain from its name (an aliased `PartialEq` "
                "decided the tests' comparisons)",
                "Name the trait itself in the impl.",
            )
            return
        if trait in self.traits and (head in params or head not in own):
            yield self.src.refuse(
                node,
                "rust/foreign-impl",
                f"the program's trait `{trait}` may only be implemented for types the program "
                "defines: on other types its methods would take the place of the ones the "
                "tests call",
                "Implement it for your own struct or enum, or write a function.",
            )
        if trait not in JUDGING_TRAITS and trait not in ("Iterator", "DoubleEndedIterator"):
            return
        seen = (self._idents(trait_node) | self._idents(self_type)) & self.exposed()
        if not seen:
            return
        if trait in JUDGING_TRAITS:
            yield self.src.refuse(
                node,
                "rust/judging-impl",
                f"a hand-written `{trait}` for `{sorted(seen)[0]}`, a type the tests see, "
                "would decide the tests' own comparisons or arithmetic",
                f"Derive it (`#[derive({trait})]`) where it can be derived, or return a "
                "standard type.",
            )
            return
        body = node.child_by_field_name("body")
        for item in body.named_children if body is not None else []:
            name = self._item_name(item) if item.type == "function_item" else ""
            if name and name not in _ITERATOR_METHODS:
                yield self.src.refuse(
                    item,
                    "rust/judging-impl",
                    f"an iterator the tests see may not redefine `{name}` (its provided "
                    "version is what the tests rely on)",
                    f"Define only {_hint_list(_ITERATOR_METHODS, '`{}`')}.",
                )

    def exposed(self) -> set[str]:
        """The program's types and traits the tests see.

        Those the tests name, and those reachable from the signatures of the functions
        the tests call, from the fields of what is reachable, and from its impls.
        """
        if self._exposed is not None:
            return self._exposed
        named = self.test_uses
        # Functions of inline modules too: `use m::*` brings them where the tests look.
        functions: dict[str, list[tree_sitter.Node]] = {}
        for defined in self.items:
            if defined.type == "function_item":
                functions.setdefault(self._item_name(defined), []).append(defined)
        known = set(self.types) | set(self.aliases) | self.traits
        impls: dict[str, list[tree_sitter.Node]] = {}
        wanted = named | {self.entry or ""}
        for node in walk(self.src.root, lambda n: n.type in _PRUNE):
            if node.type == "impl_item":
                head = self._head(node.child_by_field_name("type")) or ""
                impls.setdefault(head, []).append(node)
            argument = node.child_by_field_name("argument")
            if node.type == "use_declaration" and argument is not None:
                # `use m::liar as is_odd`: the tests call `liar` by the name they know.
                for path, binding, _, _ in _use_paths(self.src, argument, []):
                    if binding in wanted and path:
                        wanted = wanted | {path[-1]}
        called = wanted & set(functions)
        signatures = [fn for name in called for fn in functions[name]]
        exposed: set[str] = set()
        todo = list(named & known)
        while signatures or todo:
            reach: set[str] = set()
            for fn in signatures:
                idents, opaque = self._signature_idents(fn)
                if opaque:
                    # `impl Trait` and `dyn Trait` hide which of the program's types the
                    # tests get: all of them count.
                    self._exposed = known
                    return known
                reach |= idents
            signatures = []
            todo.extend((reach & known) - exposed)
            while todo:
                name = todo.pop()
                if name in exposed:
                    continue
                exposed.add(name)
                item = self.types.get(name) or self.aliases.get(name)
                found = self._idents(item) if item is not None else set()
                # Its methods, those of its impls and those its traits provide.
                bodies = [i.child_by_field_name("body") for i in impls.get(name, [])]
                bodies += [i.child_by_field_name("body") for i in self.trait_items.get(name, [])]
                for impl in impls.get(name, []):
                    found.add(self._head(impl.child_by_field_name("trait")) or "")
                for body in bodies:
                    for member in body.named_children if body is not None else []:
                        if member.type in ("function_item", "function_signature_item"):
                            signatures.append(member)
                        elif member.type in ("type_item", "associated_type"):
                            found |= self._idents(member)
                todo.extend((found & known) - exposed)
        self._exposed = exposed
        return exposed

    def _signature_idents(self, fn: tree_sitter.Node) -> tuple[set[str], bool]:
        """The names in a function's signature, and whether it has an opaque type."""
        parts = [
            fn.child_by_field_name(f) for f in ("type_parameters", "parameters", "return_type")
        ]
        parts += [c for c in fn.named_children if c.type == "where_clause"]
        idents: set[str] = set()
        opaque = False
        for part in parts:
            if part is None:
                continue
            idents |= self._idents(part)
            opaque = opaque or any(n.type in _OPAQUE for n in walk(part))
        return idents, opaque

    # -- items and the declared signature -------------------------------------------------

    def _item_names(self) -> Iterator[Refusal]:
        for item in self.items:
            name = self._item_name(item)
            if name in self.protected:
                yield self._shadowing(item, f"`{_ITEM_WORDS[item.type]} {name}`")
            elif name == self.entry and (item.type != "function_item" or not _at_root(item)):
                yield self.src.refuse(
                    item,
                    "rust/signature",
                    f"the entry point `{name}` must be a function of the crate root (not a "
                    "module's, which a `use` could bring in)",
                    f"Define `{self.declared}` at the top level.",
                )

    def _signature(self) -> Iterator[Refusal]:
        if not self.entry:
            return
        for node in self.src.root.named_children:
            if node.type == "function_item" and self._item_name(node) == self.entry:
                found = _rust_signature(self.src, node)
                if found != self.declared:
                    yield self.src.refuse(
                        node,
                        "rust/signature",
                        f"the entry point must keep its declared signature `{self.declared}`, "
                        f"not `{found}`",
                        "Keep the declared parameter and return types.",
                    )


@functools.lru_cache(maxsize=256)
def _test_facts(test: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The test code's top-level item names, those that are values, and every name it uses.

    Cached: the samples of one problem share their tests.
    """
    src = Source(GRAMMAR, test)
    items = [n for n in src.root.named_children if n.type in _ITEMS]
    names = frozenset(_name(src.text(n.child_by_field_name("name"))) for n in items)
    values = frozenset(
        _name(src.text(n.child_by_field_name("name")))
        for n in items
        if n.type in ("function_item", "const_item", "static_item")
    )
    used = frozenset(_name(src.text(n)) for n in leaves(src.root) if n.type in _IDENTS)
    return names, values, used


@dataclass(frozen=True)
class _Declared:
    """What the policy and the build need of a declaration."""

    #: The entry point's name (None without a declaration).
    entry: str | None = None
    #: Its signature, as :func:`_rust_signature` spells it.
    signature: str = ""
    #: The names the declaration's ``use`` header imports.
    header: frozenset[str] = frozenset()
    #: The names its signature uses (``Vec``, ``String``, ``i32``).
    words: frozenset[str] = frozenset()
    #: The compiler's check of the signature: a module of its own (see _signature_check).
    check: str = ""


@functools.lru_cache(maxsize=256)
def _declaration_facts(declaration: str) -> _Declared:
    """The declared entry point's name and signature, the names its header imports."""
    if not declaration:
        return _Declared()
    decl = Source(GRAMMAR, declaration.rstrip() + "\n}\n")
    functions = [n for n in decl.root.named_children if n.type == "function_item"]
    header: set[str] = set()
    uses = []
    for node in decl.root.named_children:
        argument = node.child_by_field_name("argument") if node.type == "use_declaration" else None
        if argument is not None:
            header |= {b for _, b, _, _ in _use_paths(decl, argument, []) if b}
            uses.append(decl.text(node))
    if not functions:
        return _Declared(header=frozenset(header))
    fn = functions[-1]
    entry = _name(decl.text(fn.child_by_field_name("name")))
    parts = [fn.child_by_field_name(f) for f in ("parameters", "return_type")]
    words = {
        _name(decl.text(n)) for part in parts if part for n in leaves(part) if n.type in _IDENTS
    }
    return _Declared(
        entry,
        _rust_signature(decl, fn),
        frozenset(header),
        frozenset(words),
        _signature_check(decl, fn, entry, uses, header),
    )


def _signature_check(
    decl: Source, fn: tree_sitter.Node, entry: str, uses: list[str], header: set[str]
) -> str:
    """A module that compiles only if the crate root's entry point is the declared function.

    ``const _: fn(<declared parameter types>) -> <declared type> = crate::<entry>;``: a
    function item coerces to a function pointer of exactly its own signature (lifetimes
    aside), so a function of other types, a variable, a function of a module brought in by
    a glob, or one returning a type of the program is a compile error. The module names
    what the declaration's ``use`` header and the prelude give it and nothing of the
    program's (no ``use super::*``): its ``String`` and ``i32`` are the library's, whatever
    the program declares. A type the declaration takes from the program (HumanEval-X's
    ``RtnType``) is named through the crate root. "" when the declaration is generic.
    """
    lifetimes = []
    generics = fn.child_by_field_name("type_parameters")
    for param in generics.named_children if generics is not None else []:
        if param.type != "lifetime_parameter":
            return ""  # a type or const parameter: no one function pointer type
        lifetime = next((c for c in param.named_children if c.type == "lifetime"), None)
        lifetimes.append(decl.text(lifetime))
    if any(c.type == "where_clause" for c in fn.named_children):
        return ""
    params = fn.child_by_field_name("parameters")
    types = []
    for param in params.named_children if params is not None else []:
        if param.type == "parameter":
            types.append(decl.text(param.child_by_field_name("type")))
        elif param.type not in COMMENTS:
            return ""  # self or variadic: not a free function
    returns = fn.child_by_field_name("return_type")
    parts = [n for n in (params, returns) if n is not None]
    if any(n.type == "abstract_type" for part in parts for n in walk(part)):
        return ""  # `impl Trait`: no type to name
    known = PRIMITIVES | PRELUDE | header
    own = sorted(
        {
            _name(decl.text(n))
            for part in parts
            for n in walk(part)
            if n.type == "type_identifier"
            and (n.parent is None or n.parent.type != "scoped_type_identifier")
            and _name(decl.text(n)) not in known
        }
    )
    lines = [*uses]
    if own:
        lines.append(f"use crate::{{{', '.join(own)}}};")
    prefix = f"for<{', '.join(lifetimes)}> " if lifetimes else ""
    result = f" -> {decl.text(returns)}" if returns is not None else ""
    lines.append(f"const _: {prefix}fn({', '.join(types)}){result} = crate::{entry};")
    return "\n".join(lines) + "\n"


def _at_root(item: tree_sitter.Node) -> bool:
    return item.parent is not None and item.parent.type == "source_file"


def _module_items(root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The items of the crate root and of its inline modules (not those inside functions)."""
    out = []
    stack = [root]
    while stack:
        for child in stack.pop().named_children:
            if child.type in _ITEMS:
                out.append(child)
            body = child.child_by_field_name("body") if child.type == "mod_item" else None
            if body is not None:
                stack.append(body)
    return out


def _inner_path(node: tree_sitter.Node) -> bool:
    """Whether a path node is the prefix of a longer path (only whole paths are checked)."""
    parent = node.parent
    while parent is not None and parent.type == "generic_type":
        node, parent = parent, parent.parent
    if parent is None or parent.type not in _PATHS:
        return False
    prefix = parent.child_by_field_name("path")
    return prefix is not None and prefix.id == node.id


def _token_path(src: Source, tokens: list[tree_sitter.Node], i: int) -> tuple[list[str], int]:
    """The path of tokens starting at ``i`` (``::std::fs::read``), and the index after it.

    The index always moves on (a lone ``::`` is skipped).
    """
    segments: list[str] = []
    if tokens[i].type == "::":
        i += 1
    while i < len(tokens) and tokens[i].type in _PATH_TOKENS:
        segments.append(_name(src.text(tokens[i])))
        i += 1
        if i + 1 < len(tokens) and tokens[i].type == "::" and tokens[i + 1].type in _PATH_TOKENS:
            i += 1
            continue
        break
    return segments, i


def _path_segments(src: Source, node: tree_sitter.Node | None) -> list[str]:
    """The segments of a path node (``::std::fs::read`` is ``[std, fs, read]``)."""
    out: list[str] = []
    while node is not None and node.type in (*_PATHS, "generic_type"):
        if node.type == "generic_type":
            node = node.child_by_field_name("type")
            continue
        out.append(_name(src.text(node.child_by_field_name("name"))))
        node = node.child_by_field_name("path")
    if node is not None:
        out.append("<>" if node.type == "bracketed_type" else _name(src.text(node)))
    return out[::-1]


def _use_paths(
    src: Source, node: tree_sitter.Node, prefix: list[str]
) -> Iterator[tuple[list[str], str | None, bool, tree_sitter.Node]]:
    """A use tree flattened: (path, the name it binds or None for a glob, renamed, node)."""
    kind = node.type
    if kind == "use_as_clause":
        path = prefix + _path_segments(src, node.child_by_field_name("path"))
        if path and path[-1] == "self":
            path = path[:-1]
        yield path, _name(src.text(node.child_by_field_name("alias"))), True, node
    elif kind == "use_wildcard":
        inner = node.named_children[0] if node.named_children else None
        yield prefix + (_path_segments(src, inner) if inner is not None else []), None, False, node
    elif kind == "scoped_use_list":
        inner = node.child_by_field_name("path")
        path = prefix + (_path_segments(src, inner) if inner is not None else [])
        listed = node.child_by_field_name("list")
        for child in listed.named_children if listed is not None else []:
            yield from _use_paths(src, child, path)
    elif kind == "use_list":
        for child in node.named_children:
            yield from _use_paths(src, child, prefix)
    else:
        path = prefix + _path_segments(src, node)
        if path and path[-1] == "self":
            path = path[:-1]
        yield path, (path[-1] if path else None), False, node


def _rust_signature(src: Source, fn: tree_sitter.Node) -> str:
    """A function's signature without names, lifetimes, comments or layout."""
    skip = COMMENTS | {"lifetime", "lifetime_parameter"}

    def norm(node: tree_sitter.Node | None) -> str:
        return " ".join(src.text(t) for t in leaves(node, skip)) if node is not None else ""

    params = fn.child_by_field_name("parameters")
    types = []
    for param in params.named_children if params is not None else []:
        if param.type == "parameter":
            types.append(norm(param.child_by_field_name("type")))
        elif param.type in ("self_parameter", "variadic_parameter"):
            types.append(norm(param))
    generics = fn.child_by_field_name("type_parameters")
    kept = (
        [norm(p) for p in generics.named_children if p.type != "lifetime_parameter"]
        if generics
        else []
    )
    where = " ".join(norm(c) for c in fn.named_children if c.type == "where_clause")
    modifiers = next((c for c in fn.children if c.type == "function_modifiers"), None)
    is_async = "async " if modifiers is not None and "async" in src.text(modifiers) else ""
    name = _name(src.text(fn.child_by_field_name("name")))
    generic_text = f"<{', '.join(kept)}>" if kept else ""
    returns = norm(fn.child_by_field_name("return_type")) or "()"
    text = f"{is_async}fn {name}{generic_text}({', '.join(types)}) -> {returns}"
    return f"{text} {where}" if where else text


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
    #: The exit status of a panic: a judge in Rust that panics did not give a verdict (under
    #: testlib's codes, 101 would read as "partially correct, 85 of 100").
    crash_exit_statuses = frozenset({101})

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
        self.code_policy = RustCodePolicy(self.crates)

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

    def check_code(self, code: str, spec: TestSpec) -> TestOutcome | None:
        """Function-style tasks: the code policy's refusal (failed, a suspected hack), or None.

        Their tests share the binary with the program, so the program may not use what
        would reach the harness (see :class:`RustCodePolicy`). stdin/stdout programs are
        judged on their output alone and are not restricted.
        """
        if not isinstance(spec, AssertScriptTests):
            return None
        refusal = self.code_policy.check(code, spec.test, spec.declaration)
        return refusal.outcome() if refusal is not None else None

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
        files: dict[str, bytes] = {}
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
                f"|| {_HARNESS_MODULE}::Outcome::failure({path}()))"
                for path, panics in functions
            )
            source = (
                f"{_without_main(code)}\n\n{_callable_tests(spec.test)}\n{_HARNESS}\n"
                f"fn main() {{\n    {_HARNESS_MODULE}::run(&[\n        {table}\n    ]);\n}}\n"
            )
            check = _declaration_facts(spec.declaration or "").check
            if check:
                # The compiler's check of the declared signature, in a file of its own (its
                # errors are told apart by the file's name: interpret_build).
                source += f"\nmod {SIGNATURE_MODULE};\n"
                files[f"{SIGNATURE_MODULE}.rs"] = check.encode()
            cfg = ("--cfg", "test")
            for index in selected:
                name = functions[index][0] if functions else ""
                step = Step(argv=("{work_dir}/prog", name), limits=step_limits)
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "assert"}))
        flags = (*FLAGS, *cfg)
        build = Step(
            argv=("{rustc}", *flags, "-o", "{work_dir}/prog", "{program_dir}/main.rs", *link),
            limits=limits.step_limits(build=True),
            env={"PATH": "/usr/bin:/bin"},
        )
        # The toolchain's identity (rustc, crates, an image) joins the key in the pipeline.
        files["main.rs"] = source.encode("utf-8", errors="surrogateescape")
        program = Program(
            files=files,
            tests=tuple(tests),
            build=build,
            # The bytes rustc reads, as given: no normalisation (stripping a line's end
            # would change a multi-line string literal, and splitlines() splits at U+2028).
            build_key=build_key("rust", build.argv, files),
            artefacts=("prog",),
            toolchains=(RUST,),
        )
        return pin_toolchain(program, RUST, self._rustc)

    def interpret_build(self, proc: ProcessResult, limits: Limits) -> TestOutcome:
        """``compile_error``; or ``failed`` when the compiler's signature check alone failed.

        Every program that defines the entry point as declared passes that check: a build
        that fails in it only is the code policy's refusal, found by the compiler.
        """
        outcome = judge_build(proc, limits)
        if outcome.status is not Status.COMPILE_ERROR:
            return outcome
        text = proc.stderr.decode(errors="replace")
        where = {m.group(1).rsplit("/", 1)[-1] for m in _ERROR_AT.finditer(text)}
        if where != {f"{SIGNATURE_MODULE}.rs"}:
            return outcome
        reason = (
            "the entry point is not the declared function of the crate root: its type is not "
            "the declared signature's (the compiler checked it)"
        )
        hint = "Define the entry point exactly as the task declares it, at the top level."
        shown = outcome.message.replace(SIGNATURE_MODULE, "declared_signature")
        message = Refusal("rust/signature", reason, hint=hint).describe()
        return TestOutcome(
            Status.FAILED,
            f"{message}\nThe compiler:\n{shown}",
            hack=f"code policy rust/signature: {reason}",
        )

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then panics (assertion: wrong answer; others: runtime error), then the answer."""
        by_event, decided = judge_first(test, spec, proc, limits, compare, MEMORY_MARKERS)
        if decided is not None:
            return decided
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
            # Refused by the code policy before it is built (failed, a suspected hack).
            "early_exit:process::exit(0) in the function": (
                "fn add(a: i32, b: i32) -> i32 {\n    std::process::exit(0)\n}",
                _RS_ADD,
                Status.FAILED,
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
