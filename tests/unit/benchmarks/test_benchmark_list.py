"""The list of benchmarks is explicit (scalebench.benchmarks.BENCHMARKS, each benchmark imported by name) and whole:
every folder of scalebench/benchmarks/ is in it, under its folder's name, and the report's sections are the
benchmarks' own around the shared ones."""
from scalebench import benchmark, registry
from scalebench.benchmarks import BENCHMARKS, KINDS


def test_every_benchmark_folder_is_listed_once_in_name_order():
    folders = sorted(path.name for path in benchmark.FOLDER.iterdir() if (path / "__init__.py").is_file())
    assert [found.name for found in BENCHMARKS] == folders, "a benchmark missing from scalebench.benchmarks.BENCHMARKS"
    assert list(KINDS) == folders


def test_the_registrys_sections_are_the_benchmarks_own_around_the_shared_ones():
    leading = [found.name for found in BENCHMARKS if found.section is not None and found.leads]
    others = [found.name for found in BENCHMARKS if found.section is not None and not found.leads]
    assert registry.SECTIONS == (*leading, "application", "microbenchmark", "screening", "other", *others)


def test_a_benchmark_of_its_own_section_names_it_for_its_checks():
    """A benchmark's section shows the checks whose registry section is the benchmark's name."""
    sections = {entry.section for entry in registry.registry().values()}
    assert {found.name for found in BENCHMARKS if found.section is not None} <= sections
