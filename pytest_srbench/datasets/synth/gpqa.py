"""gpqa-diamond rows: four-option multi-step questions in biology, chemistry and physics."""

from __future__ import annotations

from collections.abc import Callable

from pytest_srbench.datasets.synth.common import Rng, Row, native_id
from pytest_srbench.datasets.synth.mcq import Numeric, draw_options, parallel_pair


def _gp_height(r: Rng) -> Numeric:
    speed = 10 * r.randint(1, 12)
    return Numeric(
        f"A ball is thrown straight up at {speed} m/s. Ignoring air resistance and taking g = 10 m/s^2, how high "
        "above the launch point does it rise?",
        speed * speed // 20,
        (speed * speed // 10, speed // 2, speed * speed // 40, speed),
        unit="m",
        low=1,
    )


def _gp_flight(r: Rng) -> Numeric:
    speed = 5 * r.randint(1, 24)
    return Numeric(
        f"A stone is launched vertically upward at {speed} m/s from ground level. Ignoring air resistance and taking "
        "g = 10 m/s^2, how many seconds pass before it lands again?",
        speed // 5,
        (speed // 10 if speed % 10 == 0 else speed // 5 + 1, speed * 2, speed // 5 + 2),
        unit="s",
        low=1,
    )


def _gp_springs(r: Rng) -> Numeric:
    result, a, b = parallel_pair(r, 60)
    return Numeric(
        f"Two springs of stiffness {a} N/m and {b} N/m are joined end to end (in series). What is the stiffness of "
        "the combination?",
        result,
        (a + b, abs(a - b) or a, (a + b) // 2),
        unit="N/m",
        low=1,
    )


def _gp_collision(r: Rng) -> Numeric:
    m1, k, final = r.randint(1, 20), r.randint(1, 5), r.randint(1, 15)
    m2, speed = m1 * k, (1 + k) * final
    return Numeric(
        f"A {m1} kg cart moving at {speed} m/s collides with a stationary {m2} kg cart and the two stick together. "
        "What is their common speed just after the collision?",
        final,
        (speed, speed // 2 if speed // 2 != final else speed + 1, final * k or final + 2),
        unit="m/s",
        low=1,
    )


def _gp_pendulum(r: Rng) -> Numeric:
    k = r.randint(2, 12)
    return Numeric(
        f"The length of a simple pendulum is multiplied by {k * k} (small oscillations, same location). By what "
        "factor is its period multiplied?",
        k,
        (k * k, k * k * k * k, 2 * k),
        low=2,
        show=lambda v: f"by a factor of {v}",
    )


def _gp_wavelength(r: Rng) -> Numeric:
    frequency, wavelength = r.randint(10, 500), r.randint(2, 200)
    speed = frequency * wavelength / 100
    return Numeric(
        f"A wave of frequency {frequency} Hz travels at {speed:g} m/s. What is its wavelength?",
        wavelength,
        (wavelength * 2, wavelength // 2 or 1, wavelength + 10),
        unit="cm",
        low=1,
    )


def _gp_dilution(r: Rng) -> Numeric:
    final, factor, volume = r.randint(2, 200), r.randint(2, 20), r.randint(5, 50)
    return Numeric(
        f"{volume} mL of a {final * factor / 1000:g} M solution is diluted with water to {volume * factor} mL. What is "
        "the new concentration?",
        final,
        (final * factor, final * factor * factor, final + factor),
        unit="mM",
        low=1,
    )


def _gp_half_life(r: Rng) -> Numeric:
    remaining, k, half_life = r.randint(1, 40), r.randint(2, 6), r.randint(2, 90)
    start = remaining * 2**k
    return Numeric(
        f"A sample holds {start} g of a radioactive isotope whose half-life is {half_life} days. How many grams of "
        f"the isotope remain after {k * half_life} days?",
        remaining,
        (
            start // k,
            remaining * 2,
            max(remaining // 2, 1) if remaining > 1 else 3,
            start // (2 * k),
        ),
        unit="g",
        low=1,
    )


def _gp_ph(r: Rng) -> Numeric:
    n, volume = r.randint(1, 5), 10 * r.randint(1, 100)
    if r.random() < 0.5:
        return Numeric(
            f"{volume} mL of hydrochloric acid at a concentration of 1e-{n} mol/L is prepared at 25 °C. What is its pH?",
            n,
            (14 - n, n + 1, n - 1 if n > 1 else n + 2),
            low=0,
        )
    return Numeric(
        f"{volume} mL of sodium hydroxide solution at a concentration of 1e-{n} mol/L is prepared at 25 °C. What is its pH?",
        14 - n,
        (n, 13 - n, 15 - n),
        low=0,
    )


_REACTIONS = (
    ("N2 + 3 H2 -> 2 NH3", {"N2": 1, "H2": 3, "NH3": 2}),
    ("2 H2 + O2 -> 2 H2O", {"H2": 2, "O2": 1, "H2O": 2}),
    ("CH4 + 2 O2 -> CO2 + 2 H2O", {"CH4": 1, "O2": 2, "CO2": 1, "H2O": 2}),
    ("2 C2H6 + 7 O2 -> 4 CO2 + 6 H2O", {"C2H6": 2, "O2": 7, "CO2": 4, "H2O": 6}),
    ("C3H8 + 5 O2 -> 3 CO2 + 4 H2O", {"C3H8": 1, "O2": 5, "CO2": 3, "H2O": 4}),
)


def _gp_stoichiometry(r: Rng) -> Numeric:
    equation, coefficients = r.choice(_REACTIONS)
    reactant, product = equation.split(" -> ")
    species_in = [part.split()[-1] for part in reactant.split(" + ")]
    species_out = [part.split()[-1] for part in product.split(" + ")]
    need, made = r.choice(species_in), r.choice(species_out)
    amount = coefficients[made] * r.randint(1, 30)
    answer = amount * coefficients[need] // coefficients[made]
    return Numeric(
        f"For the balanced reaction {equation}, how many moles of {need} are consumed when {amount} mol of {made} "
        "are produced?",
        answer,
        (amount, amount * coefficients[made], answer * 2, answer + coefficients[need]),
        unit="mol",
        low=1,
    )


def _gp_hardy_weinberg(r: Rng) -> Numeric:
    q, people = r.randint(1, 9), 100 * r.randint(1, 90)
    hetero = people * 2 * q * (10 - q) // 100
    return Numeric(
        f"A population of {people:,} individuals is in Hardy-Weinberg equilibrium for one gene, and the recessive "
        f"allele has frequency 0.{q}. How many individuals are expected to be heterozygous?",
        hetero,
        (
            people * q * q // 100,
            people * (10 - q) ** 2 // 100,
            people * q // 10,
            people * 2 * q // 10,
        ),
        show=lambda v: f"{v:,}",
    )


def _gp_chargaff(r: Rng) -> Numeric:
    adenine = r.randint(10, 40)
    base = r.choice(("guanine", "cytosine", "thymine"))
    value = adenine if base == "thymine" else 50 - adenine
    return Numeric(
        f"A double-stranded DNA sample is {adenine}% adenine. What percentage of its bases are {base}?",
        value,
        (100 - 2 * adenine, 100 - adenine, 50 + adenine, adenine, 50 - adenine, 2 * adenine),
        show=lambda v: f"{v}%",
    )


def _gp_gametes(r: Rng) -> Numeric:
    chromosomes = 2 * r.randint(3, 45)
    return Numeric(
        f"The somatic cells of a diploid organism hold {chromosomes} chromosomes. How many chromosomes does each of "
        "its gametes hold after normal meiosis?",
        chromosomes // 2,
        (chromosomes, 2 * chromosomes, chromosomes // 2 + 1),
        low=1,
    )


def _gp_divisions(r: Rng) -> Numeric:
    rounds = r.randint(3, 20)
    return Numeric(
        f"A single cell and all of its descendants divide by mitosis once per round, with no cell death. How many "
        f"cells are there after {rounds} rounds?",
        2**rounds,
        (2 * rounds, 2 ** (rounds - 1), 2 ** (rounds + 1), rounds * rounds),
        show=lambda v: f"{v:,}",
    )


def _gp_codon_space(r: Rng) -> Numeric:
    bases, length = r.randint(2, 6), r.randint(2, 5)
    return Numeric(
        f"A synthetic genetic system uses an alphabet of {bases} bases and codons of {length} bases. How many "
        "distinct codons are possible?",
        bases**length,
        (
            bases * length,
            length**bases if length**bases != bases**length else bases**length + 1,
            bases ** (length - 1),
        ),
        low=1,
    )


GPQA_DOMAINS: dict[str, tuple[Callable[[Rng], Numeric], ...]] = {
    "Biology": (_gp_hardy_weinberg, _gp_chargaff, _gp_gametes, _gp_divisions, _gp_codon_space),
    "Chemistry": (_gp_dilution, _gp_half_life, _gp_ph, _gp_stoichiometry),
    "Physics": (_gp_height, _gp_flight, _gp_springs, _gp_collision, _gp_pendulum, _gp_wavelength),
}


def gpqa_row(rng: Rng, index: int) -> Row:
    """Row ``index``: a four-option item of the index's domain (the domains take turns)."""
    domain = sorted(GPQA_DOMAINS)[index % len(GPQA_DOMAINS)]
    item = rng.choice(GPQA_DOMAINS[domain])(rng)
    options, position = draw_options(rng, item, 4)
    return {
        "correct_answer": options[position],
        "domain": domain,
        "incorrect_answers": [text for i, text in enumerate(options) if i != position],
        "question": item.question,
        "record_id": native_id(index),
    }
