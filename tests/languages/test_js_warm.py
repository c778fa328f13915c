"""The warm Node (``JavaScriptLanguage()``): a program's stdin/stdout tests in one Node.

Each test calls the program's CommonJS module function again in one Node kept for the
program (``_js_runner.js``), served by the sandbox's supervisor (``run_warm`` in
``runtimes/_agent.py``). What must hold: the program sees its input however it reads it,
its verdicts and its exact output are those of a Node per test (``warm=False``), tests do
not see each other's state (globals, builtins, timers), a test that ends the runner (a time
or memory limit, a crash) costs only itself, and a program that attacks its runner (kills
it, forges a reply for a later test, tampers with the builtins the runner uses, leaves a
process behind) changes nothing but its own test.
"""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest

import verifiers
from verifiers._async import run_sync
from verifiers.languages.javascript import JavaScriptLanguage, node_per_test
from verifiers.limits import Limits
from verifiers.runtimes.local import LocalRuntime
from verifiers.specs import parse_tests

from ..conftest import need

INPUTS = ["1 2\n", "3 4\n", "10 20\n"]
SUMS = {"inputs": INPUTS, "outputs": ["3\n", "7\n", "30\n"]}
PASSED = verifiers.Status.PASSED
ALL: dict[str, Any] = {"policy": "partial", "stop_on_failure": False}
SUM = "d.trim().split(/\\s+/).map(Number).reduce((a, b) => a + b, 0)"

READERS = {
    "readline": (
        "const rl = require('readline').createInterface({ input: process.stdin });\n"
        "let s = 0;\n"
        "rl.on('line', (l) => { for (const x of l.split(' ')) s += Number(x); });\n"
        "rl.on('close', () => console.log(s));\n"
    ),
    "readFileSync(0)": f"const d = require('fs').readFileSync(0, 'utf8');\nconsole.log({SUM});\n",
    "/dev/stdin": (
        f"const d = require('fs').readFileSync('/dev/stdin').toString();\nconsole.log({SUM});\n"
    ),
    "stdin events": (
        "let d = '';\n"
        "process.stdin.setEncoding('utf8');\n"
        "process.stdin.on('data', (c) => (d += c));\n"
        f"process.stdin.on('end', () => console.log({SUM}));\n"
    ),
    "readSync loop": (
        "const fs = require('fs');\n"
        "const b = Buffer.alloc(3);\n"
        "let n, s = '';\n"
        "while ((n = fs.readSync(0, b, 0, b.length, null)) > 0) s += b.toString('utf8', 0, n);\n"
        "const sum = s.trim().split(/\\s+/).map(Number).reduce((a, c) => a + c, 0);\n"
        "fs.writeSync(1, String(sum) + '\\n');\n"
    ),
    "main module": (
        "function main() {\n"
        "  const d = require('fs').readFileSync(0, 'utf8');\n"
        "  process.stdout.write(String(d.split(/\\s+/).filter(Boolean).map(Number)"
        ".reduce((a, b) => a + b, 0)) + '\\n');\n"
        "}\n"
        "if (require.main === module) main();\n"
    ),
    "for await readline": (
        "const readline = require('readline');\n"
        "async function main() {\n"
        "  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });\n"
        "  let s = 0;\n"
        "  for await (const line of rl) for (const x of line.split(' ')) s += Number(x);\n"
        "  console.log(s);\n"
        "}\n"
        "main();\n"
    ),
    "readable loop": (
        "let d = '';\n"
        "process.stdin.on('readable', () => {\n"
        "  let c;\n"
        "  while ((c = process.stdin.read()) !== null) d += c;\n"
        "});\n"
        f"process.stdin.on('end', () => console.log({SUM}));\n"
    ),
    "hackerrank template": (
        "process.stdin.resume();\nprocess.stdin.setEncoding('utf-8');\n"
        "let input = '';\nprocess.stdin.on('data', (c) => { input += c; });\n"
        "process.stdin.on('end', () => { main(input.trim().split('\\n')); });\n"
        "function main(lines) {\n"
        "  const [a, b] = lines[0].split(' ').map(Number);\n  console.log(a + b);\n}\n"
    ),
    "fstat and pread": (
        "const fs = require('fs');\nconst size = fs.fstatSync(0).size;\n"
        "const b = Buffer.alloc(size);\nfs.readSync(0, b, 0, size, 0);\n"
        f"const d = b.toString();\nconsole.log({SUM});\n"
    ),
    "readline/promises": (
        "const rl = require('readline/promises').createInterface({ input: process.stdin });\n"
        "(async () => {\n  let s = 0;\n"
        "  for await (const l of rl) for (const x of l.split(' ')) s += Number(x);\n"
        "  console.log(s);\n})();\n"
    ),
    "async readFile": (f"require('fs').readFile(0, 'utf8', (e, d) => console.log({SUM}));\n"),
}

# Programs whose exact output and verdict must be a Node per test's (on two inputs each).
SHAPES = {
    "/dev/stdin twice, then fd 0": (
        "const fs = require('fs');\nconst a = fs.readFileSync('/dev/stdin', 'utf8');\n"
        "const b = fs.readFileSync('/proc/self/fd/0', 'utf8');\n"
        "console.log(a === b, fs.readFileSync(0, 'utf8').length, fs.readFileSync(0).length);\n"
    ),
    "chunks of a large input": (
        "let n = 0, len = 0;\nprocess.stdin.on('data', (c) => { n++; len += c.length; });\n"
        "process.stdin.on('end', () => console.log(n, len));\n"
    ),
    "for await process.stdin": (
        "(async () => {\n  let d = '';\n  for await (const c of process.stdin) d += c;\n"
        "  console.log(d.length);\n})();\n"
    ),
    "events.once close": (
        "const { once } = require('events');\n"
        "const rl = require('readline').createInterface({ input: process.stdin });\n"
        "const lines = [];\nrl.on('line', (l) => lines.push(l));\n"
        "(async () => { await once(rl, 'close'); console.log(lines.length, lines[0]); })();\n"
    ),
    "large output": (
        "const out = [];\nfor (let i = 0; i < 100000; i++) out.push(i);\n"
        "console.log(out.join('\\n'));\n"
    ),
    "many console.log": "for (let i = 0; i < 20000; i++) console.log(i, 'x');\n",
    "no trailing newline": "process.stdout.write('no newline');\n",
    "bytes and typed arrays": (
        "process.stdout.write(Buffer.from([0xe2, 0x82, 0xac, 0x41]));\n"
        "process.stdout.write(new Uint8Array([66, 67]));\n"
        "process.stdout.write('\\u00e9', 'latin1');\n"
    ),
    "deep recursion": ("function f(n) { return f(n + 1) + 1; }\nconsole.log('before');\nf(0);\n"),
    "recursion that fits": (
        "function f(n) { return n === 0 ? 0 : 1 + f(n - 1); }\nconsole.log(f(8000));\n"
    ),
    "caught stack overflow": (
        "function f(n) { return f(n + 1) + 1; }\n"
        "try { f(0); } catch (e) { console.log(e instanceof RangeError, e.message); }\n"
    ),
    "exit(0) before printing": "process.exit(0);\nconsole.log('after');\n",
    "exit(3) after printing": "console.log('a');\nprocess.exit(3);\n",
    "exitCode 2": "console.log('a');\nprocess.exitCode = 2;\n",
    "exitCode then exit()": "process.exitCode = 4;\nprocess.exit();\n",
    "exit in the end handler": (
        "let d = '';\nprocess.stdin.on('data', (c) => (d += c));\n"
        "process.stdin.on('end', () => { console.log(d.trim()); process.exit(0); "
        "console.log('never'); });\n"
    ),
    "exit in an async function": (
        "(async () => { await null; console.log('x'); process.exit(5); })()"
        ".catch((e) => console.log('caught', e));\n"
    ),
    "exit caught": (
        "try { process.exit(0); } catch (e) { console.log('caught'); } "
        "finally { console.log('finally'); }\n"
    ),
    "throw a number": "console.log('a');\nthrow 5;\n",
    "throw an object": "throw { a: 1 };\n",
    "throw null": "throw null;\n",
    "throw an Error with props": "const e = new Error('x');\ne.code = 'E1';\nthrow e;\n",
    "unhandled rejection": "console.log('x');\nPromise.reject(new Error('rej'));\n",
    "unhandled rejection of 42": "Promise.reject(42);\n",
    "async function throws": (
        "async function f() { throw new Error('inner'); }\nf();\nconsole.log('sync done');\n"
    ),
    "throw in a timer": (
        "console.log('a');\n"
        "setTimeout(() => { console.log('b'); throw new Error('t'); }, 5);\n"
        "setTimeout(() => console.log('never'), 50);\n"
    ),
    "BigInt": (
        "console.log(2n ** 100n, [1n, -2n], { b: 3n });\nconsole.log(String(10n ** 30n));\n"
    ),
    "format specifiers": (
        "console.log('%s|%d|%i|%f|%j|%o|%O|%%|%c', 'a', '42', 3.9, '1.5', { a: 1 }, [1],"
        " { b: { c: { d: {} } } }, 'css');\n"
        "console.log('%s', 'a', 'b', 3);\nconsole.log('%s %s', -0, [-0]);\n"
    ),
    "console.log of values": (
        "console.log(undefined, null, NaN, -0, 0, Infinity, 'str', ['a', \"b'c\"],"
        " { 'a-b': 1, c: undefined }, [undefined, null], [, 1]);\n"
        "console.log(new Set([1, 'a']), new Map([[{ a: 1 }, [2]]]), Symbol('s'),"
        " function f() {}, () => 1, class A {});\n"
        "console.log(Object.create(null), new (class P { constructor() { this.x = 1; } })(),"
        " [1, [2, [3, [4, [5]]]]], { a: { b: { c: { d: { e: 1 } } } } });\n"
        "console.log(Array.from({ length: 120 }, (_, i) => i));\n"
        "console.log(Buffer.from('ab'), new Uint8Array(3), new Float64Array([1.5]),"
        " new ArrayBuffer(2), new WeakMap(), Promise.resolve(4));\n"
        "console.log([1.0, 2.5, 1e21, 1e-7, 0.1 + 0.2], `${[1, 2]}`, String({}), [] + {});\n"
    ),
    "util.format and inspect": (
        "const util = require('util');\n"
        "console.log(util.format('%s=%d', 'x', 5), util.inspect({ a: [1, 2, { b: 3 }] },"
        " { depth: 0 }), util.inspect('s'), util.isDeepStrictEqual([1], [1]));\n"
    ),
    "console methods": (
        "console.table([{ a: 1, b: 'x' }, { a: 2 }]);\nconsole.group('g');\nconsole.log('in');\n"
        "console.groupEnd();\nconsole.count();\nconsole.count();\n"
        "console.assert(false, 'nope');\n"
        "console.dir({ a: { b: { c: { d: 1 } } } }, { depth: 0 });\n"
        "console.info('i');\nconsole.debug('d');\nconsole.error('to stderr');\n"
    ),
    "console.log replaced": (
        "console.log = (...a) => process.stdout.write('> ' + a.join(' ') + '\\n');\n"
        "console.log(1, 2);\n"
    ),
    "exit and beforeExit listeners": (
        "let n = 0;\nprocess.on('beforeExit', (c) => {\n"
        "  console.log('beforeExit', c, n);\n"
        "  if (n++ < 2) setTimeout(() => console.log('timer', n), 1);\n});\n"
        "process.on('exit', (c) => console.log('exit', c));\n"
    ),
    "exit listener after a throw": (
        "process.on('exit', (c) => console.log('exit', c));\nthrow new Error('x');\n"
    ),
    "exit listener sets the code": "process.on('exit', () => { process.exitCode = 9; });\n",
    "uncaughtException listener": (
        "process.on('uncaughtException', (e, o) => console.log('caught', e.message, o));\n"
        "setTimeout(() => console.log('later'), 1);\nthrow new Error('x');\n"
    ),
    "unhandledRejection listener": (
        "process.on('unhandledRejection', (r) => console.log('rejected', r));\n"
        "Promise.reject(7);\nsetTimeout(() => console.log('later'), 1);\n"
    ),
    "ticks and microtasks": (
        "setTimeout(() => console.log('timeout'), 5);\n"
        "process.nextTick((a, b) => console.log('tick', a, b), 1, 2);\n"
        "Promise.resolve().then(() => console.log('micro'));\n"
        "queueMicrotask(() => console.log('queued'));\nconsole.log('sync');\n"
    ),
    "an interval cleared": (
        "let i = 0;\n"
        "const h = setInterval(() => {\n"
        "  console.log('tick', ++i);\n  if (i === 3) clearInterval(h);\n}, 1);\n"
    ),
    "an unref'd timer": (
        "setTimeout(() => console.log('never'), 50).unref();\nconsole.log('done');\n"
    ),
    "promisified timers": (
        "const util = require('util');\nconst sleep = util.promisify(setTimeout);\n"
        "sleep(1).then(() => require('timers/promises').setTimeout(1, 'v'))"
        ".then((v) => console.log('slept', v));\n"
    ),
    "a promise that never settles": (
        "(async () => { await new Promise(() => {}); console.log('never'); })();\n"
        "console.log('end');\n"
    ),
    "strict mode, this and the module": (
        "'use strict';\nconsole.log(this === module.exports, typeof exports, arguments.length,"
        " typeof require, require.main === module, module.id,"
        " __filename.endsWith('solution.js'));\n"
        "exports.x = 1;\nconsole.log(module.exports.x);\n"
    ),
    "globals": (
        "console.log(global === globalThis, typeof window, typeof Buffer, typeof URL,"
        " typeof TextEncoder, typeof structuredClone, typeof queueMicrotask,"
        " typeof setImmediate, typeof performance, typeof AbortController);\n"
        "console.log(Object.keys(globalThis).sort().join(','));\n"
        "console.log(structuredClone({ a: [1] }), new URL('http://x/y?z=1').searchParams.get('z'),"
        " new TextDecoder().decode(new TextEncoder().encode('\\u00e9')));\n"
    ),
    "process": (
        "console.log(process.argv.length, process.argv.slice(2), typeof process.env.PATH,"
        " process.platform, typeof process.pid, process.stdin.isTTY, process.stdout.isTTY,"
        " process.stdout.fd, typeof process.hrtime.bigint(), process.exitCode,"
        " typeof process.memoryUsage().heapUsed, process.execArgv.length,"
        " process.uptime() < 5, require('process') === process);\n"
    ),
    "builtin modules": (
        "const os = require('os'), path = require('path'), assert = require('assert');\n"
        "const crypto = require('crypto');\nassert.strictEqual(1, 1);\n"
        "console.log(JSON.stringify(os.EOL), path.join('a', 'b'),"
        " crypto.createHash('md5').update('x').digest('hex'),"
        " require('node:util').format('%s', 1), typeof require('string_decoder').StringDecoder,"
        " require('buffer').Buffer === Buffer, require('console') === console);\n"
    ),
    "a failed assert": "require('assert').strictEqual(1, 2);\n",
    "a missing module, named at run time": (
        "try { require(['lo', 'dash'].join('')); } catch (e) { console.log(e.code); }\n"
        "const dir = './';\nrequire(dir + 'nope');\n"
    ),
    "top-level return": "console.log('a');\nreturn;\nconsole.log('b');\n",
    "a hashbang line": "#!/usr/bin/env node\nconsole.log('hashbang');\n",
    "writes to descriptors 1 and 2": (
        "const fs = require('fs');\nfs.writeFileSync(1, 'one\\n');\n"
        "fs.appendFileSync(1, Buffer.from('two\\n'));\nfs.writeSync(2, 'err\\n');\n"
        "fs.writeSync(process.stdout.fd, Buffer.from('three four\\n'), 6, 5);\n"
        "console.log('five');\n"
    ),
    "fs.promises.readFile": (
        "require('fs').promises.readFile('/dev/stdin', 'utf8')"
        ".then((d) => console.log(d.length));\n"
    ),
    "write callbacks and drain": (
        "process.stdout.write('a', () => console.log('cb'));\n"
        "console.log(process.stdout.write('x'.repeat(20000)));\n"
        "process.stdout.on('drain', () => console.log('drain'));\n"
    ),
    "stdout.end": "process.stdout.end('bye\\n');\n",
    "JSON.parse of nothing": "JSON.parse('');\n",
    "a redeclared binding": "let a = 1;\nlet a = 2;\nconsole.log(a);\n",
    "an invalid array length": "console.log('a');\nnew Array(-1);\n",
    "instanceof across builtins": (
        "try { require('fs').readFileSync('/nonexistent'); }"
        " catch (e) { console.log(e instanceof Error, e.code); }\n"
        "console.log(Buffer.from('a') instanceof Uint8Array, [] instanceof Array);\n"
    ),
    "exitCode of the wrong type": (
        "try { process.exitCode = 'abc'; } catch (e) { console.log(e.code); }\n"
    ),
    "exit with a string": "process.exit('3');\n",
    "process as an emitter": (
        "process.once('foo', (x) => console.log('foo', x));\nprocess.emit('foo', 1);\n"
        "process.emit('foo', 2);\nconsole.log(process.listenerCount('foo'));\n"
    ),
    "stdin paused": (
        "process.stdin.once('data', (c) => {\n"
        "  console.log('got', c.length);\n  process.stdin.pause();\n});\n"
    ),
    "an error thrown in an exit listener": (
        "process.on('exit', () => { throw new Error('in exit'); });\nconsole.log('x');\n"
    ),
    "exit inside an exit listener": (
        "process.on('exit', () => process.exit(6));\nconsole.log('x');\n"
    ),
    "process.env written": (
        "console.log(process.env.MY_VAR);\nprocess.env.MY_VAR = 'set';\n"
        "console.log(process.env.MY_VAR);\n"
    ),
    "a top-level var": (
        "var x = 1;\nfunction g() {}\nconsole.log(typeof globalThis.x, typeof globalThis.g);\n"
    ),
    "undeclared variables": ("for (i = 0; i < 3; i++) {}\nconsole.log(i, typeof globalThis.i);\n"),
    "sloppy this": "function f() { return this === globalThis; }\nconsole.log(f());\n",
}
BIG = "1 2 3 4 5 6 7 8 9\n" * 20000  # 360 KB: six 64 KiB chunks on a Node's stdin


@pytest.fixture(scope="module")
def node() -> None:
    need(shutil.which("node") is not None, "node is not installed")


RUNTIME = LocalRuntime()


def _score(
    code: str,
    tests: dict[str, Any],
    warm: bool = True,
    runtime: LocalRuntime = RUNTIME,
    limits: dict[str, Any] | None = None,
    **options: Any,
) -> verifiers.Result:
    verifier = verifiers.CodeVerifier(JavaScriptLanguage(warm=warm), runtime)
    return verifier.score(code, tests, limits=limits or {"timeout_s": 5}, **options)


def _pids(result: verifiers.Result) -> list[str]:
    return [t.actual.split()[0] for t in result.tests]


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_way_of_reading_stdin_works(node: None, reader: str) -> None:
    assert not node_per_test(READERS[reader])
    result = _score(READERS[reader], SUMS)
    assert result.status is verifiers.Status.PASSED, result.feedback


def test_one_process_serves_the_tests_and_none_sees_another(node: None) -> None:
    # The pid is the process's; the counter is the test's own global state.
    code = "globalThis.n = (globalThis.n || 0) + 1;\nconsole.log(process.pid + ' ' + n);\n"
    tests = {"inputs": INPUTS, "outputs": ["x\n"] * 3}
    warm = _score(code, tests, **ALL)
    assert len(set(_pids(warm))) == 1, [t.actual for t in warm.tests]
    assert all(t.actual.split()[1] == "1" for t in warm.tests)
    cold = _score(code, tests, warm=False, **ALL)
    assert len(set(_pids(cold))) == 3


def test_output_and_verdicts_are_those_of_a_node_per_test(node: None) -> None:
    # Every shape above: the same verdict and the same stdout as a Node started per test,
    # in the runner's first test and in a later one (a large input where it counts chunks).
    items = []
    for name, code in SHAPES.items():
        assert not node_per_test(code), name
        given = BIG if "chunk" in name or "await process" in name else INPUTS[0]
        items.append((name, code, given))

    async def run_all(warm: bool) -> list[verifiers.Result]:
        verifier = verifiers.CodeVerifier(JavaScriptLanguage(warm=warm), RUNTIME)
        gate = asyncio.Semaphore(2)

        async def one(code: str, given: str) -> verifiers.Result:
            tests = {
                "inputs": [given] * (2 if warm else 1),
                "outputs": ["3\n"] * (2 if warm else 1),
            }
            async with gate:
                return await verifier.ascore(code, tests, limits={"timeout_s": 5}, **ALL)

        return await asyncio.gather(*(one(code, given) for _, code, given in items))

    warm = run_sync(run_all(True))
    cold = run_sync(run_all(False))
    differ = []
    for (name, _, _), w, c in zip(items, warm, cold, strict=True):
        want = (c.tests[0].status.value, c.tests[0].actual)
        got = [(t.status.value, t.actual) for t in w.tests]
        if got != [want, want]:
            differ.append((name, got, want))
    assert not differ, differ


@pytest.mark.parametrize(
    ("name", "code", "status"),
    [
        ("wrong", "console.log(0)", "failed"),
        ("throws", "throw new Error('boom')", "runtime_error"),
        ("exits 1", "process.exit(1)", "runtime_error"),
        ("loops", "while (true) {}", "timeout"),
        ("an interval never cleared", "setInterval(() => {}, 1000);", "timeout"),
        ("redeclares", "let a = 1;\nlet a = 2;\nconsole.log(a)", "compile_error"),
        ("deep recursion", "const f = (n) => f(n + 1) + 1;\nf(0);", "runtime_error"),
        (
            "memory bomb",
            "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));",
            "memory_limit",
        ),
        ("output flood", "for (;;) require('fs').writeSync(1, 'x'.repeat(4096));", "output_limit"),
        ("stderr flood", "for (;;) require('fs').writeSync(2, 'x'.repeat(4096));", "output_limit"),
    ],
)
def test_verdicts_match_a_node_per_test(node: None, name: str, code: str, status: str) -> None:
    # 256 MB: the memory bomb meets its limit well inside the time limit on a busy host.
    limits = {"timeout_s": 2, "memory_mb": 256}
    warm = _score(code, SUMS, limits=limits)
    cold = _score(code, SUMS, warm=False, limits=limits)
    assert warm.status.value == status, (name, warm.feedback)
    assert [t.status for t in warm.tests] == [t.status for t in cold.tests], name


def test_a_test_that_ends_the_runner_costs_only_itself(node: None) -> None:
    # Out of time, out of memory, out of output, a crash of the runner: the test fails as
    # it would alone, the runner goes with it, and the next test gets a new one. The memory
    # limit is small so that filling it is quick; no time budget, so that every test runs.
    code = (
        "const d = require('fs').readFileSync(0, 'utf8').trim();\n"
        "if (d === 'loop') for (;;) {}\n"
        "if (d === 'memory') { const a = []; for (;;) a.push(new Array(1e6).fill(1)); }\n"
        "if (d === 'flood') for (;;) process.stdout.write('x'.repeat(65536));\n"
        "if (d === 'abort') process.abort();\n"
        "console.log(process.pid, d);\n"
    )
    names = ["a", "loop", "b", "memory", "c", "flood", "d", "abort", "e"]
    tests = {"inputs": [f"{n}\n" for n in names], "outputs": [f"{n}\n" for n in names]}
    limits = {"timeout_s": 1, "memory_mb": 128, "budget_timeouts": None}
    result = _score(code, tests, limits=limits, **ALL)
    statuses = [t.status.value for t in result.tests]
    assert statuses == [
        "failed",
        "timeout",
        "failed",
        "memory_limit",
        "failed",
        "output_limit",
        "failed",
        "runtime_error",
        "failed",
    ], result.feedback
    pids = [result.tests[i].actual.split()[0] for i in (0, 2, 4, 6, 8)]
    assert len(set(pids)) == 5, pids  # a new runner after each


def test_what_a_test_changes_is_put_back_for_the_next(node: None) -> None:
    # Globals, builtins' properties and prototypes, settings of shared modules, the
    # environment, timers left running: each test sees them as the first did, in the same
    # runner (they were put back, not left to a new process).
    seen = (
        "const seen = [typeof [].sum, typeof ''.rev, typeof Math.gcd, ({}).polluted,"
        " typeof counter, typeof leaked, require('util').inspect.defaultOptions.depth,"
        " Error.stackTraceLimit, process.env.MARK, typeof JSON.fancy, Buffer.poolSize,"
        " require('events').defaultMaxListeners, typeof console.shout].join(' ');\n"
    )
    changes = (
        "Math.gcd = (a, b) => (b ? Math.gcd(b, a % b) : a);\n"
        "counter = 1;\n"
        "require('util').inspect.defaultOptions.depth = 0;\n"
        "Error.stackTraceLimit = 1;\n"
        "process.env.MARK = 'x';\n"
        "JSON.fancy = 1;\n"
        "Buffer.poolSize = 16384;\n"
        "require('events').defaultMaxListeners = 1;\n"
        "console.shout = 1;\n"
        "setTimeout(() => console.log('late'), 300);\n"
        "setInterval(() => console.log('leftover'), 1).unref();\n"
        "console.log(process.pid, seen);\n"
        "process.exit(0);\n"
    )
    # Named prototypes: every recorded object is compared; through names made at run
    # time: the builtins programs write to are compared every time.
    named = (
        "Array.prototype.sum = function () { return 1; };\n"
        "String.prototype.rev = function () { return 'r'; };\n"
        "Object.prototype.polluted = 'yes';\n"
        "globalThis.leaked = 1;\n"
    )
    computed = (
        "const P = ['proto', 'type'].join('');\n"
        "Array[P].sum = function () { return 1; };\n"
        "String[P].rev = function () { return 'r'; };\n"
        "Object[P].polluted = 'yes';\n"
        "leaked = 1;\n"
    )
    tests = {"inputs": ["a\n", "b\n", "c\n"], "outputs": ["x\n"] * 3}
    for extra in (named, computed):
        result = _score(seen + extra + changes, tests, **ALL)
        lines = [t.actual for t in result.tests]
        assert len(set(_pids(result))) == 1, lines
        assert len({line.split(" ", 1)[1] for line in lines}) == 1, lines
        assert not any("late" in line or "leftover" in line for line in lines), lines


def test_the_runner_serves_on_after_exits_and_errors(node: None) -> None:
    # However a test ends (its loop empty, process.exit in a callback, an uncaught
    # exception or rejection, a syntax error in JSON.parse), the next runs in the same Node.
    code = (
        "console.log(process.pid);\n"
        "const d = require('fs').readFileSync(0, 'utf8').trim();\n"
        "if (d === 'tick') process.nextTick(() => process.exit(0));\n"
        "if (d === 'end') process.stdin.resume().on('end', () => process.exit(3));\n"
        "if (d === 'throw') setTimeout(() => { throw new Error('x'); }, 1);\n"
        "if (d === 'reject') Promise.reject(new Error('y'));\n"
        "if (d === 'json') JSON.parse('');\n"
        "setImmediate(() => {});\n"
    )
    names = ["done", "tick", "end", "throw", "reject", "json", "done"]
    tests = {"inputs": [f"{n}\n" for n in names], "outputs": ["x\n"] * len(names)}
    result = _score(code, tests, **ALL)
    assert len(set(_pids(result))) == 1, [t.actual for t in result.tests]
    statuses = [t.status.value for t in result.tests]
    assert statuses == ["failed", "failed", "runtime_error"] + ["runtime_error"] * 3 + ["failed"], (
        result.feedback
    )


def test_what_cannot_be_put_back_retires_the_runner(node: None) -> None:
    # A frozen prototype cannot be thawed: the next test gets a new runner (and an
    # Array.prototype it can extend, as a Node of its own would).
    code = (
        "console.log(process.pid, Object.isFrozen(Array.prototype));\n"
        "Object.freeze(Array.prototype);\n"
    )
    tests = {"inputs": ["a\n", "b\n"], "outputs": ["x\n"] * 2}
    result = _score(code, tests, **ALL)
    assert len(set(_pids(result))) == 2, [t.actual for t in result.tests]
    assert all(t.actual.split()[1] == "false" for t in result.tests)


def test_a_program_that_tampers_with_the_builtins_the_runner_uses_fails_only_itself(
    node: None,
) -> None:
    # The first test replaces what a runner would use to read requests, frame its reply
    # and restore the builtins; its own answer and the later tests' are still judged.
    tamper = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        "if (d === 'tamper') {\n"
        "  const P = ['proto', 'type'].join('');\n"
        "  const bad = () => { throw new Error('tampered'); };\n"
        "  for (const k of ['stringify', 'parse']) JSON[k] = bad;\n"
        "  for (const k of ['concat', 'from', 'alloc', 'byteLength']) Buffer[k] = bad;\n"
        "  for (const k of ['apply', 'ownKeys', 'defineProperty', 'getOwnPropertyDescriptor',"
        " 'deleteProperty']) Reflect[k] = bad;\n"
        "  for (const k of ['call', 'apply', 'bind']) Function[P][k] = bad;\n"
        "  for (const k of ['push', 'join', 'slice', 'map']) Array[P][k] = bad;\n"
        "  for (const k of ['split', 'slice', 'startsWith']) String[P][k] = bad;\n"
        "  Object[P].toJSON = bad;\n"
        "  Object.defineProperty(Object[P], 'value', { get: bad, configurable: true });\n"
        "  Object.defineProperty(Object[P], 'get', { get: bad, configurable: true });\n"
        "}\n"
        "fs.writeSync(1, d + '\\n');\n"
    )
    tests = {"inputs": ["tamper\n", "b\n", "c\n"], "outputs": ["tamper\n", "b\n", "c\n"]}
    result = _score(tamper, tests, **ALL)
    assert [t.status for t in result.tests][1:] == [PASSED, PASSED], result.feedback
    assert result.tests[0].status is not verifiers.Status.SANDBOX_ERROR, result.feedback


def test_a_later_tests_input_is_not_there_to_read(node: None) -> None:
    # The next request is sent after this test's reply: reading the request channel
    # waits for it, past the time limit, and the next test runs in a new runner.
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        "if (d === 'peek') { const b = Buffer.alloc(64); fs.readSync(5, b, 0, 64, null); }\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["peek\n", "b\n"], "outputs": ["peek\n", "b\n"]}
    result = _score(code, tests, limits={"timeout_s": 1, "budget_timeouts": None}, **ALL)
    assert [t.status.value for t in result.tests] == ["timeout", "passed"], result.feedback


@pytest.mark.parametrize(
    "code",
    [
        "while (true) process.stdout.write('x'.repeat(65536));",
        "for (;;) console.log('x'.repeat(4096));",
    ],
)
def test_output_is_counted_as_it_is_written(node: None, code: str) -> None:
    # The cap is counted at each write: a busy loop of writes is over the output limit. A
    # Node of its own writes what its pipe takes and queues the rest in memory until the
    # loop yields, which it never does: it fails too, out of memory (or of time).
    limits = {"timeout_s": 2, "memory_mb": 256}
    result = _score(code, SUMS, limits=limits)
    assert result.status is verifiers.Status.OUTPUT_LIMIT, result.feedback
    cold = _score(code, SUMS, warm=False, limits=limits)
    assert cold.status in (verifiers.Status.MEMORY_LIMIT, verifiers.Status.TIMEOUT), cold.feedback


@pytest.mark.parametrize(
    "code",
    [
        "require('child_process').execSync('true');\nconsole.log(1);\n",
        "const { Worker } = require('worker_threads');\nconsole.log(1);\n",
        "import fs from 'fs';\nconsole.log(1);\n",
        "const x = await Promise.resolve(1);\nconsole.log(x);\n",
        "process.stdout._handle.setBlocking(true);\nconsole.log(1);\n",
        "require('fs').createReadStream('/dev/stdin').on('data', () => {});\nconsole.log(1);\n",
        "require('fs').writeFileSync('/dev/stdout', '1\\n');\n",
        "const lodash = require('lodash');\nconsole.log(1);\n",
        "const self = require('./solution');\nconsole.log(1);\n",
    ],
)
def test_process_wide_state_runs_a_node_per_test(node: None, code: str) -> None:
    assert node_per_test(code)
    language, spec = JavaScriptLanguage(), parse_tests(SUMS)
    program = language.build_program(code, spec, [0, 1, 2], Limits())
    assert all(t.step.warm_argv is None for t in program.tests)
    # A program without them gets a runner, unless it has one test only.
    plain = language.build_program("console.log(1);", spec, [0, 1, 2], Limits())
    assert all(t.step.warm_argv is not None for t in plain.tests)
    alone = language.build_program("console.log(1);", spec, [2], Limits())
    assert all(t.step.warm_argv is None for t in alone.tests)


def test_a_program_that_kills_its_runner_fails_only_that_test(node: None) -> None:
    code = (
        "const d = require('fs').readFileSync(0, 'utf8').trim();\n"
        "if (d === 'die') process.kill(process.pid, 'SIGKILL');\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["a\n", "die\n", "b\n"], "outputs": ["a\n", "die\n", "b\n"]}
    result = _score(code, tests, **ALL)
    assert [t.status.value for t in result.tests] == ["passed", "runtime_error", "passed"]


def test_a_reply_forged_ahead_is_never_a_later_tests_answer(node: None) -> None:
    # The first test writes, on the runner's reply channel, a complete reply that carries
    # the second test's right answer, then answers its own test. The second test's own
    # run prints a wrong answer: it must fail.
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        "if (d === 'first') {\n"
        "  const out = Buffer.from('second\\n');\n"
        "  const head = Buffer.from(JSON.stringify({ exit_code: 0, stdout_bytes: out.length,"
        " stderr_bytes: 0 }));\n"
        "  const len = Buffer.alloc(4);\n"
        "  len.writeUInt32BE(head.length, 0);\n"
        "  fs.writeSync(6, Buffer.concat([len, head, out]));\n"
        "  console.log('first');\n"
        "} else {\n"
        "  console.log('wrong');\n"
        "}\n"
    )
    tests = {"inputs": ["first\n", "second\n"], "outputs": ["first\n", "second\n"]}
    result = _score(code, tests, **ALL)
    # Never a pass; whether the second run reads as a wrong answer or as a crash depends
    # on when the first test's own reply lands, which the program decides.
    assert result.tests[1].status not in (PASSED, verifiers.Status.SANDBOX_ERROR), result.feedback
    assert result.status is not verifiers.Status.PASSED


@pytest.mark.parametrize("garbage", ["'x'", "Buffer.from([0, 0, 0, 2, 123, 125])"])
def test_bytes_on_the_reply_channel_are_the_programs_crash(node: None, garbage: str) -> None:
    # A stray byte, or a whole well-formed frame of its own, written beside the runner's
    # reply: the runner's answer for that test is then garbage (the program's crash), and
    # the next test is served by a new runner.
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        f"if (d === 'meddle') fs.writeSync(6, {garbage});\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["meddle\n", "b\n"], "outputs": ["meddle\n", "b\n"]}
    result = _score(code, tests, **ALL)
    first, second = (t.status for t in result.tests)
    assert first not in (verifiers.Status.PASSED, verifiers.Status.SANDBOX_ERROR), result.feedback
    assert second is verifiers.Status.PASSED, result.feedback


def test_a_closed_reply_channel_fails_only_that_test(node: None) -> None:
    code = (
        "const fs = require('fs');\n"
        "const d = fs.readFileSync(0, 'utf8').trim();\n"
        "if (d === 'close') fs.closeSync(6);\n"
        "console.log(d);\n"
    )
    tests = {"inputs": ["a\n", "close\n", "b\n"], "outputs": ["a\n", "close\n", "b\n"]}
    result = _score(code, tests, **ALL)
    statuses = [t.status.value for t in result.tests]
    assert statuses[0] == "passed" and statuses[2] == "passed", result.feedback
    assert statuses[1] != "passed"
    assert statuses[1] != "sandbox_error"


def test_a_process_left_behind_is_killed_with_the_runner(node: None) -> None:
    # `child_process` named outright gets a Node per test; made up at run time it loads in
    # the runner, which retires after the test, and the sleeping child goes with it.
    code = (
        "const cp = require(['child', 'process'].join('_'));\n"
        "const d = require('fs').readFileSync(0, 'utf8').trim();\n"
        "const opts = { detached: true, stdio: 'ignore' };\n"
        "if (d === 'spawn') cp.spawn('sleep', ['30'], opts).unref();\n"
        "console.log(process.pid);\n"
    )
    assert not node_per_test(code)
    tests = {"inputs": ["spawn\n", "after\n"], "outputs": ["x\n", "x\n"]}
    result = _score(code, tests, runtime=LocalRuntime(), **ALL)
    first, second = (t.actual.strip() for t in result.tests)
    assert first.isdigit() and second.isdigit(), result.feedback
    assert first != second  # the runner went with the sleeping child; a new one served
