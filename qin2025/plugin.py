"""This paper's suite on claimcheck's core: the model under test, the cached GD engine, its capabilities.

Loaded by the repository's ``conftest.py`` when the package is installed. It adds ``--claim-model``
(check your own Transformer), the ``claim_model`` and ``claim_train`` fixtures, skips a claim whose
``claim_needs`` the model lacks, labels a user model's regime with its own facts, and tells the
core's report the model, the engine's code identity and the data files' provenance.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

import qin2025
from claimcheck.decide.record import ClaimRecorder
from claimcheck.provenance.fingerprint import Engine
from claimcheck.pytest.executor import LOCAL, Executor
from claimcheck.pytest.options import Settings
from claimcheck.report.markdown import CONFIRMED_ON_KEY, PREMISES_KEY, SUBJECT_KEY
from claimcheck.store.cache import ResultCache
from qin2025.data.known import folder_provenance
from qin2025.engine.codeid import CALIBRATION, DECIDES, PACKAGE, code_identity, engine_module_names
from qin2025.engine.facts import subject_facts
from qin2025.engine.trainer import Trainer, engine_identity
from qin2025.engine.usermodel import CAPABILITIES, ModelSpec, load_model, missing

MODEL_KEY = pytest.StashKey[ModelSpec]()
USER_MODEL_KEY = pytest.StashKey[str]()
REFUSED_KEY = pytest.StashKey[str]()  # why the probe refused --claim-model, when it did
_MODEL_KEYS = ("d_qk", "qk_init", "logit_scale")  # regime entries a user model may decline or set itself


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimcheck")
    group.addoption(
        "--claim-model",
        default=None,
        metavar="MOD:FACTORY",
        help="check your model: package.module:factory or path/to/file.py:factory building it; ini: claim_model",
    )
    parser.addini("claim_model", "check your model: package.module:factory building it", default="")


def _user_model(config: pytest.Config) -> str:
    value = config.getoption("claim_model")
    return str(value if value is not None else config.getini("claim_model") or "").strip()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[USER_MODEL_KEY] = _user_model(config)
    try:
        config.stash[MODEL_KEY] = load_model(_user_model(config), root=config.rootpath)
    except Exception as e:  # load_model raises ConfigError with the fix; keep its message
        if not hasattr(config.hook, "pytest_claimcheck_refusal"):  # no core to write a report: say it here
            raise pytest.UsageError(str(e)) from None
        config.stash[REFUSED_KEY] = str(e)  # the core writes a report that says why, then ends as a usage error
        return


def pytest_claimcheck_refusal(config: pytest.Config) -> str | None:
    """A model the probe refused: no claim can run; the core's report says why."""
    return config.stash.get(REFUSED_KEY, None)


def pytest_report_header(config: pytest.Config) -> str:
    return f"qin2025: model {config.stash[MODEL_KEY].name}"


def pytest_claimcheck_remote(config: pytest.Config) -> tuple[Callable[[], Mapping[str, str]], list[Path]]:
    """Ray workers must import this engine's code; a named cluster gets this package shipped."""
    return _engine_identity, [Path(qin2025.__file__).resolve().parent]


def _engine_identity() -> dict[str, str]:
    return {k: str(v) for k, v in engine_identity().items()}


def pytest_claimcheck_engine(config: pytest.Config) -> Engine:
    """Claims' fingerprints stop at this suite's engine, whose identity is shown beside each verdict."""
    return Engine((PACKAGE,), engine_module_names(), CALIBRATION, DECIDES, code_identity().digest[:12])


def pytest_claimcheck_capabilities(config: pytest.Config) -> list[str]:
    return list(CAPABILITIES)


def pytest_claimcheck_own_subject(config: pytest.Config) -> bool:
    return not config.stash[USER_MODEL_KEY]


def pytest_claimcheck_rerun_options(config: pytest.Config) -> list[str]:
    model = config.stash[USER_MODEL_KEY]
    return [f"--claim-model {shlex.quote(model)}"] if model else []


def pytest_claimcheck_environment(config: pytest.Config) -> dict[str, str]:
    model = config.stash[MODEL_KEY]
    user = (
        {CONFIRMED_ON_KEY: "the paper's model (qin2025.engine.model)"} if config.stash.get(USER_MODEL_KEY, "") else {}
    )
    return {
        "model": model.name,
        SUBJECT_KEY: subject_facts(model.regime()),
        **user,
        "dtype": "float64 unless a claim's regime says otherwise",
        "code identity": code_identity().describe(),
    }


def pytest_claimcheck_data_files(config: pytest.Config, data_dir: Path) -> list[dict[str, str]]:
    if not data_dir.is_dir():
        return []
    try:
        found = folder_provenance(data_dir)
    except OSError:
        return []
    return [
        {
            "file": str(p.path.relative_to(data_dir)),
            "size": str(p.size),
            "sha256": p.sha256,
            "status": p.status if p.match is None else f"published ({p.match.name})",
        }
        for p in found
    ]


@pytest.fixture(scope="session")
def claim_model(request: pytest.FixtureRequest) -> ModelSpec:
    """The model under test: the paper's, or the one ``--claim-model`` names."""
    return request.config.stash[MODEL_KEY]


@pytest.fixture
def claim_train(
    claim_settings: Settings, claim_store: ResultCache, claim_executor: Executor, claim_model: ModelSpec
) -> Trainer:
    """Train (model_cfg, train_cfg, data, seed) on the session's device through the result cache."""
    # a Ray task sees only the GPU it was given, as cuda:0
    on_ray = claim_executor is not LOCAL and claim_settings.device.startswith("cuda")
    device = "cuda" if on_ray else claim_settings.device
    return Trainer(claim_store, device, claim_model, executor=claim_executor, timeout=claim_settings.timeout)


def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("claim_needs")
    if marker is not None:
        model = item.config.stash[MODEL_KEY]
        lacking = missing(model, marker.args)
        if lacking:
            pytest.skip(f"the model under test ({model.name}) lacks {', '.join(lacking)}; see qin2025.engine.usermodel")


def pytest_claimcheck_record_done(item: pytest.Item, record: ClaimRecorder) -> None:
    """Say in a user model's claim records what that model is, instead of the paper's defaults."""
    if item.config.stash[USER_MODEL_KEY]:
        _label_user_model(record, item.config.stash[MODEL_KEY])


def _label_user_model(rec: ClaimRecorder, model: ModelSpec) -> None:
    """Say in the claim's regime what the user's model is, instead of the paper's defaults."""
    facts = model.regime()
    for items in rec.regime.values():
        for key in _MODEL_KEYS:
            if key in items and not model.honours(key):
                items[key] = facts.get(key, "the model's own")
    broken = model.premises_broken()
    premises = {PREMISES_KEY: "; ".join(broken)} if broken else {}
    rec.set_regime("model under test", name=model.name, **facts, **premises)
    if broken:
        rec.note(f"the model under test is outside Theorem 1's premises: {'; '.join(broken)}")
