"""Every cache key of the project: found from the code, built by one builder, and changed by every edit it covers.

The site table below is checked against the code (an AST walk over every project file), so a new
place that reads or writes the cache fails ``test_every_key_site_is_in_the_table`` until it is
named here with the claims it serves. Each trainer-built site is then driven with a cache that
records the key and stops before computing, and its key is checked to carry the engine's identity
and the identity of the module that measures; an edit of an engine file, of the model, or of one
claim's measuring module is shown to change exactly the keys it should.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

import claimcheck
from claimcheck.store.cache import Memo, ResultCache
from claimcheck.store.keys import Key
from qin2025.c1 import linear_rate
from qin2025.c3 import full_rank
from qin2025.c4 import collapse
from qin2025.c7 import conditioning
from qin2025.data import make_synthetic
from qin2025.engine import finetune
from qin2025.engine.batched import Run
from qin2025.engine.codeid import code_identity, engine_modules, identity_of, module_identity
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer, engine_identity

ROOT = Path(claimcheck.__file__).resolve().parent.parent
PROJECT = ("claimcheck", "qin2025", "claims", "examples", "benchmarks")

# Every place that builds a key or hands one to the cache, with the claims whose results it keys.
SITES = {
    "claimcheck/store/cache.py::Memo.__call__": "the claim_cache fixture of any suite",
    "qin2025/engine/trainer.py::Trainer.__call__": "every training run (C1, C2, C4, C5, C8)",
    "qin2025/engine/trainer.py::Trainer.lambda_max": "step sizes (C1, C2, C4, C5, C8)",
    "qin2025/engine/trainer.py::Trainer.call": "C3, C4's collapse",
    "qin2025/engine/trainer.py::Trainer.key": "the suite's one key builder",
    "qin2025/engine/trainer.py::Trainer.memo": "every suite measurement",
    "qin2025/engine/trainer.py::Trainer.batch": "batched training (C1, C2, C4, C5, C7, C8)",
    "qin2025/engine/trainer.py::Trainer.lambda_maxes": "batched step sizes",
    "qin2025/c1/linear_rate.py::sharpness_along": "C1, C8 (a user model's sharpness)",
    "qin2025/c1/linear_rate.py::sharpness_at": "C1, C8",
    "qin2025/c4/collapse.py::cached_sweep": "C4's collapse",
    "qin2025/c3/full_rank.py::sweep": "C3",
    "qin2025/c7/conditioning.py::measure": "C7",
    "qin2025/c7/conditioning.py::readout_units": "C7's read-out controls",
    "qin2025/engine/finetune.py::check_reference": "C6's encoder check",
    "qin2025/engine/finetune.py::cached_finetune": "C6",
    "qin2025/data/sst2_sanity.py::check_sst2_data": "C6's SST-2 probe",
}
CACHE_METHODS = {"memo", "memo_many", "call"}


def _sites_in(path: Path) -> set[str]:
    """Return ``path::qualname`` of every function that builds a Key or calls the cache's memo, memo_many or call."""
    rel = path.relative_to(ROOT).as_posix()
    found: set[str] = set()

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                f = child.func
                receiver = ast.unparse(f.value) if isinstance(f, ast.Attribute) else ""
                cache_call = isinstance(f, ast.Attribute) and f.attr in CACHE_METHODS
                if cache_call and any(w in receiver for w in ("train", "cache", "self")):
                    found.add(f"{rel}::{'.'.join(s for s in scope if not s.startswith('<'))}")
                builder = isinstance(f, ast.Attribute) and f.attr == "key" and "train" in receiver + ".".join(scope)
                if (isinstance(f, ast.Name) and f.id == "Key") or builder:
                    found.add(f"{rel}::{'.'.join(scope)}")
            visit(child, scope)

    visit(ast.parse(path.read_text(encoding="utf-8")), [])
    return {s.split("::")[0] + "::" + _outer(s.split("::")[1]) for s in found}


def _outer(qualname: str) -> str:
    """Return the function a nested definition belongs to (``Trainer.memo.timed`` -> ``Trainer.memo``)."""
    parts = qualname.split(".")
    return ".".join(parts[:2]) if parts and parts[0][:1].isupper() else parts[0]


def test_every_key_site_is_in_the_table() -> None:
    found: set[str] = set()
    for top in PROJECT:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found |= _sites_in(path)
    found.discard("claimcheck/store/keys.py::Key.__post_init__")
    assert found - set(SITES) == set(), "new cache-key sites: add each to SITES and drive it in this file"
    assert set(SITES) - found == set(), "sites in SITES the code no longer has: remove them"


def test_only_the_key_builder_makes_a_digest_and_the_store_takes_only_keys(tmp_path: Path) -> None:
    users = [
        p.relative_to(ROOT).as_posix()
        for top in PROJECT
        for p in (ROOT / top).rglob("*.py")
        if "store_key(" in p.read_text(encoding="utf-8")
    ]
    assert users == ["claimcheck/store/keys.py"]
    with pytest.raises(TypeError, match=r"takes a claimcheck\.store\.keys\.Key"):
        ResultCache(tmp_path).memo({"kind": "x"}, lambda: ({}, {}))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes a claimcheck\.store\.keys\.Key"):
        ResultCache(tmp_path).memo_many([{"kind": "x"}], lambda m: [({}, {})])  # type: ignore[list-item]


def test_two_sources_of_identity_named_alike_stay_two_fields() -> None:
    a = Key(engine={"code": "engine-1"}, model="m", function={"code": "fn-1"}, inputs={"code": "in"})
    engine_edited = Key(engine={"code": "engine-2"}, model="m", function={"code": "fn-1"}, inputs={"code": "in"})
    function_edited = Key(engine={"code": "engine-1"}, model="m", function={"code": "fn-2"}, inputs={"code": "in"})
    swapped = Key(engine={"code": "fn-1"}, model="m", function={"code": "engine-1"}, inputs={"code": "in"})
    assert len({a.digest, engine_edited.digest, function_edited.digest, swapped.digest}) == 4
    with pytest.raises(TypeError, match=r"Key\.model"):
        Key(engine={}, model={"name": "m"}, function={}, inputs={})  # type: ignore[arg-type]


# --- the trainer's sites, driven with a cache that records each key and stops --------------------


class Stop(Exception):
    """Raised by ``Recorder`` once it has the key: nothing is computed."""


class Recorder(ResultCache):
    """A cache that records the keys it is given and stops before computing."""

    def __init__(self) -> None:
        super().__init__(None)
        self.keys: list[Key] = []

    def memo(self, key: Key, compute: Callable[[], Any]) -> Any:  # type: ignore[override]
        self.keys.append(key)
        raise Stop

    def memo_many(self, keys: Any, compute: Callable[..., Any]) -> Any:  # type: ignore[override]
        self.keys.extend(keys)
        raise Stop


MODEL, TRAIN = ModelConfig(d=4, d_qk=2), TrainConfig(steps=4, power_iters=5)
DATA = make_synthetic(2, 3, 4, 1, seed=0)
RUN = Run(MODEL, TRAIN, DATA, 0)


def _pre(tmp: Path) -> Any:
    (tmp / "model.safetensors").write_bytes(b"weights")
    return SimpleNamespace(directory=tmp, tokenizer_sha256="tokenizer")


def _drivers(tmp: Path) -> dict[str, Callable[[Trainer], object]]:
    """Return a call per trainer-built site (the site that builds the key is the module named first)."""
    traj = SimpleNamespace(loss=np.zeros(5), train=TRAIN.to_dict(), seed=0)
    ref = tmp / "reference.json"
    ref.write_text("{}")
    enc = finetune.EncoderConfig(1, (1.0,), (1.0,))
    sentences = finetune.SentenceData(torch.zeros(2, 3, 4), torch.ones(2, 3), torch.zeros(2), "toy")
    return {
        "qin2025/engine/trainer.py::Trainer.__call__": lambda t: t(MODEL, TRAIN, DATA, 0),
        "qin2025/engine/trainer.py::Trainer.lambda_max": lambda t: t.lambda_max(MODEL, DATA, 0),
        "qin2025/engine/trainer.py::Trainer.batch": lambda t: t.batch([RUN]),
        "qin2025/engine/trainer.py::Trainer.lambda_maxes": lambda t: t.lambda_maxes([RUN]),
        "qin2025/c1/linear_rate.py::sharpness_along": lambda t: linear_rate.sharpness_along(t, traj, MODEL, DATA, [2]),  # type: ignore[arg-type]
        "qin2025/c1/linear_rate.py::sharpness_at": lambda t: linear_rate.sharpness_at(t, [RUN], [traj], [[2]]),  # type: ignore[list-item]
        "qin2025/c4/collapse.py::cached_sweep": lambda t: collapse.cached_sweep(t, collapse.QK("xavier"), 4, 4, 0),
        "qin2025/c3/full_rank.py::sweep": lambda t: full_rank.sweep(
            t, 0, full_rank.Grid(((4, 4),), (2,), (1.0,), 1), ("xavier",)
        ),
        "qin2025/c7/conditioning.py::measure": lambda t: conditioning.measure(t, [0]),
        "qin2025/c7/conditioning.py::readout_units": lambda t: conditioning.readout_units(t, [0], "z"),
        "qin2025/engine/finetune.py::check_reference": lambda t: finetune.check_reference(t, _pre(tmp), ref, 1),
        "qin2025/engine/finetune.py::cached_finetune": lambda t: finetune.cached_finetune(
            t, _pre(tmp), enc, finetune.FinetuneConfig(), sentences, 0
        ),
    }


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Key]:
    """Return the key each driven site builds."""
    out = {}
    for site, drive in _drivers(tmp_path_factory.mktemp("sites")).items():
        rec = Recorder()
        with pytest.raises(Stop):
            drive(Trainer(rec))
        assert len(rec.keys) == 1, site
        out[site] = rec.keys[0]
    return out


def _module_of(key: Key) -> str:
    name = str(key.function["name"])
    return name.split(".<locals>")[0].rsplit(".", 1)[0] if "<locals>" in name else name.rsplit(".", 1)[0]


def test_every_trainer_site_is_driven(keys: dict[str, Key]) -> None:
    trainer_sites = {s for s in SITES if s.startswith("qin2025/") and "sst2_sanity" not in s}
    builders = {f"qin2025/engine/trainer.py::Trainer.{m}" for m in ("key", "memo", "call")}  # driven through the others
    assert trainer_sites - builders == set(keys)


def test_every_key_carries_the_engine_and_the_code_that_measures(keys: dict[str, Key]) -> None:
    for site, key in keys.items():
        assert key.engine == engine_identity(), site
        assert key.model == "qin2025.engine.model", site
        module = _module_of(key)
        file = ROOT.joinpath(*module.split(".")).with_suffix(".py")
        assert key.function["code"] == module_identity(module, str(file)), site
        site_module = site.split("::")[0].removesuffix(".py").replace("/", ".")
        if site_module != "qin2025.engine.trainer":  # a claim's own measurement: its module's code is in its key
            assert module == site_module, (site, module)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("copy")
    for package in ("claimcheck", "qin2025"):
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@contextmanager
def _edited(copy: Path, rel: str) -> Iterator[None]:
    path = copy / rel
    before = path.read_bytes()
    path.write_bytes(before + b"\n# an edit\n")
    try:
        yield
    finally:
        path.write_bytes(before)


@pytest.mark.parametrize("rel", sorted(p.relative_to(ROOT).as_posix() for p in engine_modules(ROOT).values()))
def test_editing_any_engine_file_changes_every_key(copy: Path, rel: str, keys: dict[str, Key]) -> None:
    """An engine edit changes the engine identity, which every trainer-built key carries in its own field."""
    before = identity_of(copy).digest
    assert before == code_identity().digest
    with _edited(copy, rel):
        after = identity_of(copy).digest
    assert after != before
    for site, key in keys.items():  # the engine field is the identity: a new identity is a new key
        moved = Key({**key.engine, "code": after}, key.model, key.function, key.inputs)
        assert moved.digest != key.digest, site


CLAIM_MODULES = {
    "qin2025/c3/full_rank.py": {"qin2025/c3/full_rank.py::sweep"},
    "qin2025/c4/collapse.py": {"qin2025/c4/collapse.py::cached_sweep"},
    "qin2025/c7/conditioning.py": {"qin2025/c7/conditioning.py::measure", "qin2025/c7/conditioning.py::readout_units"},
    "qin2025/c1/linear_rate.py": {
        "qin2025/c1/linear_rate.py::sharpness_along",
        "qin2025/c1/linear_rate.py::sharpness_at",
    },
    "qin2025/c7/rotation.py": {"qin2025/c7/conditioning.py::measure", "qin2025/c7/conditioning.py::readout_units"},
}


@pytest.mark.parametrize("rel", sorted(CLAIM_MODULES))
def test_editing_one_claims_measuring_module_changes_that_claims_keys_only(
    copy: Path, rel: str, keys: dict[str, Key]
) -> None:
    def codes() -> dict[str, str]:
        module_identity.cache_clear()
        out = {}
        for site, key in keys.items():
            module = _module_of(key)
            file = copy.joinpath(*module.split(".")).with_suffix(".py")
            out[site] = module_identity(module, str(file), copy)
        return out

    before = codes()
    with _edited(copy, rel):
        after = codes()
    module_identity.cache_clear()
    changed = {s for s in keys if after[s] != before[s]}
    assert changed == CLAIM_MODULES[rel]


def test_the_claim_cache_fixture_keys_its_function_code(tmp_path: Path) -> None:
    memo = Memo(ResultCache(tmp_path))
    a = memo(_double, x=2)
    again = memo(_double, x=2)
    assert a["y"] == again["y"] == 4 and memo.counts == {"computed": 1, "cached": 1}


def _double(x: int) -> dict[str, int]:
    return {"y": 2 * x}
