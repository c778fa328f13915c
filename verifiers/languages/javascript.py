"""JavaScript on Node.js: stdin/stdout programs, and programs with test code (HumanEval-X).

A program with tests is the code followed by the test code in one CommonJS
module, loaded by a harness (``_js_harness.js``) that makes ``console.assert``
throw and proves the tests ran to the end with the sandbox's nonce. Node has no
build step; a ``SyntaxError`` Node finds when loading code tree-sitter accepted
(ES module syntax in a CommonJS file, say) is a ``compile_error``.
"""

from __future__ import annotations

import shutil
from importlib import resources

from verifiers.errors import RuntimeUnavailableError
from verifiers.languages.common import (
    TreeSitterLanguage,
    judge_pass_record,
    judge_stdio,
    limit_outcome,
    records,
    stderr_tail,
    toolchain_version,
)
from verifiers.limits import Limits
from verifiers.program import ProcessResult, Program, ProgramTest, Step
from verifiers.protocols import TestOutcome
from verifiers.results import Status
from verifiers.specs import AssertScriptTests, CompareOptions, StdioTests, TestSpec

#: What Node and V8 print when memory runs out.
MEMORY_MARKERS = (
    b"JavaScript heap out of memory",
    b"Fatal process out of memory",
    b"Allocation failed",
    b"Array buffer allocation failed",
)


class JavaScriptLanguage(TreeSitterLanguage):
    """JavaScript (CommonJS) on the sandbox's Node.js.

    Args:
        node: The ``node`` executable (default: found on ``PATH``).
    """

    name = "javascript"
    aliases = ("javascript", "js", "node", "nodejs", "jsx")
    grammar = "tree_sitter_javascript"

    def __init__(self, node: str | None = None) -> None:
        self.node = node or shutil.which("node") or "node"
        self._harness = (
            resources.files("verifiers.languages").joinpath("_js_harness.js").read_bytes()
        )

    def toolchain(self) -> str:
        """Node's version (for ``verifiers doctor``)."""
        if not shutil.which(self.node):
            raise RuntimeUnavailableError(
                "node not found: install Node.js 18 or newer (apt-get install nodejs)"
            )
        return f"node {toolchain_version([self.node, '--version'])} at {self.node}"

    def build_program(
        self, code: str, spec: TestSpec, selected: list[int], limits: Limits
    ) -> Program:
        """One ``node`` run per test; the harness for programs with tests."""
        step_limits = limits.step_limits()
        heap = f"--max-old-space-size={max(16, limits.memory_mb * 3 // 4)}"
        files: dict[str, bytes] = {}
        tests = []
        if isinstance(spec, StdioTests):
            files["solution.js"] = code.encode("utf-8", errors="surrogateescape")
            for index in selected:
                stdin = spec.cases[index].input.encode("utf-8", errors="surrogateescape")
                step = Step(
                    argv=(self.node, heap, "{program_dir}/solution.js"),
                    limits=step_limits,
                    stdin=stdin,
                )
                tests.append(ProgramTest(index=index, step=step, meta={"mode": "stdio"}))
        else:
            assert isinstance(spec, AssertScriptTests)
            program = f"{code}\n;\n{spec.test}\n"
            files["program.js"] = program.encode("utf-8", errors="surrogateescape")
            files["harness.js"] = self._harness
            step = Step(
                argv=(self.node, heap, "{program_dir}/harness.js", "{program_dir}/program.js"),
                limits=step_limits,
            )
            tests.append(ProgramTest(index=0, step=step, meta={"mode": "assert"}))
        return Program(files=files, tests=tuple(tests))

    def interpret(
        self,
        test: ProgramTest,
        spec: TestSpec,
        proc: ProcessResult,
        limits: Limits,
        compare: CompareOptions | None,
    ) -> TestOutcome:
        """Limits, then Node's load-time syntax errors, then the answer."""
        by_event = records(proc.channel)
        limit = limit_outcome(proc, limits, by_event, MEMORY_MARKERS)
        if limit is not None:
            return limit
        error = by_event.get("error", {})
        if b"SyntaxError:" in proc.stderr and (
            error.get("type") == "SyntaxError" or (test.meta["mode"] == "stdio" and not proc.stdout)
        ):
            return TestOutcome(Status.COMPILE_ERROR, stderr_tail(proc), fatal=True)
        if test.meta["mode"] == "stdio":
            assert isinstance(spec, StdioTests)
            return judge_stdio(spec, test.index, proc, compare)
        if error:
            return TestOutcome(Status.RUNTIME_ERROR, str(error.get("traceback") or error))
        return judge_pass_record(proc, by_event)
