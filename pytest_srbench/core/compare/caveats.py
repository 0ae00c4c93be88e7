"""The results guide's caveats on reading a comparison, in its words: printed by ``srbench
compare`` (text), carried in its JSON (``caveats``) and shown on the HTML comparison and the
dashboard's Compare iterations. They say what an interval does not cover; they gate nothing."""

from __future__ import annotations

CAVEATS: tuple[str, ...] = (
    "A positive estimate with an interval spanning zero is not proof of a gain.",
    "Small samples show direction only; claiming non-inferiority (quality held) needs a "
    "prespecified margin and a holdout interval.",
    "Self-hosted token-equivalent prices are not GPU-bill savings.",
    "The intervals exclude the uncertainty of baseline selection, tuning choices and data "
    "contamination.",
    "Cache-neutral cost is a counterfactual token-equivalent price, not billed spend (nor a "
    "measured cache-free execution); in a comparison it covers subject calls only.",
)


def caveat_lines() -> list[str]:
    """The caveats as the terminal prints them, under a heading."""
    return ["Caveats (how far these numbers go):", *(f"  - {text}" for text in CAVEATS)]
