"""Freezing a plan: validate and normalise a manifest, then fix ``case_sha256`` and ``plan_sha256``.

Freezing is pure and makes no model request. The plan hash is taken over the
protocol-canonical JSON of the whole manifest without ``plan_sha256``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import orjson

from pytest_srbench.core.canonical import (
    SPLICED_LIST,
    canonical_list_pieces,
    canonical_splice,
    canonical_spliced_pieces,
    compact_spliced_pieces,
    digest_pieces,
    integralize,
)
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import (
    Case,
    Cell,
    CostPolicy,
    DatasetInfo,
    Limits,
    Manifest,
    Target,
    check_request_params,
    outline_document,
)
from pytest_srbench.core.plan.case_text import CaseListText, text_chunks
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS


class PlanError(InputError):
    """A manifest that cannot be frozen; the message says which rule it breaks."""


def effective_sampling(limits: Limits, sampling: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{temperature: 0, max_tokens: max_output_tokens}`` overlaid by the user's sampling."""
    merged: dict[str, Any] = {"temperature": 0, "max_tokens": limits.max_output_tokens}
    merged.update(sampling or {})
    try:
        check_request_params(merged, "sampling")
    except ValueError as error:
        raise PlanError(str(error)) from None
    return merged


def request_params_for(manifest: Manifest, target: Target) -> dict[str, Any]:
    """The generation parameters one target sends: sampling overlaid by its own params."""
    params = dict(manifest.sampling)
    params.update(target.request_params)
    return params


REPEAT_MARK = "#r"


def expand_repeats(cases: Sequence[Case], repeats: int) -> list[Case]:
    """Each case ``repeats`` times as its own case ``<id>#r<k>`` (metadata ``repeat`` and
    ``repeat_of``), repeats of one case next to each other; one repeat keeps the cases as they are."""
    if repeats < 1:
        raise PlanError(f"repeats must be >= 1, got {repeats}")
    if repeats == 1:
        return list(cases)
    return [
        case.model_copy(
            update={
                "id": f"{case.id}{REPEAT_MARK}{k}",
                "metadata": {**case.metadata, "repeat": k, "repeat_of": case.id},
            }
        )
        for case in cases
        for k in range(1, repeats + 1)
    ]


def base_case(case: Case) -> Case:
    """The case a repeat was made from (the case itself when it is no repeat)."""
    original = case.metadata.get("repeat_of")
    if not isinstance(original, str):
        return case
    metadata = {k: v for k, v in case.metadata.items() if k not in ("repeat", "repeat_of")}
    return case.model_copy(update={"id": original, "metadata": metadata})


def case_sha256(cases: Sequence[Case], text: CaseListText | None = None) -> str:
    """Digest of the exact list of distinct cases (repeats of a case count once, so runs with
    different repeat counts over the same cases stay comparable). ``text``: the cases'
    canonical text when it was already made (``CaseListText``)."""
    if text is not None and not text.has_repeats and text.made_from(cases):
        return _chunks_digest(text.chunks)
    seen: dict[str, Case] = {}
    for case in cases:
        original = base_case(case)
        seen.setdefault(original.id, original)
    return digest_pieces(
        canonical_list_pieces(case.model_dump(mode="json") for case in seen.values())
    )


PREVIEW_CONTEXT_KEYS = frozenset({"session_id", "conversation_id", "sampling_seed"})


def check_preview_context(context: Mapping[str, Any] | None, seed: int) -> dict[str, Any] | None:
    """The preview context of run-lifecycle §2.1: only session_id / conversation_id (non-empty
    strings) and sampling_seed (a signed 64-bit int, default the run seed)."""
    if context is None:
        return None
    unknown = sorted(set(context) - PREVIEW_CONTEXT_KEYS)
    if unknown:
        raise PlanError(
            f"preview_context allows only {sorted(PREVIEW_CONTEXT_KEYS)}, got {unknown}"
        )
    checked: dict[str, Any] = {}
    for key in ("session_id", "conversation_id"):
        value = context.get(key)
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise PlanError(f"preview_context.{key} must be a non-empty string")
            checked[key] = value
    sampling_seed = context.get("sampling_seed", seed)
    if isinstance(sampling_seed, bool) or not isinstance(sampling_seed, int):
        raise PlanError("preview_context.sampling_seed must be an integer")
    if not -(2**63) <= sampling_seed < 2**63:
        raise PlanError("preview_context.sampling_seed must fit in a signed 64-bit integer")
    checked["sampling_seed"] = sampling_seed
    return checked


def _check_targets(
    targets: Sequence[Target], auxiliary: Mapping[str, Target], cost_policy: str, mode: str
) -> None:
    if not targets:
        raise PlanError("a plan needs at least one target")
    if mode == "preview":
        for target in targets:
            if target.kind != "mom":
                raise PlanError(
                    f"preview mode routes without answering: target {target.id!r} is not a "
                    "mom (router) target"
                )
            if target.preview_url is None and not target.simulated:
                raise PlanError(f"preview mode: router target {target.id!r} needs a preview_url")
    seen: set[str] = set()
    for target in [*targets, *auxiliary.values()]:
        if target.id in seen:
            raise PlanError(f"target id {target.id!r} is used twice")
        seen.add(target.id)
        # a retrieval search has no price; python targets (the user's code) are priced only when
        # given prices, otherwise their cost is unknown (null), never 0
        unpriced_kinds = ("retrieval", "python")
        if cost_policy == "require_priced" and mode == "live" and target.kind not in unpriced_kinds:
            if not target.prices:
                raise PlanError(
                    f"target {target.id!r} has no prices; cost_policy require_priced needs "
                    "frozen prices for every target (or set cost_policy = 'capability_only')"
                )
            if target.kind == "single" and target.model not in target.prices:
                raise PlanError(
                    f"target {target.id!r}: prices have no entry for its model {target.model!r}"
                )
            if target.kind == "mom" and target.max_inference_calls is None:
                raise PlanError(
                    f"MoM target {target.id!r} needs max_inference_calls under require_priced"
                )
        if target.kind == "mom" and target.config_hash is None and mode == "live":
            raise PlanError(f"MoM target {target.id!r} needs a frozen config_hash")
        if target.capture_recipe and target.config_hash is None:
            raise PlanError(f"target {target.id!r}: capture_recipe needs a frozen config_hash")
    for key, target in auxiliary.items():
        if key != target.id:
            raise PlanError(f"auxiliary target key {key!r} differs from its id {target.id!r}")


def _benchmark_targets(
    named: Mapping[str, Sequence[str]] | None, present: Sequence[str], targets: Sequence[Target]
) -> dict[str, list[str]] | None:
    """Per benchmark, the targets that answer it (a plan with variants); every benchmark of
    the plan named, every target answering one."""
    if named is None:
        return None
    ids = [target.id for target in targets]
    missing = [benchmark for benchmark in present if benchmark not in named]
    if missing:
        raise PlanError(f"benchmark_targets names no targets for {missing}")
    unknown = sorted({t for b in present for t in named[b]} - set(ids))
    if unknown:
        raise PlanError(f"benchmark_targets names unknown targets {unknown}")
    idle = sorted(set(ids) - {t for b in present for t in named[b]})
    if idle:
        raise PlanError(f"target(s) {idle} answer no benchmark of the plan")
    return {b: [t for t in ids if t in set(named[b])] for b in sorted(present)}


def _normalise_cells(
    cells: Sequence[Cell] | None, cases: Sequence[Case], targets: Sequence[Target]
) -> list[Cell] | None:
    if cells is None:
        return None
    if not cells:
        raise PlanError("execution_cells must not be empty")
    order = {
        (case.id, target.id): index
        for index, (case, target) in enumerate((c, t) for c in cases for t in targets)
    }
    keys = [(cell.case_id, cell.target_id) for cell in cells]
    if len(set(keys)) != len(keys):
        raise PlanError("execution_cells has duplicates")
    unknown = [key for key in keys if key not in order]
    if unknown:
        raise PlanError(f"execution_cells names unknown (case, target) pairs: {unknown[:3]}")
    missing = {target.id for target in targets} - {cell.target_id for cell in cells}
    if missing:
        raise PlanError(f"execution_cells leaves target(s) without a cell: {sorted(missing)}")
    ordered = sorted(cells, key=lambda cell: order[(cell.case_id, cell.target_id)])
    if len(ordered) == len(order):
        return None
    return ordered


def freeze_plan(
    *,
    targets: Sequence[Target],
    cases: Sequence[Case],
    dataset: DatasetInfo,
    adapter_versions: Mapping[str, str],
    extension_weights: Mapping[str, float] | None = None,
    auxiliary_targets: Mapping[str, Target] | None = None,
    execution_cells: Sequence[Cell] | None = None,
    limits: Limits | None = None,
    sampling: Mapping[str, Any] | None = None,
    benchmark_options: Mapping[str, dict[str, Any]] | None = None,
    name: str = "sr-bench",
    cost_policy: CostPolicy = "require_priced",
    limitations: Sequence[str] = (),
    recovery: Mapping[str, Any] | None = None,
    repeats: int = 1,
    mode: Literal["live", "preview"] = "live",
    preview_context: Mapping[str, Any] | None = None,
    target_kinds: Mapping[str, Sequence[str]] | None = None,
    benchmark_targets: Mapping[str, Sequence[str]] | None = None,
) -> Manifest:
    """Validate every rule and return the frozen manifest with its hashes filled in."""
    limits = limits or Limits()
    auxiliary = dict(auxiliary_targets or {})
    if not cases:
        raise PlanError("a plan needs at least one case")
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        duplicate = next(case_id for case_id in ids if ids.count(case_id) > 1)
        raise PlanError(f"case id {duplicate!r} appears twice")
    _check_targets(targets, auxiliary, cost_policy, mode)
    if preview_context is not None and mode != "preview":
        raise PlanError("preview_context is only for preview mode")
    present = sorted({case.benchmark for case in cases})
    missing_adapters = [benchmark for benchmark in present if benchmark not in adapter_versions]
    if missing_adapters:
        raise PlanError(f"no registered adapter for benchmark(s) {missing_adapters}")
    weights = dict(BENCHMARK_WEIGHTS)
    for benchmark in present:
        if benchmark not in weights:
            weight = (extension_weights or {}).get(benchmark, 1.0)
            if not weight > 0:
                raise PlanError(f"extension benchmark {benchmark!r} needs a weight > 0")
            weights[benchmark] = weight
    sampled = effective_sampling(limits, sampling)
    if sampled["max_tokens"] > limits.max_output_tokens:
        raise PlanError("sampling max_tokens exceeds limits.max_output_tokens")
    for target in [*targets, *auxiliary.values()]:
        cap = target.request_params.get("max_tokens")
        if cap is not None and cap > limits.max_output_tokens:
            raise PlanError(f"target {target.id!r}: max_tokens exceeds limits.max_output_tokens")
    for benchmark, options in (benchmark_options or {}).items():
        for role in ("judge", "simulator"):
            bound = options.get(role)
            if bound is None:
                continue
            inventory = {target.id: target for target in [*targets, *auxiliary.values()]}
            if bound not in inventory:
                raise PlanError(f"{benchmark}: {role} target {bound!r} is not defined")
            if inventory[bound].kind != "single":
                raise PlanError(f"{benchmark}: {role} target {bound!r} must be a single model")
    text = CaseListText.of(cases)  # each case serialised once for both digests and the store
    manifest = Manifest(
        name=name,
        profile=dataset.profile,
        seed=dataset.seed,
        cost_policy=cost_policy,
        targets=[_sorted_target(target) for target in targets],
        auxiliary_targets={key: _sorted_target(auxiliary[key]) for key in sorted(auxiliary)},
        cases=list(cases),
        execution_cells=_normalise_cells(execution_cells, cases, targets),
        repeats=repeats,
        benchmark_weights={benchmark: weights[benchmark] for benchmark in sorted(weights)},
        benchmark_options=key_sorted(dict(benchmark_options or {})),
        adapter_versions={benchmark: adapter_versions[benchmark] for benchmark in present},
        limits=limits,
        sampling=key_sorted(sampled),
        case_sha256=case_sha256(cases, text),
        dataset=dataset.model_copy(update={"suites": key_sorted(list(dataset.suites))}),
        recovery=key_sorted(dict(recovery)) if recovery else None,
        limitations=list(limitations),
        mode=mode,
        preview_context=key_sorted(check_preview_context(preview_context or {}, dataset.seed))
        if mode == "preview"
        else None,
        target_kinds={b: list(k) for b, k in sorted((target_kinds or {}).items()) if b in present},
        benchmark_targets=_benchmark_targets(benchmark_targets, present, targets),
    )
    if manifest.execution_cells is None:
        covered = {target_id for _, target_id in manifest.planned_keys()}
        idle = [target.id for target in targets if target.id not in covered]
        if idle:
            raise PlanError(f"target(s) {idle} can run none of the plan's benchmarks")
    hold_case_text(manifest, text)
    return seal(manifest)


def key_sorted(value: Any) -> Any:
    """``value`` with every mapping's keys in sorted order (lists keep theirs): the order a
    stored plan's free-form fields come back in (the store writes canonical JSON), so a plan
    held in memory and the same plan read back render their reports alike."""
    if isinstance(value, Mapping):
        return {key: key_sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [key_sorted(item) for item in value]
    return value


def _sorted_target(target: Target) -> Target:
    """A target whose free-form fields (request parameters, prices, retrieval) are key-sorted."""
    return target.model_copy(
        update={
            "request_params": key_sorted(target.request_params),
            "prices": dict(sorted(target.prices.items())),
            "retrieval": key_sorted(target.retrieval),
        }
    )


def seal(manifest: Manifest) -> Manifest:
    """Return the manifest with ``plan_sha256`` recomputed from every other field."""
    return manifest.model_copy(update={"plan_sha256": plan_digest(manifest)})


def plan_digest(manifest: Manifest) -> str:
    """``digest(integralize(...))`` of the manifest without ``plan_sha256`` (the protocol's
    form: integral floats as ints), its cases serialised one at a time."""
    left_out = {"plan_sha256", "cases"}
    if manifest.benchmark_targets is None:  # a plan without variants hashes as it always did
        left_out.add("benchmark_targets")
    if manifest.replay_sources is None:  # only a replay run has sources
        left_out.add("replay_sources")
    head = integralize(manifest.model_dump(mode="json", exclude=left_out))
    text = held_case_text(manifest)
    if text is not None and not text.has_integral_floats:
        before, after = canonical_splice(head, "cases")
        return _chunks_digest([before.encode("utf-8"), *text.chunks, after.encode("utf-8")])
    cases = (integralize(case.model_dump(mode="json")) for case in manifest.cases)
    return digest_pieces(canonical_spliced_pieces(head, "cases", cases))


# Where a manifest holds its cases' text: in the instance's own ``__dict__``, beside (not
# among) its fields, so that it is copied with the manifest (``seal``'s ``model_copy``) and
# neither compared (pydantic compares fields only when the dicts' keys differ), dumped, nor
# shown. Only the text of the very case objects the manifest holds is ever used.
_HELD_TEXT = "_srbench_case_text"


def hold_case_text(manifest: Manifest, text: CaseListText) -> None:
    """Let ``manifest`` carry its cases' canonical text (a cache; the plan is unchanged)."""
    manifest.__dict__[_HELD_TEXT] = text


def held_case_text(manifest: Manifest) -> CaseListText | None:
    """The canonical text of the manifest's cases made when it was frozen, if it still holds
    it (and it is the text of exactly these cases)."""
    text = manifest.__dict__.get(_HELD_TEXT)
    if isinstance(text, CaseListText) and text.made_from(manifest.cases):
        return text
    return None


def release_case_text(manifest: Manifest) -> None:
    """Let go of the cases' text made when the plan was frozen (once the store has the plan)."""
    manifest.__dict__.pop(_HELD_TEXT, None)


def _chunks_digest(chunks: Sequence[bytes]) -> str:
    hasher = hashlib.sha256()
    for chunk in chunks:
        hasher.update(chunk)
    return hasher.hexdigest()


def manifest_json(manifest: Manifest) -> str:
    """``canonical_json`` of the whole manifest (as the store keeps it), its cases serialised
    one at a time."""
    return b"".join(manifest_json_chunks(manifest)).decode("utf-8")


def manifest_json_pieces(manifest: Manifest) -> Iterator[str]:
    """``manifest_json`` in pieces (the head, then a case at a time), for a store that
    writes the text without making it whole."""
    head = manifest.model_dump(mode="json", exclude={"cases"})
    cases = (case.model_dump(mode="json") for case in manifest.cases)
    return canonical_spliced_pieces(head, "cases", cases)


def manifest_json_chunks(manifest: Manifest) -> Iterator[bytes]:
    """``manifest_json`` as UTF-8 chunks of about a megabyte: the cases' text made when the
    plan was frozen when the manifest holds it, handed over (let go once written out: the
    store keeps the plan's text, a service or session that keeps the manifest does not)."""
    text = held_case_text(manifest)
    if text is None:
        yield from text_chunks(manifest_json_pieces(manifest))
        return
    before, after = canonical_splice(manifest.model_dump(mode="json", exclude={"cases"}), "cases")
    yield before.encode("utf-8")
    yield from text.chunks
    yield after.encode("utf-8")
    release_case_text(manifest)


def outline_json(manifest: Manifest) -> str:
    """``orjson.dumps(outline_document(manifest))`` as text (what a store keeps beside the
    manifest), its case list written a batch of cases at a time instead of made into a dict
    per case first (20 MB at 100,000 cases)."""
    document = outline_document(manifest, cases=False)
    document["cases"] = SPLICED_LIST  # (in its place: the text is the plain dump's)
    cases = ({"id": case.id, "benchmark": case.benchmark} for case in manifest.cases)
    try:
        pieces = compact_spliced_pieces(document, cases)
    except ValueError:  # the marker spelled elsewhere in the plan: the plain way
        return orjson.dumps(outline_document(manifest)).decode("utf-8")
    return b"".join(pieces).decode("utf-8")


def verify_plan(manifest: Manifest) -> None:
    """Raise when a stored manifest's hash no longer matches its content."""
    expected = seal(manifest).plan_sha256
    if manifest.plan_sha256 != expected:
        raise PlanError("reviewed_plan_changed: the manifest no longer matches its plan_sha256")
