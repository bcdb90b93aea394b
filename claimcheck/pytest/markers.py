"""Read what a test item declares: its ``claim`` marker, its protocol, and the seeds of its units."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.protocol.spec import ClaimProtocol, block_seed
from claimcheck.pytest.options import Settings

MARKER_HELP = (
    "claim(id, title, source, protocol=None): the test checks claim `id` (e.g. C1), stated in plain words as "
    "`title`, from `source` in the paper, under `protocol` (a claimcheck.protocol.spec.ClaimProtocol)"
)
NEEDS_HELP = (
    "claim_needs(*capabilities): the claim needs these capabilities of what the suite tests (the suite "
    "names them with pytest_claimcheck_capabilities); it is SKIPPED when they are lacking"
)


def claim_protocol_of(node: Any) -> ClaimProtocol | None:
    """Return the protocol the ``claim`` marker (or the module's ``PROTOCOL``) declares, if any."""
    marker = node.get_closest_marker("claim")
    if marker is None:
        return None
    proto = marker.kwargs.get("protocol")
    if proto is None:
        proto = getattr(getattr(node, "module", None), "PROTOCOL", None)
    if proto is not None and not isinstance(proto, ClaimProtocol):
        raise pytest.UsageError(f"{node.nodeid}: claim protocol must be a ClaimProtocol, got {type(proto).__name__}")
    if proto is not None and marker.args and marker.args[0] != proto.claim_id:
        raise pytest.UsageError(f"{node.nodeid}: claim {marker.args[0]!r} is given the protocol of {proto.claim_id!r}")
    return proto


def unit_seeds(s: Settings, proto: ClaimProtocol | None) -> list[int]:
    """Return the seeds of a claim's units (no protocol: the budget's seeds from its block's exploratory pool)."""
    if proto is None:
        return [block_seed(s.seed, s.budget_index, i) for i in range(s.budget.seeds)]
    return proto.seed_list(s.seed, s.budget.name, s.budget.seeds, s.pool, s.budget_index)


def record_for(node: Any) -> ClaimRecorder:
    """Return a fresh recorder for the claim test ``node`` (its claim id, its seed, its protocol)."""
    meta = claim_meta(node)
    if meta is None:
        raise pytest.UsageError(f"{node.nodeid}: claim_record needs @pytest.mark.claim(id, title, source)")
    callspec = getattr(node, "callspec", None)
    seed = callspec.params.get("claim_seed") if callspec is not None else None
    return ClaimRecorder(claim_id=meta[0], seed=seed, protocol=claim_protocol_of(node))


def claim_meta(item: pytest.Item) -> tuple[str, str, str] | None:
    """Return the (id, title, source) the item's ``claim`` marker names, or None for a test of no claim."""
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    args = list(marker.args)
    names = ("id", "title", "source")
    values = {n: (args[i] if i < len(args) else marker.kwargs.get(n, "")) for i, n in enumerate(names)}
    if not values["id"]:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.claim needs an id, e.g. claim('C1', title, source)")
    return str(values["id"]), str(values["title"]), str(values["source"])


def check_needs(items: list[pytest.Item], known: set[str]) -> None:
    """Raise a UsageError naming the test when a ``claim_needs`` marker names a capability nobody provides."""
    for item in items:
        for marker in item.iter_markers("claim_needs"):
            unknown = [n for n in marker.args if n not in known]
            if unknown:
                raise pytest.UsageError(
                    f"{item.nodeid}: claim_needs names unknown capabilities {unknown}; known: {sorted(known)}"
                )


def claim_items(nodes: Sequence[object]) -> dict[str, str]:
    """Return node id -> claim id of the claim tests among ``nodes`` (a collect report's result)."""
    return {n.nodeid: meta[0] for n in nodes if isinstance(n, pytest.Item) and (meta := claim_meta(n)) is not None}
