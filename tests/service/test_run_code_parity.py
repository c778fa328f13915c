"""SandboxFusion parity of ``/run_code`` on a real server: Python's own error text, files
given and fetched back, a timeout over the server's cap clamped; big integers on /score."""

from __future__ import annotations

import base64
import math
from typing import Any

import pytest

from verifiers import jsonio
from verifiers.core import CodeVerifier, Job, Options, Workspace
from verifiers.errors import SpecError
from verifiers.registry import get_language
from verifiers.result_cache import UNCACHED, ResultCache
from verifiers.runtimes import LocalRuntime
from verifiers.runtimes.remote import RemoteRuntime

from .conftest import Server, post


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def run(server: Server, **request: Any) -> dict[str, Any]:
    response = post(server, "/run_code", request)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_syntax_error_reads_as_python_prints_it(server: Server) -> None:
    answer = run(server, language="python", code="int a = 1")
    assert answer["status"] == "Failed"
    run_result = answer["run_result"]
    assert run_result["status"] == "Finished" and run_result["return_code"] == 1
    assert run_result["stderr"].endswith("SyntaxError: invalid syntax")
    assert 'File "solution.py", line 1' in run_result["stderr"]
    # Found by the compiler in the sandbox rather than the parser here: the same text.
    answer = run(server, language="python", code="print(1)\nreturn 5\n")
    assert answer["status"] == "Failed"
    assert "SyntaxError: 'return' outside function" in answer["run_result"]["stderr"]
    assert 'File "solution.py", line 2' in answer["run_result"]["stderr"]


def test_files_are_written_into_the_working_directory(server: Server) -> None:
    blob = bytes(range(256))
    code = (
        "print(open('dir1/dir2/flag').read())\n"
        "print(open('blob.bin', 'rb').read() == bytes(range(256)))\n"
    )
    answer = run(
        server,
        language="python",
        code=code,
        files={"dir1/dir2/flag": b64(b"hello, this is a test"), "blob.bin": b64(blob), "x": None},
    )
    assert answer["status"] == "Success", answer
    assert answer["run_result"]["stdout"] == "hello, this is a test\nTrue\n"
    node = run(
        server,
        language="nodejs",
        code="console.log(require('fs').readFileSync('in.txt', 'utf8'))",
        files={"in.txt": b64(b"from node")},
    )
    assert node["run_result"]["stdout"] == "from node\n"


def test_fetch_files_come_back_in_base64(server: Server) -> None:
    code = (
        "import os\n"
        "open('a.txt', 'w').write('secret')\n"
        "os.makedirs('out', exist_ok=True)\n"
        "open('out/b.bin', 'wb').write(bytes([0, 255, 10]))\n"
        "open('/tmp/c', 'w').write('sauce')\n"
        "os.symlink('/proc/1/environ', 'env')\n"
    )
    answer = run(
        server,
        language="python",
        code=code,
        fetch_files=["a.txt", "out/b.bin", "/tmp/c", "env", "missing.txt"],
    )
    assert answer["status"] == "Success", answer
    files = answer["files"]
    assert base64.b64decode(files["a.txt"]) == b"secret"
    assert base64.b64decode(files["out/b.bin"]) == bytes([0, 255, 10])
    assert base64.b64decode(files["/tmp/c"]) == b"sauce"
    # A link out of the program's directories is not followed; a missing file is named.
    assert "env" not in files and "missing.txt" not in files
    assert "env not fetched: not a regular file" in answer["message"]
    assert "missing.txt not fetched: no such file" in answer["message"]


def test_malformed_files_are_refused_naming_the_field(server: Server) -> None:
    for files, field in (
        ({"../escape": b64(b"x")}, "files.../escape"),
        ({"/etc/x": b64(b"x")}, "files./etc/x"),
        ({"ok.txt": "not base64!"}, "files.ok.txt"),
    ):
        response = post(server, "/run_code", {"language": "python", "code": "", "files": files})
        assert response.status_code == 422 and response.json()["field"] == field, response.text
    response = post(
        server, "/run_code", {"language": "python", "code": "", "fetch_files": ["f"] * 65}
    )
    assert response.status_code == 422 and response.json()["field"] == "fetch_files"


def test_a_timeout_over_the_cap_is_clamped_with_a_note(server: Server) -> None:
    answer = run(server, language="python", code="print(7)", run_timeout=10_000)
    assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "7\n"
    assert "run_timeout 10000s is over this server's cap: run with 60s" in answer["message"]
    answer = run(server, language="python", code="import time\ntime.sleep(5)", run_timeout=0.5)
    assert answer["run_result"]["status"] == "TimeLimitExceeded"
    assert "cap" not in answer["message"]


def test_big_integers_through_the_service(server: Server) -> None:
    import httpx

    with jsonio.big_ints():
        expected = math.factorial(2000)
    body = {
        "language": "python",
        "completion": "import math\ndef fact(n):\n    return math.factorial(n)\n",
        "tests": {"fn_name": "fact", "inputs": [[2000]], "outputs": [expected]},
    }
    response = httpx.post(
        f"{server.url}/score",
        content=jsonio.dumps(body),
        headers={"content-type": "application/json", **server.headers()},
        timeout=120,
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "passed"


def test_a_workspace_is_never_cached_nor_sent_to_a_remote_server() -> None:
    verifier = CodeVerifier(get_language("python"), LocalRuntime())
    spec = verifier.parse_tests({"inputs": [""], "outputs": [""]})
    with_files = Options(workspace=Workspace(files={"a": b"x"}))
    job = Job(verifier, "print()", spec, with_files)
    assert job.result_key(ResultCache()).startswith(UNCACHED)
    assert (
        not Job(verifier, "print()", spec, Options()).result_key(ResultCache()).startswith(UNCACHED)
    )
    remote = CodeVerifier(get_language("python"), RemoteRuntime("http://127.0.0.1:9"))
    with pytest.raises(SpecError, match="workspace"):
        Job(remote, "print()", spec, with_files)
