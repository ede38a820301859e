"""The screening probe's output, mutated and random: a result whose verdict can be taken, or an
InputError naming the line, never another exception."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ, STACKABLE, mutate
from scalebench.errors import InputError
from scalebench.screening.probe import parse_probe
from scalebench.screening.verdict import judge, summary
from scalebench.site.thresholds import report_flags
from screening_outputs import interference_record, probe_text

SEEDS = [probe_text([f"n{i}" for i in range(1, n + 1)], dgemm={"n2": 0.5}, seed=n) for n in (3, 4, 7, 12)]
FLAGS = report_flags()
mutation_steps = st.lists(st.tuples(st.sampled_from(STACKABLE), st.integers(0, 2**32 - 1)), min_size=1, max_size=4)


def judged_or_named_error(text: str) -> None:
    try:
        result = parse_probe(text)
    except InputError as err:
        assert "\n" not in str(err) and str(err)
        return
    names = result.node_names()
    verdict = judge(result, FLAGS, interference_record(names, {names[0]: 0.6}, everywhere=0.3) if names else None)
    assert set(verdict.flagged_nodes()) <= set(names)
    assert not set(verdict.flagged_nodes()) & set(verdict.undecided_nodes())
    summary(verdict)


@settings(FUZZ, max_examples=150)
@given(data=st.data(), steps=mutation_steps)
def test_mutated_probe_output(data, steps):
    judged_or_named_error(mutate(data.draw(st.sampled_from(SEEDS), label="seed"), steps))


@settings(FUZZ, max_examples=60)
@given(text=st.text(max_size=2000))
def test_random_text(text):
    judged_or_named_error(text)
