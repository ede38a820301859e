"""The energy readers (sacct, scontrol, sh5util, HPL's solve stamps, node counters, sample files), fed
random text and mutated real outputs: a value or a named InputError, never another exception, and
never a negative or impossible energy."""
from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ, STACKABLE, mutate
from scalebench.energy import counters, sample, slurm
from scalebench.errors import InputError
from scalebench.parse.hpl_windows import solve_windows

DATA = Path(__file__).resolve().parents[1] / "data"
SEEDS = {
    "sacct": [(DATA / "slurm_energy" / name).read_text() for name in ("jobs.sacct", "wrapped.sacct", "running.sacct")],
    "profile": [(DATA / "slurm_energy" / "profile.csv").read_text()],
    "windows": [(DATA / "hpl" / "pace_multi4_hpl23.txt").read_text(),
                (DATA / "hpcc" / "hpcc142_two_appended_runs.txt").read_text()],
}
steps = st.lists(st.tuples(st.sampled_from(STACKABLE), st.integers(0, 2**32 - 1)), min_size=1, max_size=4)


def _sacct(text: str) -> None:
    try:
        for record in slurm.parse_sacct(text):
            energy = slurm.job_energy(record, exclusive=True)
            assert energy.joules is None or (math.isfinite(energy.joules) and energy.joules > 0)
    except InputError:
        pass


@settings(FUZZ, max_examples=80)
@given(data=st.data(), steps=steps)
def test_mutated_sacct(data, steps):
    _sacct(mutate(data.draw(st.sampled_from(SEEDS["sacct"])), steps))


@settings(FUZZ, max_examples=60)
@given(text=st.text(max_size=2000))
def test_random_text_everywhere(text):
    _sacct(text)
    slurm.parse_scontrol_config(text)
    try:
        slurm.parse_energy_profile(text)
    except InputError:
        pass
    for window in solve_windows(text):
        start, end = window.epochs(0)
        assert end >= start
    counters.parse_pm_counter(text), counters.parse_nvidia_smi(text), counters.parse_rocm_smi(text)


@settings(FUZZ, max_examples=60)
@given(data=st.data(), steps=steps)
def test_mutated_profile_and_windows(data, steps):
    try:
        for series in slurm.parse_energy_profile(mutate(data.draw(st.sampled_from(SEEDS["profile"])), steps)).values():
            joules = counters.power_energy_between(series, series[0][0], series[-1][0], max_gap_s=3)
            assert joules is None or joules >= 0
    except InputError:
        pass
    for window in solve_windows(mutate(data.draw(st.sampled_from(SEEDS["windows"])), steps)):
        assert window.epochs(0)[1] >= window.epochs(0)[0]


@settings(FUZZ, max_examples=60)
@given(readings=st.lists(st.tuples(st.floats(-1e12, 1e12), st.floats(0, 1e15)), max_size=40),
       wrap=st.none() | st.floats(1, 1e12), start=st.floats(-1e12, 1e12), length=st.floats(0, 1e6))
def test_unwrapped_energy_is_never_negative(readings, wrap, start, length):
    segments, _ = counters.unwrap(readings, wrap)
    joules = counters.energy_between(segments, start, start + length)
    assert joules is None or joules >= -1e-6


@settings(FUZZ, max_examples=40)
@given(text=st.text(max_size=3000))
def test_sample_files_read_or_named(tmp_path_factory, text):
    path = Path(tmp_path_factory.mktemp("s")) / "n.energy.jsonl"
    path.write_text(f'{{"format": "{sample.FORMAT}", "host": "n", "counters": '
                    f'[{{"source": "pm_counters", "domain": "node", "coverage": "node"}}]}}\n{text}\n')
    try:
        sample.read_samples(path)
    except InputError:
        pass
