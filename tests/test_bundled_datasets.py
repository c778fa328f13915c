"""The bundled benchmark records and how a set is resolved (shared copy, else bundled).

Real files only: the bundle in the package, copies of it in temporary directories standing
in for a shared copy, and the shared copy itself when it is present.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from verifiers import SpecError
from verifiers.integrations import data
from verifiers.testing import datasets
from verifiers.testing.datasets import BUNDLED, ENV, SETS, dataset

REPO = Path(__file__).resolve().parents[1]
MANIFEST: dict[str, Any] = json.loads((BUNDLED / "MANIFEST.json").read_text())


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bundle_datasets", REPO / "scripts" / "bundle_datasets.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_bundle_is_what_its_manifest_says() -> None:
    assert set(MANIFEST) == set(SETS)
    readme = (BUNDLED / "README.md").read_text()
    listed = {BUNDLED / "MANIFEST.json", BUNDLED / "README.md"}
    for name, entry in MANIFEST.items():
        assert entry["source"] and entry["license"] and entry["commit"] in readme, name
        assert f"`{name}/" in readme, name
        assert sorted(entry["files"]) == sorted(f"{stem}.jsonl.gz" for stem in SETS[name])
        for file_name, spec in entry["files"].items():
            path = BUNDLED / name / file_name
            listed.add(path)
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
            assert hashlib.sha256(text.encode("utf-8")).hexdigest() == spec["sha256"], path
            ids = [
                "/".join(str(r[k]) for k in spec["key"]) for r in map(json.loads, text.splitlines())
            ]
            assert ids == spec["ids"] and ids, path
            assert len(set(ids)) == len(ids), f"{path}: an identifier twice"
        for db, digest in entry["databases"].items():
            path = BUNDLED / name / "database" / db / f"{db}.sqlite"
            listed.add(path)
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path
    files = {p for p in BUNDLED.rglob("*") if p.is_file()}
    assert files == listed, files ^ listed
    assert sum(p.stat().st_size for p in files) < 2 * 1024 * 1024


def test_the_bundled_records_are_what_the_rules_take_from_the_loaded_sets(tmp_path: Path) -> None:
    # Built again from whichever copy each set resolves to: from the shared copy this proves
    # every bundled record is the shared record, unchanged; from the bundle itself, that the
    # bundle holds exactly what its rules pick.
    rebuilt = _builder().build(lambda name: dataset(name).path, tmp_path / "rebuilt")
    origins = {name: dataset(name).origin for name in SETS}
    differ = [
        (name, origins[name], file_name)
        for name, entry in MANIFEST.items()
        for file_name in entry["files"]
        if rebuilt[name]["files"][file_name] != entry["files"][file_name]
    ]
    differ += [
        (name, origins[name], "databases")
        for name, entry in MANIFEST.items()
        if rebuilt[name]["databases"] != entry["databases"]
    ]
    assert not differ, f"run scripts/bundle_datasets.py: {differ}"
    assert rebuilt == MANIFEST


def test_a_set_resolves_to_the_shared_copy_when_it_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shutil.copytree(BUNDLED / "humaneval", shared / "humaneval")
    shutil.copytree(BUNDLED / "spider_dev", shared / "spider_dev")
    (shared / "humaneval_x").mkdir()  # present, but without its files
    monkeypatch.setenv(ENV, str(shared))

    found = dataset("humaneval")
    assert (found.origin, found.path, found.root) == ("shared", shared / "humaneval", shared)
    assert str(found) == f"humaneval: the shared copy at {shared / 'humaneval'}"
    assert found.rows() == datasets.read_jsonl(BUNDLED / "humaneval" / "humaneval.jsonl.gz")
    assert (
        dataset("spider_dev").database("pets_1")
        == shared / "spider_dev/database/pets_1/pets_1.sqlite"
    )
    with pytest.raises(FileNotFoundError, match="no database 'wta_1'"):
        dataset("spider_dev").database("wta_1")

    # A set the shared copy lacks comes from the bundle, and says why.
    mbpp = dataset("mbpp_sanitized")
    assert (mbpp.origin, mbpp.path) == ("bundled", BUNDLED / "mbpp_sanitized")
    assert f"{shared / 'mbpp_sanitized'} is not a directory" in str(mbpp)
    # A shared set missing a file is an error naming it, never a silent fallback.
    with pytest.raises(FileNotFoundError, match=r"humaneval_x_go\.jsonl\.gz is missing"):
        dataset("humaneval_x").rows("humaneval_x_go")

    # The data preparation reads the same copies by default, and any root given to it.
    assert len(data.load_source("humaneval")) == len(found.rows())
    assert len(data.load_source("mbpp")) == len(
        MANIFEST["mbpp_sanitized"]["files"]["mbpp_sanitized.jsonl.gz"]["ids"]
    )
    assert data.source_dataset("spider").path == shared / "spider_dev"
    lines = datasets.summary().splitlines()
    assert lines[0] == f"the shared copy at {shared}: humaneval, humaneval_x, spider_dev"
    assert lines[1] == (
        f"the bundled sample at {BUNDLED} (no shared copy: {shared / 'mbpp_sanitized'} "
        "is not a directory): mbpp_sanitized"
    )
    assert len(lines) == len(SETS) - 2


def test_without_a_shared_copy_every_set_is_bundled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "/nonexistent")
    for name in SETS:
        found = dataset(name)
        assert (found.origin, found.path) == ("bundled", BUNDLED / name)
        assert str(found).endswith(f"(no shared copy: {ENV}=/nonexistent is not a directory)")
        for stem in SETS[name]:
            assert found.rows(stem), (name, stem)
    lines: list[str] = []
    rows = datasets.rows("humaneval_x", "humaneval_x_rust", report=lines.append)
    assert lines == [f"{dataset('humaneval_x')} [humaneval_x_rust.jsonl.gz: {len(rows)} records]"]
    assert datasets.summary() == (
        f"the bundled sample at {BUNDLED} (no shared copy: {ENV}=/nonexistent is not a "
        f"directory): {', '.join(SETS)}"
    )


def test_the_default_place_is_beside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    beside = REPO.parent / "shared" / "datasets"
    assert datasets.shared_root() == (
        (beside, str(beside)) if beside.is_dir() else (None, f"{beside} is not a directory")
    )
    found = dataset("humaneval")
    assert found.origin == ("shared" if (beside / "humaneval").is_dir() else "bundled")


def test_bad_names_are_clear_errors() -> None:
    with pytest.raises(
        SpecError, match=r"dataset: unknown set 'humaneval_plus'; known: humaneval, "
    ):
        dataset("humaneval_plus")
    with pytest.raises(
        SpecError, match=r"stem: humaneval_x has humaneval_x_js, .* not 'humaneval_x_py'"
    ):
        dataset("humaneval_x").file("humaneval_x_py")
    with pytest.raises(SpecError, match=r"source: 'eurus' is not read from the datasets"):
        data.source_dataset("eurus")
