"""The hostile-program battery: attacks on the sandbox and the host, in every language.

Each :class:`Hostile` program is a stdin/stdout program that prints ``PWNED`` when its
attack worked and something else when it did not; its test expects ``PWNED``, so a pass
means an escape. Some attacks have no such witness inside the sandbox (a daemon meant to
outlive its test, writes aimed at host paths); those print ``ok`` and the host-side checks
of the test suite decide (no process left, no file on the host).

Programs use placeholders the test suite fills in: ``@@PORT@@`` (a listener on the host's
127.0.0.1), ``@@HOST_PID@@`` (a host process), ``@@ENV@@`` (an environment variable set in
the parent), ``@@HOME_FILE@@`` and ``@@CWD_FILE@@`` (canary files in the parent's home and
working directory), ``@@HOST_FILE@@`` and ``@@HOST_DIR@@`` (a canary file and a directory
under the host's /tmp), ``@@HOME@@`` (the parent's home).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifiers.limits import Limits
from verifiers.results import Status

#: Every attack, in the order of the security issue.
HOSTILE_KINDS = (
    "fork_bomb",
    "heap_bomb",
    "stack_bomb",
    "disk_fill",
    "stdout_flood",
    "stderr_flood",
    "stdin_forever",
    "ignore_sigterm",
    "sleep",
    "daemon",
    "signal_others",
    "network_local",
    "network_outside",
    "secret_env",
    "secret_files",
    "proc_environ",
    "etc_shadow",
    "write_outside",
    "symlink",
    "close_stdout",
    "binary_output",
    "deep_recursion",
    "new_namespace",
)

PWNED = {"inputs": [""], "outputs": ["PWNED\n"]}
OK = {"inputs": [""], "outputs": ["ok\n"]}
_QUICK = Limits(timeout_s=2, memory_mb=256, disk_mb=64)
_NET = Limits(timeout_s=6, memory_mb=256)
_FLOOD = Limits(timeout_s=5, memory_mb=256, max_output_bytes=1 << 20)
_BOMB = Limits(timeout_s=3, memory_mb=256, max_processes=32)
# A memory bomb needs time to reach its limit: filling 256 MB takes a bare CPython about
# 1 s and takes it 2.2 s under gVisor, whose page faults cost more, so a 2 s limit raced
# the runtime's fault cost instead of testing the limit. A memory limit that fails to
# hold still shows here, as a timeout, which no memory bomb is allowed.
_FILL = Limits(timeout_s=10, memory_mb=256, disk_mb=64)

#: Verdicts each attack may get (a pass only where the program is innocent by design).
EXPECTED: dict[str, frozenset[Status]] = {
    "fork_bomb": frozenset({Status.RUNTIME_ERROR, Status.TIMEOUT, Status.MEMORY_LIMIT}),
    "heap_bomb": frozenset({Status.MEMORY_LIMIT}),
    "stack_bomb": frozenset({Status.RUNTIME_ERROR, Status.MEMORY_LIMIT}),
    "disk_fill": frozenset({Status.FAILED, Status.RUNTIME_ERROR, Status.OUTPUT_LIMIT}),
    "stdout_flood": frozenset({Status.OUTPUT_LIMIT}),
    "stderr_flood": frozenset({Status.OUTPUT_LIMIT}),
    "stdin_forever": frozenset({Status.TIMEOUT}),
    "ignore_sigterm": frozenset({Status.TIMEOUT}),
    "sleep": frozenset({Status.TIMEOUT}),
    "daemon": frozenset({Status.PASSED}),
    "signal_others": frozenset({Status.FAILED}),
    "network_local": frozenset({Status.FAILED}),
    "network_outside": frozenset({Status.FAILED}),
    "secret_env": frozenset({Status.FAILED}),
    "secret_files": frozenset({Status.FAILED}),
    "proc_environ": frozenset({Status.FAILED}),
    "etc_shadow": frozenset({Status.FAILED}),
    "write_outside": frozenset({Status.PASSED}),
    "symlink": frozenset({Status.FAILED}),
    "close_stdout": frozenset({Status.PASSED}),
    "binary_output": frozenset({Status.FAILED}),
    "deep_recursion": frozenset({Status.RUNTIME_ERROR, Status.MEMORY_LIMIT}),
    "new_namespace": frozenset({Status.FAILED}),
}

#: Host paths the write attacks aim at; none may exist on the host afterwards.
WRITE_TARGETS = (
    "@@HOST_DIR@@/pwned",
    "@@HOME@@/verifiers-pwned",
    "/etc/verifiers-pwned",
    "/usr/verifiers-pwned",
    "/opt/verifiers-pwned",
)
_SECRET_FILES = ("@@HOME_FILE@@", "@@CWD_FILE@@", "@@HOST_FILE@@")
_LINK_TARGETS = ("/etc/shadow", "@@HOST_FILE@@", "@@HOME_FILE@@", "/proc/1/root/etc/shadow")
_DAEMON = "sleep 30; echo x > /tmp/daemon-was-here"


@dataclass(frozen=True)
class Hostile:
    """One attack in one language."""

    kind: str
    language: str
    code: str
    tests: dict[str, list[str]] = field(default_factory=lambda: dict(PWNED))
    limits: Limits = _QUICK

    @property
    def expected(self) -> frozenset[Status]:
        """The verdicts this attack may get."""
        return EXPECTED[self.kind]


def _strings(items: tuple[str, ...], quote: str = '"') -> str:
    return ", ".join(f"{quote}{item}{quote}" for item in items)


def _limits(kind: str) -> Limits:
    if kind in ("stdout_flood", "stderr_flood"):
        return _FLOOD
    if kind == "fork_bomb":
        return _BOMB
    if kind in ("heap_bomb", "stack_bomb"):
        return _FILL
    if kind in ("network_local", "network_outside"):
        return _NET
    return _QUICK


def _battery(language: str, programs: dict[str, str]) -> list[Hostile]:
    missing = set(HOSTILE_KINDS) - set(programs)
    assert not missing, f"{language} lacks {sorted(missing)}"
    out = []
    for kind in HOSTILE_KINDS:
        tests = dict(OK) if EXPECTED[kind] == {Status.PASSED} else dict(PWNED)
        out.append(Hostile(kind, language, programs[kind], tests, _limits(kind)))
    return out


# --- Python ----------------------------------------------------------------------------------

_PY_VERDICT = 'print("PWNED" if hit else "contained")\n'
_PY_CONNECT = (
    "import socket\nhit = False\ntry:\n"
    "    socket.create_connection(({addr}), timeout=2).close()\n    hit = True\n"
    "except OSError:\n    pass\n" + _PY_VERDICT
)
_PY_READS = (
    "hit = False\nfor path in (PATHS,):\n    try:\n        open(path, 'rb').read()\n"
    "        hit = True\n    except OSError:\n        pass\n" + _PY_VERDICT
)

PYTHON_HOSTILE = _battery(
    "python",
    {
        "fork_bomb": "import os\nwhile True:\n    os.fork()",
        "heap_bomb": "keep = []\nwhile True:\n    keep.append(b'x' * 10 ** 7)",
        "stack_bomb": (
            "import sys\nsys.setrecursionlimit(10 ** 8)\n"
            "def f(n):\n    pad = [n] * 4096\n    return f(n + 1) + pad[0]\nf(0)"
        ),
        "disk_fill": (
            "chunk = b'x' * (1 << 20)\nn = 0\nfor path in ('/sandbox/fill', '/tmp/fill'):\n"
            "    try:\n        with open(path, 'wb') as f:\n            for _ in range(100000):\n"
            "                f.write(chunk)\n                n += 1\n    except OSError:\n"
            "        pass\nhit = n >= 4096\n" + _PY_VERDICT
        ),
        "stdout_flood": "while True:\n    print('x' * 10000)",
        "stderr_flood": "import sys\nwhile True:\n    sys.stderr.write('x' * 10000)",
        "stdin_forever": "import sys\nwhile True:\n    sys.stdin.read()",
        "ignore_sigterm": (
            "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass"
        ),
        "sleep": "import time\ntime.sleep(600)",
        "daemon": (
            "import subprocess\n"
            f"subprocess.Popen(['sh', '-c', '{_DAEMON}'], start_new_session=True,\n"
            "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nprint('ok')"
        ),
        "signal_others": (
            "import os, signal\nhit = False\ntry:\n    os.kill(@@HOST_PID@@, signal.SIGKILL)\n"
            "    hit = True\nexcept OSError:\n    pass\ntry:\n    os.kill(-1, signal.SIGKILL)\n"
            "except OSError:\n    pass\n" + _PY_VERDICT
        ),
        "network_local": _PY_CONNECT.format(addr="'127.0.0.1', @@PORT@@"),
        "network_outside": _PY_CONNECT.format(addr="'1.1.1.1', 80"),
        "secret_env": "import os\nhit = '@@ENV@@' in os.environ\n" + _PY_VERDICT,
        "secret_files": _PY_READS.replace("PATHS", _strings(_SECRET_FILES)),
        "proc_environ": (
            "import os\nhit = False\nfor pid in ['1', 'self'] + os.listdir('/proc'):\n"
            "    try:\n        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
            "        hit = hit or b'@@ENV@@' in data\n"
            "    except OSError:\n        pass\n" + _PY_VERDICT
        ),
        "etc_shadow": _PY_READS.replace("PATHS", "'/etc/shadow'"),
        "write_outside": (
            f"import os\nfor path in ({_strings(WRITE_TARGETS)}):\n    try:\n"
            "        os.makedirs(os.path.dirname(path), exist_ok=True)\n"
            "        open(path, 'w').write('x')\n    except OSError:\n        pass\nprint('ok')"
        ),
        "symlink": (
            f"import os\nhit = False\nfor n, target in enumerate(({_strings(_LINK_TARGETS)})):\n"
            "    link = f'/sandbox/link{n}'\n    try:\n        os.symlink(target, link)\n"
            "        open(link, 'rb').read()\n        hit = True\n    except OSError:\n"
            "        pass\n" + _PY_VERDICT
        ),
        "close_stdout": "import os, time\nprint('ok', flush=True)\nos.close(1)\ntime.sleep(0.1)",
        "binary_output": "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x00\\x80\\xc3(')",
        "deep_recursion": "def f(n):\n    return f(n + 1) + 1\nf(0)",
        "new_namespace": (
            "import subprocess\nhit = subprocess.run(['unshare', '-Ur', 'true'],\n"
            "                     capture_output=True).returncode == 0\n" + _PY_VERDICT
        ),
    },
)


# --- JavaScript ------------------------------------------------------------------------------

_JS_VERDICT = "console.log(hit ? 'PWNED' : 'contained');\n"
_JS_CONNECT = (
    "const net = require('net');\nconst s = net.connect({{ host: '{host}', port: {port} }});\n"
    "s.setTimeout(2000);\ns.on('connect', () => {{ console.log('PWNED'); s.destroy(); }});\n"
    "s.on('error', () => console.log('contained'));\n"
    "s.on('timeout', () => {{ console.log('contained'); s.destroy(); }});\n"
)
_JS_READS = (
    "const fs = require('fs');\nlet hit = false;\nfor (const p of [PATHS]) {\n"
    "  try { fs.readFileSync(p); hit = true; } catch (e) {}\n}\n" + _JS_VERDICT
)

JAVASCRIPT_HOSTILE = _battery(
    "javascript",
    {
        "fork_bomb": (
            "const cp = require('child_process');\n"
            "for (;;) cp.execFileSync('sh', ['-c', 'sleep 100 &'], { stdio: 'ignore' });"
        ),
        "heap_bomb": "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));",
        "stack_bomb": (
            "function f(n, ...pad) { return f(n + 1, ...new Array(1000).fill(n)) + 1; }\nf(0);"
        ),
        "disk_fill": (
            "const fs = require('fs');\nconst chunk = Buffer.alloc(1 << 20, 120);\nlet n = 0;\n"
            "for (const p of ['/sandbox/fill', '/tmp/fill']) {\n  try {\n"
            "    const fd = fs.openSync(p, 'w');\n"
            "    for (let i = 0; i < 100000; i++) { fs.writeSync(fd, chunk); n++; }\n"
            "  } catch (e) {}\n}\nconst hit = n >= 4096;\n" + _JS_VERDICT
        ),
        "stdout_flood": (
            "const fs = require('fs');\nconst s = 'x'.repeat(10000);\n"
            "while (true) fs.writeSync(1, s);"
        ),
        "stderr_flood": (
            "const fs = require('fs');\nconst s = 'x'.repeat(10000);\n"
            "while (true) fs.writeSync(2, s);"
        ),
        "stdin_forever": (
            "const fs = require('fs');\nconst b = Buffer.alloc(4096);\n"
            "for (;;) { try { fs.readSync(0, b, 0, 4096, null); } catch (e) {} }"
        ),
        "ignore_sigterm": "process.on('SIGTERM', () => {});\nfor (;;) {}",
        "sleep": "setTimeout(() => {}, 600000);",
        "daemon": (
            f"require('child_process').spawn('sh', ['-c', '{_DAEMON}'],\n"
            "  { detached: true, stdio: 'ignore' }).unref();\nconsole.log('ok');"
        ),
        "signal_others": (
            "let hit = false;\ntry { process.kill(@@HOST_PID@@, 'SIGKILL'); hit = true; } "
            "catch (e) {}\ntry { process.kill(-1, 'SIGKILL'); } catch (e) {}\n" + _JS_VERDICT
        ),
        "network_local": _JS_CONNECT.format(host="127.0.0.1", port="@@PORT@@"),
        "network_outside": _JS_CONNECT.format(host="1.1.1.1", port="80"),
        "secret_env": "const hit = process.env['@@ENV@@'] !== undefined;\n" + _JS_VERDICT,
        "secret_files": _JS_READS.replace("PATHS", _strings(_SECRET_FILES, "'")),
        "proc_environ": (
            "const fs = require('fs');\nlet hit = false;\n"
            "for (const pid of ['1', 'self', ...fs.readdirSync('/proc')]) {\n"
            "  try { hit = hit || fs.readFileSync(`/proc/${pid}/environ`).includes('@@ENV@@'); }"
            " catch (e) {}\n}\n" + _JS_VERDICT
        ),
        "etc_shadow": _JS_READS.replace("PATHS", "'/etc/shadow'"),
        "write_outside": (
            "const fs = require('fs');\nconst path = require('path');\n"
            f"for (const p of [{_strings(WRITE_TARGETS, chr(39))}]) {{\n"
            "  try { fs.mkdirSync(path.dirname(p), { recursive: true }); "
            "fs.writeFileSync(p, 'x'); } catch (e) {}\n}\nconsole.log('ok');"
        ),
        "symlink": (
            "const fs = require('fs');\nlet hit = false;\n"
            f"[{_strings(_LINK_TARGETS, chr(39))}].forEach((t, n) => {{\n"
            "  try { fs.symlinkSync(t, `/sandbox/link${n}`); "
            "fs.readFileSync(`/sandbox/link${n}`); hit = true; } catch (e) {}\n});\n" + _JS_VERDICT
        ),
        "close_stdout": (
            "const fs = require('fs');\nfs.writeSync(1, 'ok\\n');\nfs.closeSync(1);\n"
            "setTimeout(() => {}, 100);"
        ),
        "binary_output": "process.stdout.write(Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28]));",
        "deep_recursion": "function f(n) { return f(n + 1) + 1; }\nf(0);",
        "new_namespace": (
            "let hit = false;\ntry {\n  require('child_process').execFileSync('unshare', "
            "['-Ur', 'true'], { stdio: 'ignore' });\n  hit = true;\n} catch (e) {}\n" + _JS_VERDICT
        ),
    },
)


# --- Go --------------------------------------------------------------------------------------

_GO_VERDICT = (
    '    if hit {\n        fmt.Println("PWNED")\n    } else {\n'
    '        fmt.Println("contained")\n    }\n}\n'
)


def _go(imports: tuple[str, ...], body: str) -> str:
    block = "\n".join(f'    "{i}"' for i in imports)
    return f"package main\n\nimport (\n{block}\n)\n\n{body}"


_GO_CONNECT = _go(
    ("fmt", "net", "time"),
    'func main() {\n    hit := false\n    if c, err := net.DialTimeout("tcp", "{addr}", '
    "2*time.Second); err == nil {\n        c.Close()\n        hit = true\n    }\n" + _GO_VERDICT,
)
_GO_READS = _go(
    ("fmt", "os"),
    "func main() {\n    hit := false\n    for _, p := range []string{PATHS} {\n"
    "        if _, err := os.ReadFile(p); err == nil {\n            hit = true\n        }\n"
    "    }\n" + _GO_VERDICT,
)

GO_HOSTILE = _battery(
    "go",
    {
        "fork_bomb": _go(
            ("os/exec",),
            'func main() {\n    for {\n        if err := exec.Command("sleep", "100").Start(); '
            "err != nil {\n            panic(err)\n        }\n    }\n}\n",
        ),
        "heap_bomb": (
            "package main\n\nfunc main() {\n    var keep [][]byte\n    for {\n"
            "        keep = append(keep, make([]byte, 1<<20))\n        keep[len(keep)-1][0] = 1\n"
            "    }\n}\n"
        ),
        "stack_bomb": (
            "package main\n\nfunc f(n int) int {\n    var pad [4096]byte\n    pad[n%4096] = 1\n"
            "    return f(n+1) + int(pad[0])\n}\n\nfunc main() {\n    println(f(0))\n}\n"
        ),
        "disk_fill": _go(
            ("fmt", "os"),
            "func main() {\n    chunk := make([]byte, 1<<20)\n    n := 0\n"
            '    for _, path := range []string{"/sandbox/fill", "/tmp/fill"} {\n'
            "        f, err := os.Create(path)\n        if err != nil {\n            continue\n"
            "        }\n        for i := 0; i < 100000; i++ {\n"
            "            if _, err := f.Write(chunk); err != nil {\n                break\n"
            "            }\n            n++\n        }\n        f.Close()\n    }\n"
            "    hit := n >= 4096\n" + _GO_VERDICT,
        ),
        "stdout_flood": _go(
            ("os", "strings"),
            'func main() {\n    s := []byte(strings.Repeat("x", 10000))\n    for {\n'
            "        if _, err := os.Stdout.Write(s); err != nil {\n            return\n"
            "        }\n    }\n}\n",
        ),
        "stderr_flood": _go(
            ("os", "strings"),
            'func main() {\n    s := []byte(strings.Repeat("x", 10000))\n    for {\n'
            "        if _, err := os.Stderr.Write(s); err != nil {\n            return\n"
            "        }\n    }\n}\n",
        ),
        "stdin_forever": _go(
            ("os",),
            "func main() {\n    buf := make([]byte, 4096)\n    for {\n"
            "        os.Stdin.Read(buf)\n    }\n}\n",
        ),
        "ignore_sigterm": _go(
            ("os/signal", "syscall"),
            "func main() {\n    signal.Ignore(syscall.SIGTERM)\n    for {\n    }\n}\n",
        ),
        "sleep": _go(("time",), "func main() {\n    time.Sleep(600 * time.Second)\n}\n"),
        "daemon": _go(
            ("fmt", "os/exec", "syscall"),
            f'func main() {{\n    cmd := exec.Command("sh", "-c", "{_DAEMON}")\n'
            "    cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}\n    cmd.Start()\n"
            '    fmt.Println("ok")\n}\n',
        ),
        "signal_others": _go(
            ("fmt", "syscall"),
            "func main() {\n    hit := syscall.Kill(@@HOST_PID@@, syscall.SIGKILL) == nil\n"
            "    syscall.Kill(-1, syscall.SIGKILL)\n" + _GO_VERDICT,
        ),
        "network_local": _GO_CONNECT.replace("{addr}", "127.0.0.1:@@PORT@@"),
        "network_outside": _GO_CONNECT.replace("{addr}", "1.1.1.1:80"),
        "secret_env": _go(
            ("fmt", "os"),
            'func main() {\n    _, hit := os.LookupEnv("@@ENV@@")\n' + _GO_VERDICT,
        ),
        "secret_files": _GO_READS.replace("PATHS", _strings(_SECRET_FILES)),
        "proc_environ": _go(
            ("fmt", "os", "strings"),
            "func main() {\n    hit := false\n"
            '    paths := []string{"/proc/1/environ", "/proc/self/environ"}\n'
            '    entries, _ := os.ReadDir("/proc")\n    for _, e := range entries {\n'
            '        paths = append(paths, "/proc/"+e.Name()+"/environ")\n    }\n'
            "    for _, p := range paths {\n"
            "        if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), "
            '"@@ENV@@") {\n            hit = true\n        }\n    }\n' + _GO_VERDICT,
        ),
        "etc_shadow": _GO_READS.replace("PATHS", '"/etc/shadow"'),
        "write_outside": _go(
            ("fmt", "os", "path/filepath"),
            f"func main() {{\n    for _, p := range []string{{{_strings(WRITE_TARGETS)}}} {{\n"
            "        os.MkdirAll(filepath.Dir(p), 0o755)\n"
            '        os.WriteFile(p, []byte("x"), 0o644)\n    }\n    fmt.Println("ok")\n}\n',
        ),
        "symlink": _go(
            ("fmt", "os"),
            f"func main() {{\n    hit := false\n    for i, t := range []string{{"
            f"{_strings(_LINK_TARGETS)}}} {{\n"
            '        link := fmt.Sprintf("/sandbox/link%d", i)\n        os.Symlink(t, link)\n'
            "        if _, err := os.ReadFile(link); err == nil {\n            hit = true\n"
            "        }\n    }\n" + _GO_VERDICT,
        ),
        "close_stdout": _go(
            ("fmt", "os", "time"),
            'func main() {\n    fmt.Println("ok")\n    os.Stdout.Close()\n'
            "    time.Sleep(100 * time.Millisecond)\n}\n",
        ),
        "binary_output": _go(
            ("os",),
            "func main() {\n    os.Stdout.Write([]byte{0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28})\n}\n",
        ),
        "deep_recursion": (
            "package main\n\nfunc f(n int) int {\n    return f(n+1) + 1\n}\n\n"
            "func main() {\n    println(f(0))\n}\n"
        ),
        "new_namespace": _go(
            ("fmt", "runtime", "syscall"),
            "func main() {\n    runtime.LockOSThread()\n"
            "    hit := syscall.Unshare(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS) == nil\n"
            + _GO_VERDICT,
        ),
    },
)


# --- Rust ------------------------------------------------------------------------------------

_RS_VERDICT = '    println!("{}", if hit { "PWNED" } else { "contained" });\n}\n'
_RS_CONNECT = (
    'fn main() {\n    let addr: std::net::SocketAddr = "{addr}".parse().unwrap();\n'
    "    let hit = std::net::TcpStream::connect_timeout(&addr, "
    "std::time::Duration::from_secs(2)).is_ok();\n" + _RS_VERDICT
)
_RS_READS = (
    "fn main() {\n    let mut hit = false;\n    for p in [PATHS] {\n"
    "        hit = hit || std::fs::read(p).is_ok();\n    }\n" + _RS_VERDICT
)
_RS_LIBC = (
    'extern "C" {\n    fn kill(pid: i32, sig: i32) -> i32;\n'
    "    fn signal(sig: i32, handler: usize) -> usize;\n    fn close(fd: i32) -> i32;\n}\n\n"
)

RUST_HOSTILE = _battery(
    "rust",
    {
        "fork_bomb": (
            'fn main() {\n    loop {\n        std::process::Command::new("sleep").arg("100")'
            ".spawn().unwrap();\n    }\n}\n"
        ),
        "heap_bomb": (
            "fn main() {\n    let mut keep: Vec<Vec<u8>> = Vec::new();\n"
            "    loop {\n        keep.push(vec![1u8; 1 << 20]);\n    }\n}\n"
        ),
        "stack_bomb": (
            "fn f(n: u64) -> u64 {\n    let pad = std::hint::black_box([n as u8; 4096]);\n"
            "    if n == u64::MAX {\n        return 0;\n    }\n"
            "    f(n + 1) + pad[(n % 4096) as usize] as u64\n}\n\n"
            'fn main() {\n    println!("{}", f(0));\n}\n'
        ),
        "disk_fill": (
            "use std::io::Write;\n\nfn main() {\n    let chunk = vec![b'x'; 1 << 20];\n"
            '    let mut n = 0;\n    for path in ["/sandbox/fill", "/tmp/fill"] {\n'
            "        if let Ok(mut f) = std::fs::File::create(path) {\n"
            "            for _ in 0..100000 {\n"
            "                if f.write_all(&chunk).is_err() {\n                    break;\n"
            "                }\n                n += 1;\n            }\n        }\n    }\n"
            "    let hit = n >= 4096;\n" + _RS_VERDICT
        ),
        "stdout_flood": (
            'use std::io::Write;\n\nfn main() {\n    let s = "x".repeat(10000);\n'
            "    let mut out = std::io::stdout();\n    loop {\n"
            "        if out.write_all(s.as_bytes()).is_err() {\n            break;\n        }\n"
            "    }\n}\n"
        ),
        "stderr_flood": (
            'use std::io::Write;\n\nfn main() {\n    let s = "x".repeat(10000);\n'
            "    let mut out = std::io::stderr();\n    loop {\n"
            "        if out.write_all(s.as_bytes()).is_err() {\n            break;\n        }\n"
            "    }\n}\n"
        ),
        "stdin_forever": (
            "use std::io::Read;\n\nfn main() {\n    let mut b = [0u8; 4096];\n"
            "    loop {\n        let _ = std::io::stdin().read(&mut b);\n    }\n}\n"
        ),
        "ignore_sigterm": _RS_LIBC
        + "fn main() {\n    unsafe {\n        signal(15, 1);\n    }\n    loop {}\n}\n",
        "sleep": "fn main() {\n    std::thread::sleep(std::time::Duration::from_secs(600));\n}\n",
        "daemon": (
            'fn main() {\n    let _ = std::process::Command::new("setsid")\n'
            f'        .args(["sh", "-c", "{_DAEMON}"])\n        .spawn();\n'
            '    println!("ok");\n}\n'
        ),
        "signal_others": _RS_LIBC
        + "fn main() {\n    let hit = unsafe { kill(@@HOST_PID@@, 9) } == 0;\n"
        "    unsafe {\n        kill(-1, 9);\n    }\n" + _RS_VERDICT,
        "network_local": _RS_CONNECT.replace("{addr}", "127.0.0.1:@@PORT@@"),
        "network_outside": _RS_CONNECT.replace("{addr}", "1.1.1.1:80"),
        "secret_env": (
            'fn main() {\n    let hit = std::env::var_os("@@ENV@@").is_some();\n' + _RS_VERDICT
        ),
        "secret_files": _RS_READS.replace("PATHS", _strings(_SECRET_FILES)),
        "proc_environ": (
            'fn main() {\n    let needle = b"@@ENV@@";\n'
            '    let mut paths = vec![String::from("/proc/1/environ"), '
            'String::from("/proc/self/environ")];\n'
            '    if let Ok(entries) = std::fs::read_dir("/proc") {\n'
            "        for e in entries.flatten() {\n"
            "            let name = e.file_name();\n"
            '            paths.push(format!("/proc/{}/environ", name.to_string_lossy()));\n'
            "        }\n    }\n    let mut hit = false;\n    for p in paths {\n"
            "        if let Ok(data) = std::fs::read(&p) {\n"
            "            hit = hit || data.windows(needle.len()).any(|w| w == needle);\n"
            "        }\n    }\n" + _RS_VERDICT
        ),
        "etc_shadow": _RS_READS.replace("PATHS", '"/etc/shadow"'),
        "write_outside": (
            f"fn main() {{\n    for p in [{_strings(WRITE_TARGETS)}] {{\n"
            "        if let Some(d) = std::path::Path::new(p).parent() {\n"
            "            let _ = std::fs::create_dir_all(d);\n        }\n"
            '        let _ = std::fs::write(p, b"x");\n    }\n    println!("ok");\n}\n'
        ),
        "symlink": (
            f"fn main() {{\n    let mut hit = false;\n    for (i, t) in [{_strings(_LINK_TARGETS)}]"
            ".iter().enumerate() {\n"
            '        let link = format!("/sandbox/link{}", i);\n'
            "        let _ = std::os::unix::fs::symlink(t, &link);\n"
            "        hit = hit || std::fs::read(&link).is_ok();\n    }\n" + _RS_VERDICT
        ),
        "close_stdout": _RS_LIBC
        + 'fn main() {\n    println!("ok");\n    unsafe {\n        close(1);\n    }\n'
        "    std::thread::sleep(std::time::Duration::from_millis(100));\n}\n",
        "binary_output": (
            "use std::io::Write;\n\nfn main() {\n"
            "    let _ = std::io::stdout().write_all(&[0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28]);\n}\n"
        ),
        "deep_recursion": (
            "fn f(n: u64) -> u64 {\n    if n == u64::MAX {\n        return 0;\n    }\n"
            "    std::hint::black_box(f(n + 1)) + 1\n}\n\n"
            'fn main() {\n    println!("{}", f(0));\n}\n'
        ),
        "new_namespace": (
            'extern "C" {\n    fn unshare(flags: i32) -> i32;\n}\n\n'
            "fn main() {\n    let hit = unsafe { unshare(0x10000000) } == 0;\n" + _RS_VERDICT
        ),
    },
)

# --- C ---------------------------------------------------------------------------------------

_C_HEAD = (
    "#define _GNU_SOURCE\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <unistd.h>\n"
)
_C_VERDICT = '    puts(hit ? "PWNED" : "contained");\n    return 0;\n}\n'
_C_READS = (
    _C_HEAD + "int main(void) {\n    const char *paths[] = {PATHS};\n    int hit = 0;\n"
    "    for (unsigned i = 0; i < sizeof paths / sizeof *paths; i++) {\n"
    '        FILE *f = fopen(paths[i], "rb");\n        char b[16];\n'
    "        if (f && fread(b, 1, 1, f) <= 1) hit = 1;\n        if (f) fclose(f);\n    }\n"
    + _C_VERDICT
)
_C_CONNECT = (
    _C_HEAD + "#include <arpa/inet.h>\n#include <sys/socket.h>\n\nint main(void) {\n"
    "    struct sockaddr_in a = {0};\n    a.sin_family = AF_INET;\n    a.sin_port = htons(PORT);\n"
    '    inet_pton(AF_INET, "ADDR", &a.sin_addr);\n    int s = socket(AF_INET, SOCK_STREAM, 0);\n'
    "    int hit = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;\n" + _C_VERDICT
)
_C_FLOOD = (
    _C_HEAD + "int main(void) {\n    static char s[10000];\n    memset(s, 'x', sizeof s);\n"
    "    for (;;) if (fwrite(s, 1, sizeof s, STREAM) != sizeof s) return 1;\n}\n"
)

C_HOSTILE = _battery(
    "c",
    {
        "fork_bomb": (
            _C_HEAD + "int main(void) {\n    for (;;) {\n        pid_t p = fork();\n"
            "        if (p < 0) abort();\n        if (p == 0) {\n            sleep(100);\n"
            "            _exit(0);\n        }\n    }\n}\n"
        ),
        "heap_bomb": (
            _C_HEAD + "int main(void) {\n    for (;;) {\n        char *p = malloc(1 << 20);\n"
            '        if (!p) {\n            fputs("out of memory\\n", stderr);\n'
            "            return 1;\n        }\n        memset(p, 1, 1 << 20);\n    }\n}\n"
        ),
        "stack_bomb": (
            _C_HEAD + "static int f(int n) {\n    volatile char pad[4096];\n"
            "    pad[n % 4096] = (char)n;\n    return f(n + 1) + pad[0];\n}\n\n"
            'int main(void) {\n    printf("%d\\n", f(0));\n}\n'
        ),
        "disk_fill": (
            _C_HEAD + "int main(void) {\n    static char chunk[1 << 20];\n"
            '    const char *paths[] = {"/sandbox/fill", "/tmp/fill"};\n    long n = 0;\n'
            "    for (int i = 0; i < 2; i++) {\n"
            '        FILE *f = fopen(paths[i], "wb");\n        if (!f) continue;\n'
            "        for (int k = 0; k < 100000; k++) {\n"
            "            if (fwrite(chunk, 1, sizeof chunk, f) != sizeof chunk) break;\n"
            "            if (fflush(f)) break;\n"
            "            n++;\n        }\n        fclose(f);\n    }\n    int hit = n >= 4096;\n"
            + _C_VERDICT
        ),
        "stdout_flood": _C_FLOOD.replace("STREAM", "stdout"),
        "stderr_flood": _C_FLOOD.replace("STREAM", "stderr"),
        "stdin_forever": (
            _C_HEAD + "int main(void) {\n    char b[4096];\n    for (;;) {\n"
            "        if (read(0, b, sizeof b) < 0) return 1;\n    }\n}\n"
        ),
        "ignore_sigterm": (
            _C_HEAD + "#include <signal.h>\n\nint main(void) {\n    signal(SIGTERM, SIG_IGN);\n"
            "    for (;;) {\n    }\n}\n"
        ),
        "sleep": _C_HEAD + "int main(void) {\n    sleep(600);\n}\n",
        "daemon": (
            _C_HEAD + "int main(void) {\n    if (fork() == 0) {\n"
            f'        execlp("setsid", "setsid", "sh", "-c", "{_DAEMON}", (char *)0);\n'
            '        _exit(1);\n    }\n    puts("ok");\n    return 0;\n}\n'
        ),
        "signal_others": (
            _C_HEAD + "#include <signal.h>\n\nint main(void) {\n"
            "    int hit = kill(@@HOST_PID@@, 9) == 0;\n    kill(-1, 9);\n" + _C_VERDICT
        ),
        "network_local": _C_CONNECT.replace("PORT", "@@PORT@@").replace("ADDR", "127.0.0.1"),
        "network_outside": _C_CONNECT.replace("PORT", "80").replace("ADDR", "1.1.1.1"),
        "secret_env": _C_HEAD
        + 'int main(void) {\n    int hit = getenv("@@ENV@@") != 0;\n'
        + _C_VERDICT,
        "secret_files": _C_READS.replace("PATHS", _strings(_SECRET_FILES)),
        "proc_environ": (
            _C_HEAD + "#include <dirent.h>\n\nstatic int has(const char *path) {\n"
            '    FILE *f = fopen(path, "rb");\n    if (!f) return 0;\n    static char b[1 << 16];\n'
            "    size_t n = fread(b, 1, sizeof b, f);\n    fclose(f);\n"
            '    return memmem(b, n, "@@ENV@@", strlen("@@ENV@@")) != 0;\n}\n\n'
            'int main(void) {\n    int hit = has("/proc/1/environ") || has("/proc/self/environ");\n'
            '    DIR *d = opendir("/proc");\n    struct dirent *e;\n'
            "    while (d && (e = readdir(d))) {\n        char p[300];\n"
            '        snprintf(p, sizeof p, "/proc/%s/environ", e->d_name);\n'
            "        hit = hit || has(p);\n    }\n" + _C_VERDICT
        ),
        "etc_shadow": _C_READS.replace("PATHS", '"/etc/shadow"'),
        "write_outside": (
            _C_HEAD + "#include <libgen.h>\n#include <sys/stat.h>\n\nint main(void) {\n"
            f"    const char *paths[] = {{{_strings(WRITE_TARGETS)}}};\n"
            "    for (unsigned i = 0; i < sizeof paths / sizeof *paths; i++) {\n"
            '        char dir[512];\n        snprintf(dir, sizeof dir, "%s", paths[i]);\n'
            "        mkdir(dirname(dir), 0755);\n"
            '        FILE *f = fopen(paths[i], "wb");\n'
            '        if (f) {\n            fputs("x", f);\n            fclose(f);\n        }\n'
            '    }\n    puts("ok");\n    return 0;\n}\n'
        ),
        "symlink": (
            _C_HEAD + "int main(void) {\n"
            f"    const char *targets[] = {{{_strings(_LINK_TARGETS)}}};\n    int hit = 0;\n"
            "    for (unsigned i = 0; i < sizeof targets / sizeof *targets; i++) {\n"
            '        char link[64];\n        snprintf(link, sizeof link, "/sandbox/link%u", i);\n'
            "        symlink(targets[i], link);\n"
            '        FILE *f = fopen(link, "rb");\n        char b[4];\n'
            "        if (f && fread(b, 1, 1, f) <= 1) hit = 1;\n        if (f) fclose(f);\n    }\n"
            + _C_VERDICT
        ),
        "close_stdout": (
            _C_HEAD + 'int main(void) {\n    puts("ok");\n    fflush(stdout);\n    close(1);\n'
            "    usleep(100000);\n    return 0;\n}\n"
        ),
        "binary_output": (
            _C_HEAD + "int main(void) {\n"
            "    static const unsigned char b[] = {0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28};\n"
            "    fwrite(b, 1, sizeof b, stdout);\n    return 0;\n}\n"
        ),
        "deep_recursion": (
            # The volatile store after the call keeps GCC from turning it into a loop.
            _C_HEAD + "volatile unsigned long sink;\n\n"
            "static unsigned long f(unsigned long n) {\n    if (n == ~0UL) return 0;\n"
            "    unsigned long r = f(n + 1);\n    sink = r;\n    return r + 1;\n}\n\n"
            'int main(void) {\n    printf("%lu\\n", f(0));\n}\n'
        ),
        "new_namespace": (
            _C_HEAD + "#include <sched.h>\n\nint main(void) {\n"
            "    int hit = unshare(0x10000000) == 0;\n" + _C_VERDICT
        ),
    },
)

# --- C++ -------------------------------------------------------------------------------------

# C++ reaches the kernel through the same C library, so the attacks that are system calls are
# the C programs built by g++ (valid C++ as written); the ones a C++ program writes its own way
# (memory by `new`, streams, files, threads) are C++.
_CPP_HEAD = (
    "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <fstream>\n"
    "#include <iostream>\n#include <string>\n#include <vector>\n#include <unistd.h>\n"
)
_CPP_VERDICT = '    std::cout << (hit ? "PWNED" : "contained") << std::endl;\n}\n'
_CPP_READS = (
    _CPP_HEAD
    + "int main() {\n    std::vector<std::string> paths = {PATHS};\n    bool hit = false;\n"
    "    for (const auto &path : paths) {\n        std::ifstream f(path, std::ios::binary);\n"
    "        char b;\n        if (f && (f.get(b) || f.eof())) hit = true;\n    }\n" + _CPP_VERDICT
)
_CPP_FLOOD = (
    _CPP_HEAD + "int main() {\n    std::ios::sync_with_stdio(false);\n"
    "    const std::string s(10000, 'x');\n    for (;;) {\n        STREAM << s;\n"
    "        if (!STREAM) return 1;\n    }\n}\n"
)
_C_PROGRAMS = {case.kind: case.code for case in C_HOSTILE}

CPP_HOSTILE = _battery(
    "cpp",
    {
        **_C_PROGRAMS,
        "fork_bomb": (
            # Threads and processes both: std::thread is how C++ spawns, fork is the bomb.
            _CPP_HEAD + "#include <thread>\n\nint main() {\n    for (;;) {\n"
            "        pid_t p = fork();\n        if (p < 0) std::abort();\n"
            "        if (p == 0) {\n            std::thread([] { sleep(100); }).join();\n"
            "            _exit(0);\n        }\n    }\n}\n"
        ),
        "heap_bomb": (
            _CPP_HEAD + "int main() {\n    std::vector<char *> kept;\n    for (;;) {\n"
            "        char *p = new char[1 << 20];\n        std::memset(p, 1, 1 << 20);\n"
            "        kept.push_back(p);\n    }\n}\n"
        ),
        "stack_bomb": (
            _CPP_HEAD + "static int f(int n) {\n    volatile char pad[4096];\n"
            "    pad[n % 4096] = static_cast<char>(n);\n    return f(n + 1) + pad[0];\n}\n\n"
            "int main() {\n    std::cout << f(0) << std::endl;\n}\n"
        ),
        "disk_fill": (
            _CPP_HEAD
            + "int main() {\n    const std::string chunk(1 << 20, 'x');\n    long n = 0;\n"
            '    for (const char *path : {"/sandbox/fill", "/tmp/fill"}) {\n'
            "        std::ofstream f(path, std::ios::binary);\n"
            "        for (int k = 0; f && k < 100000; k++) {\n"
            "            if (!f.write(chunk.data(), chunk.size()).flush()) break;\n"
            "            n++;\n        }\n    }\n    bool hit = n >= 4096;\n" + _CPP_VERDICT
        ),
        "stdout_flood": _CPP_FLOOD.replace("STREAM", "std::cout"),
        "stderr_flood": _CPP_FLOOD.replace("STREAM", "std::cerr"),
        "stdin_forever": (
            _CPP_HEAD + "int main() {\n    std::string line;\n    for (;;) {\n"
            "        std::getline(std::cin, line);\n        std::cin.clear();\n    }\n}\n"
        ),
        "secret_env": (
            _CPP_HEAD
            + 'int main() {\n    bool hit = std::getenv("@@ENV@@") != nullptr;\n'
            + _CPP_VERDICT
        ),
        "secret_files": _CPP_READS.replace("PATHS", _strings(_SECRET_FILES)),
        "etc_shadow": _CPP_READS.replace("PATHS", '"/etc/shadow"'),
        "write_outside": (
            _CPP_HEAD + "#include <filesystem>\n\nint main() {\n"
            f"    for (std::filesystem::path p : {{{_strings(WRITE_TARGETS)}}}) {{\n"
            "        std::error_code ignored;\n"
            "        std::filesystem::create_directories(p.parent_path(), ignored);\n"
            '        std::ofstream(p) << "x";\n    }\n    std::cout << "ok" << std::endl;\n}\n'
        ),
        "symlink": (
            _CPP_HEAD
            + "#include <filesystem>\n\nint main() {\n    bool hit = false;\n    int i = 0;\n"
            f"    for (std::filesystem::path target : {{{_strings(_LINK_TARGETS)}}}) {{\n"
            '        std::filesystem::path link = "/sandbox/link" + std::to_string(i++);\n'
            "        std::error_code ignored;\n"
            "        std::filesystem::create_symlink(target, link, ignored);\n"
            "        std::ifstream f(link, std::ios::binary);\n        char b;\n"
            "        if (f && (f.get(b) || f.eof())) hit = true;\n    }\n" + _CPP_VERDICT
        ),
        "binary_output": (
            _CPP_HEAD + "int main() {\n"
            "    const unsigned char b[] = {0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28};\n"
            "    std::cout.write(reinterpret_cast<const char *>(b), sizeof b);\n}\n"
        ),
    },
)

# --- Java ------------------------------------------------------------------------------------


def _java(body: str, imports: str = "java.util.*") -> str:
    """A ``Main`` whose ``main`` runs ``body`` (throwing what it throws)."""
    head = "".join(f"import {i};\n" for i in imports.split())
    return (
        f"{head}\npublic class Main {{\n    public static void main(String[] args) throws "
        f"Exception {{\n{body}    }}\n}}\n"
    )


_JAVA_VERDICT = '        System.out.println(hit ? "PWNED" : "contained");\n'
_JAVA_READS = _java(
    "        boolean hit = false;\n        for (String p : new String[] {PATHS}) {\n"
    "            try {\n"
    "                java.nio.file.Files.readAllBytes(java.nio.file.Path.of(p));\n"
    "                hit = true;\n            } catch (Exception e) {\n            }\n        }\n"
    + _JAVA_VERDICT
)
_JAVA_CONNECT = _java(
    "        boolean hit = false;\n        try (java.net.Socket s = new java.net.Socket()) {\n"
    '            s.connect(new java.net.InetSocketAddress("ADDR", PORT), 2000);\n'
    "            hit = true;\n        } catch (Exception e) {\n        }\n" + _JAVA_VERDICT
)
_JAVA_RUN = (
    "    static boolean run(String... argv) {\n        try {\n"
    "            return new ProcessBuilder(argv).start().waitFor() == 0;\n"
    "        } catch (Exception e) {\n            return false;\n        }\n    }\n"
)
_JAVA_FLOOD = _java(
    '        String s = "x".repeat(10000);\n        while (!STREAM.checkError()) STREAM.print(s);\n'
)

JAVA_HOSTILE = _battery(
    "java",
    {
        "fork_bomb": _java('        while (true) new ProcessBuilder("sleep", "100").start();\n'),
        "heap_bomb": _java(
            "        List<long[]> keep = new ArrayList<>();\n"
            "        while (true) keep.add(new long[1 << 17]);\n"
        ),
        "stack_bomb": _java("        System.out.println(f(0));\n").replace(
            "public static void main",
            "static long f(long n) {\n        long[] pad = new long[64];\n"
            "        return f(n + 1) + pad[(int) (n % 64)];\n    }\n\n    public static void main",
        ),
        "disk_fill": _java(
            "        byte[] chunk = new byte[1 << 20];\n        long n = 0;\n"
            '        for (String p : new String[] {"/sandbox/fill", "/tmp/fill"}) {\n'
            "            try (java.io.FileOutputStream f = new java.io.FileOutputStream(p)) {\n"
            "                for (int k = 0; k < 100000; k++) {\n"
            "                    f.write(chunk);\n"
            "                    n++;\n                }\n            } catch (Exception e) {\n"
            "            }\n        }\n        boolean hit = n >= 4096;\n" + _JAVA_VERDICT
        ),
        "stdout_flood": _JAVA_FLOOD.replace("STREAM", "System.out"),
        "stderr_flood": _JAVA_FLOOD.replace("STREAM", "System.err"),
        "stdin_forever": _java(
            "        byte[] b = new byte[4096];\n        while (true) System.in.read(b);\n"
        ),
        "ignore_sigterm": _java(
            '        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), s -> {\n        });\n'
            "        long n = 0;\n        while (n >= 0) n = n | 1;\n"
        ),
        "sleep": _java("        Thread.sleep(600_000);\n"),
        "daemon": _java(
            f'        new ProcessBuilder("setsid", "sh", "-c", "{_DAEMON}").start();\n'
            '        System.out.println("ok");\n'
        ),
        # kill(-1) as Java has it: every process it can see but itself.
        "signal_others": _java(
            "        boolean hit = ProcessHandle.of(@@HOST_PID@@)"
            ".map(ProcessHandle::destroyForcibly).orElse(false);\n"
            "        long self = ProcessHandle.current().pid();\n"
            "        ProcessHandle.allProcesses().filter(p -> p.pid() != self)"
            ".forEach(ProcessHandle::destroyForcibly);\n" + _JAVA_VERDICT
        ),
        "network_local": _JAVA_CONNECT.replace("PORT", "@@PORT@@").replace("ADDR", "127.0.0.1"),
        "network_outside": _JAVA_CONNECT.replace("PORT", "80").replace("ADDR", "1.1.1.1"),
        "secret_env": _java(
            '        boolean hit = System.getenv("@@ENV@@") != null;\n' + _JAVA_VERDICT
        ),
        "secret_files": _JAVA_READS.replace("PATHS", _strings(_SECRET_FILES)),
        "proc_environ": _java(
            '        List<String> paths = new ArrayList<>(List.of("/proc/1/environ", '
            '"/proc/self/environ"));\n'
            '        String[] names = new java.io.File("/proc").list();\n'
            "        for (String n : names == null ? new String[0] : names) "
            'paths.add("/proc/" + n + "/environ");\n'
            "        boolean hit = false;\n        for (String p : paths) {\n            try {\n"
            "                String data = new String(java.nio.file.Files.readAllBytes("
            "java.nio.file.Path.of(p)), java.nio.charset.StandardCharsets.ISO_8859_1);\n"
            '                hit = hit || data.contains("@@ENV@@");\n'
            "            } catch (Exception e) {\n            }\n        }\n" + _JAVA_VERDICT
        ),
        "etc_shadow": _JAVA_READS.replace("PATHS", '"/etc/shadow"'),
        "write_outside": _java(
            f"        for (String p : new String[] {{{_strings(WRITE_TARGETS)}}}) {{\n"
            "            try {\n"
            "                java.nio.file.Path path = java.nio.file.Path.of(p);\n"
            "                java.nio.file.Files.createDirectories(path.getParent());\n"
            '                java.nio.file.Files.writeString(path, "x");\n'
            "            } catch (Exception e) {\n            }\n        }\n"
            '        System.out.println("ok");\n'
        ),
        "symlink": _java(
            f"        String[] targets = {{{_strings(_LINK_TARGETS)}}};\n"
            "        boolean hit = false;\n"
            "        for (int i = 0; i < targets.length; i++) {\n            try {\n"
            "                java.nio.file.Path link =\n"
            '                    java.nio.file.Path.of("/sandbox/link" + i);\n'
            "                java.nio.file.Files.createSymbolicLink(link, "
            "java.nio.file.Path.of(targets[i]));\n"
            "                java.nio.file.Files.readAllBytes(link);\n                hit = true;\n"
            "            } catch (Exception e) {\n            }\n        }\n" + _JAVA_VERDICT
        ),
        "close_stdout": _java(
            '        System.out.println("ok");\n        System.out.flush();\n'
            "        System.out.close();\n        Thread.sleep(100);\n"
        ),
        "binary_output": _java(
            "        System.out.write(new byte[] {(byte) 0xff, (byte) 0xfe, 0x00, (byte) 0x80, "
            "(byte) 0xc3, 0x28});\n        System.out.flush();\n"
        ),
        "deep_recursion": _java("        System.out.println(f(0));\n").replace(
            "public static void main",
            "static long f(long n) {\n        return f(n + 1) + 1;\n    }\n\n"
            "    public static void main",
        ),
        "new_namespace": _java(
            '        boolean hit = run("unshare", "--user", "true");\n' + _JAVA_VERDICT
        ).replace("public static void main", _JAVA_RUN.strip() + "\n\n    public static void main"),
    },
)

#: The battery of every language that runs programs of its own.
HOSTILE: dict[str, list[Hostile]] = {
    "python": PYTHON_HOSTILE,
    "javascript": JAVASCRIPT_HOSTILE,
    "go": GO_HOSTILE,
    "rust": RUST_HOSTILE,
    "c": C_HOSTILE,
    "cpp": CPP_HOSTILE,
    "java": JAVA_HOSTILE,
}
