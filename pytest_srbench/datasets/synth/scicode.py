"""scicode rows: parameterised three-step scientific-computing problems with assert tests."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pytest_srbench.datasets.synth.common import Rng, Row, native_id


@dataclass(frozen=True)
class Step:
    """One sub-step: its function, what it asks, the reference body and its assert tests."""

    header: str
    description: str
    body: tuple[str, ...]
    result: str
    tests: tuple[str, ...]

    def code(self) -> str:
        return "\n".join((self.header, *self.body, f"    return {self.result}"))


def _close(call: str, expected: float) -> str:
    return f"assert abs({call} - ({expected!r})) <= 1e-6 * max(1.0, abs({expected!r}))"


def _tenths(r: Rng, low: float, high: float) -> float:
    return r.randint(round(low * 10), round(high * 10)) / 10


def _sci_oscillator(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (_tenths(r, 0.5, 50), _tenths(r, 0.1, 20), _tenths(r, -5, 5), _tenths(r, -10, 10))
        for _ in range(2)
    ]
    k, m, x, v = samples[0]
    energy = 0.5 * k * x**2 + 0.5 * m * v**2
    return (
        "A mass m (kg) on a spring of stiffness k (N/m) moves along a line; x is its displacement from rest (m) and "
        "v its velocity (m/s). Build the energy bookkeeping of this harmonic oscillator step by step. For example, "
        f"with k = {k}, m = {m}, x = {x} and v = {v} the total mechanical energy is {energy:.6g} J.",
        [
            Step(
                "def spring_force(k, x):",
                "Return the restoring force of the spring on the mass (Hooke's law).",
                ("    force = -k * x",),
                "force",
                tuple(_close(f"spring_force({k}, {x})", -k * x) for k, _, x, _ in samples),
            ),
            Step(
                "def potential_energy(k, x):",
                "Return the potential energy stored in the spring.",
                ("    energy = 0.5 * k * x ** 2",),
                "energy",
                tuple(
                    _close(f"potential_energy({k}, {x})", 0.5 * k * x**2) for k, _, x, _ in samples
                ),
            ),
            Step(
                "def total_energy(k, m, x, v):",
                "Return the total mechanical energy (potential plus kinetic).",
                ("    energy = potential_energy(k, x) + 0.5 * m * v ** 2",),
                "energy",
                tuple(
                    _close(f"total_energy({k}, {m}, {x}, {v})", 0.5 * k * x**2 + 0.5 * m * v**2)
                    for k, m, x, v in samples
                ),
            ),
        ],
    )


_GRAVITY = (("Earth", 9.81), ("the Moon", 1.62), ("Mars", 3.71), ("a test planet", 5.0))


def _sci_projectile(r: Rng) -> tuple[str, list[Step]]:
    place, g = r.choice(_GRAVITY)
    samples = [(_tenths(r, 1, 80), float(r.randint(5, 85))) for _ in range(2)]

    def parts(speed: float, angle: float) -> tuple[float, float]:
        return speed * math.cos(math.radians(angle)), speed * math.sin(math.radians(angle))

    def duration(speed: float, angle: float) -> float:
        return 2 * parts(speed, angle)[1] / g

    speed, angle = samples[0]
    return (
        f"A projectile is launched from flat ground on {place} (g = {g} m/s^2) with speed v0 (m/s) at angle_deg "
        "degrees above the horizontal; air resistance is neglected. Compute its flight step by step. For example, "
        f"launched at {speed} m/s and {angle:g} degrees it lands {parts(speed, angle)[0] * duration(speed, angle):.6g} m away.",
        [
            Step(
                "def launch_components(speed, angle_deg):",
                "Return the tuple (vx, vy) of the initial horizontal and vertical velocity.",
                (
                    "    vx = speed * np.cos(np.radians(angle_deg))",
                    "    vy = speed * np.sin(np.radians(angle_deg))",
                    "    components = (vx, vy)",
                ),
                "components",
                tuple(
                    _close(f"launch_components({s}, {a})[{i}]", parts(s, a)[i])
                    for s, a in samples
                    for i in (0, 1)
                ),
            ),
            Step(
                "def flight_time(speed, angle_deg):",
                f"Return the time (s) until the projectile lands again, with g = {g} m/s^2.",
                ("    vy = launch_components(speed, angle_deg)[1]", f"    duration = 2 * vy / {g}"),
                "duration",
                tuple(_close(f"flight_time({s}, {a})", duration(s, a)) for s, a in samples),
            ),
            Step(
                "def horizontal_range(speed, angle_deg):",
                "Return the horizontal distance (m) covered before landing.",
                (
                    "    vx = launch_components(speed, angle_deg)[0]",
                    "    distance = vx * flight_time(speed, angle_deg)",
                ),
                "distance",
                tuple(
                    _close(f"horizontal_range({s}, {a})", parts(s, a)[0] * duration(s, a))
                    for s, a in samples
                ),
            ),
        ],
    )


def _sci_decay(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (float(r.randint(100, 10**6)), _tenths(r, 0.5, 500), _tenths(r, 0, 800)) for _ in range(2)
    ]

    def rate(half_life: float) -> float:
        return math.log(2) / half_life

    def left(n0: float, half_life: float, t: float) -> float:
        return n0 * math.exp(-rate(half_life) * t)

    n0, half_life, t = samples[0]
    return (
        "A radioactive sample starts with n0 nuclei of an isotope whose half-life is half_life (in any time unit, "
        "the same for t). Describe its decay step by step. For example, with n0 = "
        f"{n0:g}, half_life = {half_life} and t = {t}, about {left(n0, half_life, t):.6g} nuclei remain.",
        [
            Step(
                "def decay_constant(half_life):",
                "Return the decay constant (per time unit).",
                ("    rate = np.log(2) / half_life",),
                "rate",
                tuple(_close(f"decay_constant({h})", rate(h)) for _, h, _ in samples),
            ),
            Step(
                "def remaining_nuclei(n0, half_life, t):",
                "Return the expected number of nuclei left at time t.",
                ("    count = n0 * np.exp(-decay_constant(half_life) * t)",),
                "count",
                tuple(
                    _close(f"remaining_nuclei({n}, {h}, {t})", left(n, h, t)) for n, h, t in samples
                ),
            ),
            Step(
                "def activity(n0, half_life, t):",
                "Return the activity (decays per time unit) at time t.",
                ("    decays = decay_constant(half_life) * remaining_nuclei(n0, half_life, t)",),
                "decays",
                tuple(
                    _close(f"activity({n}, {h}, {t})", rate(h) * left(n, h, t))
                    for n, h, t in samples
                ),
            ),
        ],
    )


def _sci_rc(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (
            _tenths(r, 1, 24),
            float(r.randint(100, 100_000)),
            r.randint(1, 999) * 1e-6,
            r.randint(1, 400) * 1e-3,
        )
        for _ in range(2)
    ]

    def voltage(v0: float, res: float, cap: float, t: float) -> float:
        return v0 * (1 - math.exp(-t / (res * cap)))

    v0, res, cap, t = samples[0]
    return (
        "A capacitor of capacitance c (F), initially uncharged, is charged through a resistor r (ohm) from a source "
        f"of voltage v0 (V). Describe the charging step by step. For example, with v0 = {v0}, r = {res:g}, "
        f"c = {cap!r} and t = {t!r} s the capacitor holds {voltage(v0, res, cap, t):.6g} V.",
        [
            Step(
                "def time_constant(r, c):",
                "Return the circuit's time constant (s).",
                ("    tau = r * c",),
                "tau",
                tuple(
                    _close(f"time_constant({res!r}, {cap!r})", res * cap)
                    for _, res, cap, _ in samples
                ),
            ),
            Step(
                "def capacitor_voltage(v0, r, c, t):",
                "Return the capacitor's voltage at time t.",
                ("    voltage = v0 * (1 - np.exp(-t / time_constant(r, c)))",),
                "voltage",
                tuple(
                    _close(
                        f"capacitor_voltage({v!r}, {res!r}, {cap!r}, {t!r})",
                        voltage(v, res, cap, t),
                    )
                    for v, res, cap, t in samples
                ),
            ),
            Step(
                "def charging_current(v0, r, c, t):",
                "Return the current (A) through the resistor at time t.",
                ("    current = (v0 - capacitor_voltage(v0, r, c, t)) / r",),
                "current",
                tuple(
                    _close(
                        f"charging_current({v!r}, {res!r}, {cap!r}, {t!r})",
                        (v - voltage(v, res, cap, t)) / res,
                    )
                    for v, res, cap, t in samples
                ),
            ),
        ],
    )


def _sci_gas(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (_tenths(r, 0.1, 10), float(r.randint(150, 900)), _tenths(r, 0.1, 5), _tenths(r, 5.1, 20))
        for _ in range(2)
    ]
    constant = 8.314

    def work(n: float, temperature: float, v1: float, v2: float) -> float:
        return n * constant * temperature * math.log(v2 / v1)

    n, temperature, v1, v2 = samples[0]
    return (
        "n moles of an ideal gas at temperature T (K) occupy a volume V (m^3); use R = 8.314 J/(mol K). Analyse an "
        f"isothermal expansion step by step. For example, {n} mol at {temperature:g} K expanding from {v1} to {v2} "
        f"m^3 does {work(n, temperature, v1, v2):.6g} J of work.",
        [
            Step(
                "def gas_pressure(n, temperature, volume):",
                "Return the pressure (Pa) from the ideal gas law.",
                ("    pressure = n * 8.314 * temperature / volume",),
                "pressure",
                tuple(
                    _close(f"gas_pressure({n}, {t}, {v})", n * constant * t / v)
                    for n, t, v, _ in samples
                ),
            ),
            Step(
                "def isothermal_work(n, temperature, v1, v2):",
                "Return the work (J) done by the gas expanding isothermally from v1 to v2.",
                ("    work = n * 8.314 * temperature * np.log(v2 / v1)",),
                "work",
                tuple(
                    _close(f"isothermal_work({n}, {t}, {a}, {b})", work(n, t, a, b))
                    for n, t, a, b in samples
                ),
            ),
            Step(
                "def heat_absorbed(n, temperature, v1, v2):",
                "Return the heat (J) the gas absorbs in that isothermal expansion (its internal energy does not change).",
                ("    heat = isothermal_work(n, temperature, v1, v2)",),
                "heat",
                tuple(
                    _close(f"heat_absorbed({n}, {t}, {a}, {b})", work(n, t, a, b))
                    for n, t, a, b in samples
                ),
            ),
        ],
    )


def _sci_statistics(r: Rng) -> tuple[str, list[Step]]:
    samples = [[_tenths(r, 0, 100) for _ in range(r.randint(4, 9))] for _ in range(2)]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    def variance(values: list[float]) -> float:
        center = mean(values)
        return sum((value - center) ** 2 for value in values) / (len(values) - 1)

    first = samples[0]
    return (
        "Repeated measurements of one quantity are given as a list of floats. Summarise them step by step. For "
        f"example, the measurements {first} have a standard error of the mean of "
        f"{math.sqrt(variance(first) / len(first)):.6g}.",
        [
            Step(
                "def sample_mean(values):",
                "Return the arithmetic mean of the measurements.",
                ("    mean = sum(values) / len(values)",),
                "mean",
                tuple(_close(f"sample_mean({s})", mean(s)) for s in samples),
            ),
            Step(
                "def sample_variance(values):",
                "Return the unbiased sample variance (divide by n - 1).",
                (
                    "    center = sample_mean(values)",
                    "    variance = sum((v - center) ** 2 for v in values) / (len(values) - 1)",
                ),
                "variance",
                tuple(_close(f"sample_variance({s})", variance(s)) for s in samples),
            ),
            Step(
                "def standard_error(values):",
                "Return the standard error of the mean.",
                ("    error = np.sqrt(sample_variance(values) / len(values))",),
                "error",
                tuple(
                    _close(f"standard_error({s})", math.sqrt(variance(s) / len(s))) for s in samples
                ),
            ),
        ],
    )


SCICODE_FAMILIES: tuple[Callable[[Rng], tuple[str, list[Step]]], ...] = (
    _sci_oscillator,
    _sci_projectile,
    _sci_decay,
    _sci_rc,
    _sci_gas,
    _sci_statistics,
)


def scicode_row(rng: Rng, index: int) -> Row:
    """Row ``index``: a three-step problem of the index's family (the families take turns)."""
    description, steps = SCICODE_FAMILIES[index % len(SCICODE_FAMILIES)](rng)
    return {
        "problem_description": description,
        "problem_id": native_id(index),
        "reference_steps": [step.code() for step in steps],
        "required_dependencies": "import numpy as np",
        "sub_steps": [
            {
                "function_header": step.header,
                "return_line": f"    return {step.result}",
                "step_description": step.description,
                "step_number": number,
                "tests": list(step.tests),
            }
            for number, step in enumerate(steps, start=1)
        ],
    }
