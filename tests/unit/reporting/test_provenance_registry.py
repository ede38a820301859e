"""The registry of provenance names (scalebench/data/provenance.yaml): the perflog format, the ingest of
perflogs and run reports and the report's provenance columns all come from it, and agree field for field."""
import dataclasses
import re

import pytest

import reframe_reports as rr
from scalebench import registry
from scalebench.hpl.case_plan import plan_hpl
from scalebench import report
from scalebench.reporting import store, tidy
from scalebench.reporting.records import Case
from scalebench.site import siteconf
from plan_specs import XHPL, ZEN4

REGISTRY = registry.provenance()
FIELDS = REGISTRY.fields


def _header(perflog_format: str) -> list[str]:
    """The header ReFrame writes above a perflog: each %(check_<name>)s of the format as <name>."""
    cells = perflog_format.split("|")
    assert all(re.fullmatch(r"%\(check_\w+\)s", cell) for cell in cells), perflog_format
    return [cell[len("%(check_"):-len(")s")] for cell in cells]


def _cells(header: list[str]) -> dict[str, str]:
    """A distinct value for every column, as a check would log it."""
    cells = {name: f"v-{name}" for name in header}
    for count, name in enumerate(f.name for f in FIELDS.values() if f.type == "int" and f.name in cells):
        cells[name] = str(count + 2)  # 2, 3, ...: no two alike, no product mistaken for another
    cells.update(result="pass", display_name=f"HPLCheck %scale={cells['scale']}", perf_var="rmax",
                 perf_value="12.5", perf_unit="Gflop/s", perf_ref="0", perf_lower_thres="null",
                 perf_upper_thres="null", perf_result="pass")
    return cells


def test_the_perflog_format_is_the_registry_in_its_order():
    header = _header(siteconf.perflog_format())
    assert header == list(REGISTRY.perflog_columns())
    assert header == [*(f.name for f in FIELDS.values() if f.perflog == "case"), *registry.PERFLOG_FIGURE_COLUMNS,
                      *(f.name for f in FIELDS.values() if f.perflog == "provenance")]
    # what the perflog carried before the registry, column for column
    assert header[:13] == ["job_completion_time", "result", "display_name", "system", "partition", "environ",
                           "stack", "scale", "num_nodes", "num_tasks", "num_tasks_per_node", "num_cpus_per_task",
                           "job_nodelist"]
    assert header[20:27] == ["deck_summary", "n_policy", "blas_kernel", "spack_lock", "transport",
                             "transport_evidence", "fabric"]
    assert header[27:] == ["binding", "interference_summary"]  # added at the end: readers take columns by name


def test_every_perflog_column_is_read_back_where_the_registry_says(tmp_path):
    header = _header(siteconf.perflog_format())
    cells = _cells(header)
    perflogs = tmp_path / "runs" / "r" / "perflogs" / "v-system" / "v-partition"
    perflogs.mkdir(parents=True)
    (perflogs / "HPLCheck.log").write_text("|".join(header) + "\n" + "|".join(cells[c] for c in header) + "\n")
    (session,), _ = store.ingest([tmp_path])
    (case,) = session.cases
    reached = set()
    for field in FIELDS.values():
        if field.perflog and field.into:
            expected = int(cells[field.name]) if field.type == "int" else cells[field.name]
            assert case.recorded(field.name) == expected, field.name
            reached.add(field.name)
    for field in REGISTRY.derived():
        source = next((name for name in field.sources if name in cells), None)
        if source is not None:
            assert case.recorded(field.name) == cells[source], field.name
            reached.add(source)
    # ranks per node and threads per rank are read only as the case's cores
    assert set(header) - reached - set(registry.PERFLOG_FIGURE_COLUMNS) == {"num_tasks_per_node",
                                                                               "num_cpus_per_task"}
    assert case.cores == int(cells["num_tasks"]) * int(cells["num_cpus_per_task"])
    assert case.figures == {"rmax": (12.5, "Gflop/s")} and case.references == {"rmax": (0.0, None, None)}


def test_a_run_report_keeps_every_registered_field(tmp_path):
    kept = {name: f"v-{name}" for name in REGISTRY.in_provenance()}
    kept.update(hpl_deck={"n": 1000}, idle_ranks=1, trials=3, job_nodelist=["n1", "n2"])
    extra = {name: value for name, value in kept.items() if name != "job_nodelist"}
    case = rr.testcase("HPLCheck", {"rmax": (1.0, "Gflop/s")}, params={"scale": "1_node"}, nodelist=("n1", "n2"),
                       extra={**extra, "hpl_binary": "xhpl", "spack_lock": "sha256:ab"})
    rr.write_run(tmp_path, "r", [case], provenance={"spack_lock_sha256": "from-the-run"})
    (session,), _ = store.ingest([tmp_path])
    (got,) = session.cases
    assert got.provenance == kept
    assert (got.binary, got.spec_hash, got.nodelist) == ("xhpl", "sha256:ab", "n1,n2")
    assert all(got.recorded(name) == value for name, value in kept.items())


def test_the_spec_hash_falls_back_to_the_runs_provenance(tmp_path):
    rr.write_run(tmp_path, "r", [rr.testcase("HPLCheck", {"rmax": (1.0, "Gflop/s")}, params={"scale": "1_node"})],
                 provenance={"lock_sha256": "from-the-run"})
    (session,), _ = store.ingest([tmp_path])
    assert session.cases[0].spec_hash == "from-the-run"


def test_the_registry_names_only_what_exists():
    case_fields = {f.name for f in dataclasses.fields(Case)}
    assert {f.into for f in FIELDS.values() if f.into} - {"provenance", "params"} <= case_fields
    assert {f.check for f in FIELDS.values() if f.check} <= {"base", *registry.registry()}
    assert [column for column, _ in REGISTRY.csv] == list(tidy.CSV_TRAILING[8:12])
    with pytest.raises(KeyError):
        Case("r", "", "s", "p", "e", "st", "HPLCheck", "n", {}, 1, 1, "pass", None, None, {}, {}).recorded("deck_sumary")


def test_the_hpl_plan_sets_only_registered_variables():
    """HPLCheck copies its plan's provenance into its variables: each one declared from the registry."""
    declared = {f.name for f in REGISTRY.recorded_by("HPLCheck")}
    knobs = {"trials"}  # the check's own variable, set to the value the plan resolved
    assert set(plan_hpl(ZEN4, XHPL, "1_node").provenance()) <= declared | knobs
    assert knobs <= set(REGISTRY.in_provenance())


@pytest.mark.parametrize("text, message", [
    ("fields: {a: {label: A, type: text}}\nappendix: [a]\ncsv: {a: a}", "fields.a.type: 'text' is not one of str"),
    ("fields: {a: {label: A, type: str, perflog: head}}\nappendix: [a]\ncsv: {a: a}",
     "fields.a.perflog: 'head' is not one of case, provenance"),
    ("fields: {a: {label: A, type: str, form: [b]}}\nappendix: [a]\ncsv: {a: a}",
     "fields.a.form: unknown key (did you mean 'from'?)"),
    ("fields: {a: {type: str}}\nappendix: [a]\ncsv: {a: a}", "fields.a.label: expected the report's name"),
    ("fields: {a: {label: A, type: str}}\nappendix: [b]\ncsv: {a: a}", "appendix: 'b' is not one of a"),
    ("fields: {a: {label: A, type: str, perflog: case, from: [b]}}\nappendix: [a]\ncsv: {a: a}",
     "a field read from other names is neither in the perflog nor declared by a check"),
])
def test_registry_mistakes_are_named(tmp_path, text, message):
    path = tmp_path / "provenance.yaml"
    path.write_text(text)
    with pytest.raises(Exception, match=re.escape(message)):
        registry.load_provenance(path)


def test_the_report_lines_are_the_registry_labels(tmp_path):
    rr.write_run(tmp_path, "r", rr.hpl("tcp", {1: 900.0}))
    md = report.write_report([tmp_path], tmp_path / "out", formats=("md",)).files["md"].read_text()
    labels = " | ".join(f.label for f in REGISTRY.appendix)
    assert labels == ("Binary | Spec/lock hash | Spack specs | Transport declared | Transport used | Decks | "
                      "Node lists")
    assert "| System | Stack | Benchmark |" in md
    # each field a line under its system, stack and benchmark (those the run recorded)
    assert all(f"- [1] {label}: " in md for label in ("Binary", "Decks", "Node lists"))
