"""The index beside the results (scalebench.reporting.index): a report over it is the report over the JSON,
each report is read once, and faults (a damaged index file, a full disk, two reports at once, a run still
writing) never change an answer nor anything already written (issue 33)."""
import errno
import hashlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import polars as pl
import pytest

import reframe_reports as rr
from scalebench import report
from scalebench.reporting import index, store

DATA = Path(__file__).resolve().parents[2] / "data" / "reframe"
FORMATS = ("md", "txt", "csv", "html", "parquet")
TEXT = ("txt", "csv", "parquet")  # no charts: quicker, where the pictures prove nothing more
SCALEBENCH = Path(sys.executable).with_name("scalebench")


def shipped(root: Path) -> Path:
    """A results directory of the shipped test data and its hard cases: the real run (with provenance.json),
    a copy of it, the perflogs of it alone, a dry run, a run with an impossible value, a broken report, and
    a two-stack study of every benchmark kind."""
    real = root / "runs" / "20261122T031233Z-vm-6773"
    real.mkdir(parents=True)
    shutil.copy(DATA / "hpl_local_run_report.json", real / "report.json")
    (real / "provenance.json").write_text(json.dumps({"git_describe": "v1.0-3-gabc", "spack_lock_sha256": "12ab"}))
    shutil.copytree(real, root / "runs" / "copy")
    perflogs = root / "runs" / "perflogs-only" / "perflogs" / "local" / "default"
    perflogs.mkdir(parents=True)
    shutil.copy(DATA / "hpl_local_perflog.log", perflogs / "HPLCheck.log")
    (root / "runs" / "dry").mkdir()
    shutil.copy(DATA / "hpl_dry_run_report.json", root / "runs" / "dry" / "report.json")
    rr.write_run(root, "impossible", [rr.testcase("HPLCheck", {"rmax": (-5.0, "Gflop/s")}, params={"scale": "1_node"})])
    (root / "runs" / "broken").mkdir()
    (root / "runs" / "broken" / "report.json").write_text((DATA / "hpl_local_run_report.json").read_text()[:4000])
    for i, (stack, cases) in enumerate(rr.two_stack_study().items()):
        rr.write_run(root, f"2026010{i + 1}T000000Z-head-{i}", cases, start=f"2026010{i + 1}T000000+0000")
    return written_earlier(root)


def written_earlier(root: Path) -> Path:
    """Reports as a nightly run leaves them, an hour old: the index keeps their stats (a report modified
    within two seconds of being indexed is hashed again, next time)."""
    hour_ago = os.path.getmtime(root) - 3600
    for path in root.rglob("report.json"):
        os.utime(path, (hour_ago, hour_ago))
    return root


def outputs(written: report.Written) -> dict[str, object]:
    """Each format's content, the line that says when it was generated left out."""
    out: dict[str, object] = {}
    for fmt, path in written.files.items():
        if fmt == "parquet":
            out[fmt] = pl.read_parquet(path)
        else:
            out[fmt] = "".join(line for line in path.read_text().splitlines(keepends=True) if "Generated " not in line)
    return out


def same(a: dict[str, object], b: dict[str, object]) -> bool:
    return a.keys() == b.keys() and all(a[k].equals(b[k]) if k == "parquet" else a[k] == b[k] for k in a)


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def segments(root: Path) -> list[Path]:
    return sorted(p for p in (root / "index").glob("v1-*/*") if p.is_dir())


@pytest.fixture
def results(tmp_path):
    return shipped(tmp_path / "results")


def test_a_report_over_the_index_is_the_report_over_the_json(results, tmp_path, monkeypatch):
    """The done-when of issue 33: identical outputs, JSON alone (no index), the first report (which writes
    the index) and the second (which reads it and parses no run report)."""
    alone = report.write_report([results], tmp_path / "alone", FORMATS, index=False)
    assert not (results / "index").exists()
    first = report.write_report([results], tmp_path / "first", FORMATS)
    assert len(segments(results)) == 1 and any("run report(s) kept in" in n for n in first.notes)
    parsed = []
    real_parse = store.read_report
    monkeypatch.setattr(store, "read_report", lambda path, *given: parsed.append(path) or real_parse(path, *given))
    second = report.write_report([results], tmp_path / "second", FORMATS)
    assert [p.parent.name for p in parsed] == ["broken", "dry"]  # never indexed: nothing usable in them
    assert same(outputs(alone), outputs(first)) and same(outputs(first), outputs(second))
    assert second.warnings == alone.warnings and len(alone.warnings) == 5  # broken, copy, dry, -5 Gflop/s, perflogs
    assert second.notes == [] and len(segments(results)) == 1  # nothing new: nothing written


def test_worker_processes_read_what_this_process_would(results, tmp_path, monkeypatch):
    """A year of run reports is read by a worker process per CPU, in chunks (store.PARALLEL_FROM_BYTES):
    the same sessions, cases, figures and warnings, in the same order, as read here, and the index they
    write is the one a report reads back the same. Forced here on the small shipped results."""
    here = store.load([results], index=False)
    monkeypatch.setattr(store, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setattr(store.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert len(store._chunks(sorted(results.rglob("report.json")), 2)) > 2
    pools = []

    class Pool(store.ProcessPoolExecutor):
        def map(self, *args, **kwargs):
            pools.append(list(super().map(*args, **kwargs)))
            return pools[-1]

    monkeypatch.setattr(store, "ProcessPoolExecutor", Pool)
    spread = store.load([results])
    assert len(pools) == 1 and len(pools[0]) > 2  # the chunks were read by the workers
    assert spread.warnings == here.warnings and len(here.warnings) == 5
    for name in ("sessions", "cases", "records"):
        assert getattr(spread.table, name).equals(getattr(here.table, name)), name
    assert len(segments(results)) == 1
    again = store.load([results])
    assert again.warnings == here.warnings and again.table.records.equals(here.table.records)


def test_an_unchanged_report_is_not_read_again_and_a_changed_one_is(results, tmp_path, monkeypatch):
    report.write_report([results], tmp_path / "a", ("csv",))
    written = digests(results / "index")
    reads = []
    real = index.textfile.read_bytes
    monkeypatch.setattr(index.textfile, "read_bytes", lambda path, *a: reads.append(Path(path)) or real(path, *a))
    report.write_report([results], tmp_path / "b", ("csv",))
    # Known by size, times and inode, as git knows a file; only what holds no session is read again.
    assert {p.parent.name for p in reads if p.name == "report.json"} == {"broken", "dry"}
    study = results / "runs" / "20260101T000000Z-head-0" / "report.json"
    study.write_text(study.read_text().replace('"time_start": "20260101T000000+0000"',
                                               '"time_start": "20260301T000000+0000"'))
    changed = report.write_report([results], tmp_path / "c", ("csv",))
    assert "20260301T000000+0000" in changed.files["csv"].read_text()
    assert len(segments(results)) == 2 and all(digests(results / "index")[k] == v for k, v in written.items())


def test_a_damaged_index_file_is_never_read_as_results(results, tmp_path):
    """Truncated (as a crash would leave it), or bytes changed inside (Parquet itself has no checksum), in
    each file of a segment: the report is the JSON's, the damaged file stays as it is, a note names the
    segment, and a new segment holds its reports again."""
    report.write_report([results], tmp_path / "first", ("csv",))
    (segment,) = segments(results)
    for name in ("records.parquet", "cases.parquet", "sessions.parquet", "stats.parquet", "manifest.json"):
        data = (segment / name).read_bytes()
        third = len(data) // 3
        for damage, damaged in (("truncated", data[:len(data) // 2]),
                                ("changed", data[:third] + bytes(b ^ 0xFF for b in data[third:third + 16])
                                 + data[third + 16:])):
            tree = tmp_path / f"{name}-{damage}"
            shutil.copytree(results, tree)
            (victim,) = segments(tree)
            (victim / name).write_bytes(damaged)
            before = digests(tree / "index")
            written = report.write_report([tree], tmp_path / f"{name}-{damage}-out", ("txt", "csv"))
            alone = report.write_report([tree], tmp_path / f"{name}-{damage}-json", ("txt", "csv"), index=False)
            assert same(outputs(written), outputs(alone)), (name, damage)
            assert any(n.startswith(f"index: skipped {victim}: ") for n in written.notes), (name, damage)
            assert all(digests(tree / "index")[k] == v for k, v in before.items())  # nothing rewritten
            assert len(segments(tree)) == 2


def test_an_edited_index_is_checked_as_ingest_checks_a_report(results, tmp_path):
    """Rows rewritten with their manifest (an edit, not damage): a figure ingest would leave out is
    caught by check_case's own ranges, and the reports are read from their JSON."""
    report.write_report([results], tmp_path / "first", ("csv",))
    (segment,) = segments(results)
    records = pl.read_parquet(segment / "records.parquet")
    records = records.with_columns(value=pl.when(pl.col("perf_var") == "rmax").then(-5.0).otherwise(pl.col("value")))
    (segment / "records.parquet").unlink()
    records.write_parquet(segment / "records.parquet")
    manifest = json.loads((segment / "manifest.json").read_text())
    manifest["files"]["records.parquet"] = hashlib.sha256((segment / "records.parquet").read_bytes()).hexdigest()
    (segment / "manifest.json").write_text(json.dumps(manifest))
    written = report.write_report([results], tmp_path / "edited", TEXT)
    assert same(outputs(written), outputs(report.write_report([results], tmp_path / "json", TEXT, index=False)))
    assert any(n.startswith(f"index: skipped {segment}: figure rmax of HPLCheck is -5, not positive")
               for n in written.notes), written.notes


def test_rebuild_reads_every_report_again_and_rewrites_nothing(results, tmp_path):
    first = outputs(report.write_report([results], tmp_path / "a", TEXT))
    before = digests(results / "index")
    rebuilt = report.write_report([results], tmp_path / "b", TEXT, rebuild=True)
    assert len(segments(results)) == 2 and same(outputs(rebuilt), first)
    assert all(digests(results / "index")[k] == v for k, v in before.items())
    shutil.rmtree(results / "index")  # derived from the reports: deleting it loses nothing
    assert same(outputs(report.write_report([results], tmp_path / "c", TEXT)), first)


def test_another_scalebench_never_reads_this_index(results, tmp_path, monkeypatch):
    report.write_report([results], tmp_path / "a", ("csv",))
    monkeypatch.setattr(index, "ingest_version", lambda: "0123456789abcdef")
    written = report.write_report([results], tmp_path / "b", ("csv",))
    assert len(list((results / "index").iterdir())) == 2 and any("kept in" in n for n in written.notes)


def test_a_full_disk_while_writing_the_index_costs_only_the_index(results, tmp_path, monkeypatch):
    """ENOSPC injected where the index meets the OS (os.write): the report is whole and right, the
    partial segment is gone, and the next report writes the index."""
    alone = outputs(report.write_report([results], tmp_path / "alone", TEXT, index=False))
    real_write = os.write
    budget = [4096]

    def full_disk(fd, data):
        if budget[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        budget[0] -= len(data)
        return real_write(fd, data)

    monkeypatch.setattr(index.os, "write", full_disk)
    written = report.write_report([results], tmp_path / "full", TEXT)
    assert same(outputs(written), alone)
    assert written.notes == ["index: not written (No space left on device); nothing kept, the next report reads "
                             "the run reports again"]
    assert list((results / "index").glob("v1-*/*")) == [] and list((results / "index").glob("v1-*/.*")) == []
    monkeypatch.setattr(index.os, "write", real_write)
    assert same(outputs(report.write_report([results], tmp_path / "after", TEXT)), alone)
    assert len(segments(results)) == 1


def _osu_runs(root: Path, count: int) -> Path:
    rng = random.Random(3)
    for i in range(count):
        curves = [{k: v * rng.uniform(0.9, 1.1) for k, v in d.items()} for d in rr.hockney(1.2, 12000.0)]
        rr.write_run(root, f"r{i:02d}", rr.osu("ucx", *curves))
    return root


def _limited(limit: int):
    def preexec():  # in the child: files larger than `limit` fail with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_a_file_size_limit_the_kernel_enforces_fails_the_index_not_the_report(tmp_path):
    """The same with the kernel refusing the write (RLIMIT_FSIZE, EFBIG): the index's largest file is
    larger than the limit, the report is not."""
    sizes = _osu_runs(tmp_path / "sizes", 40)
    measured = report.write_report([sizes], tmp_path / "measure", ("txt",))
    biggest = max(p.stat().st_size for p in segments(sizes)[0].iterdir())
    text_size = measured.files["txt"].stat().st_size
    limit = (biggest + text_size) // 2
    assert text_size < limit < biggest
    results = _osu_runs(tmp_path / "results", 40)
    proc = subprocess.run([str(SCALEBENCH), "report", str(results), "--out", str(tmp_path / "out"), "--format", "txt"],
                          capture_output=True, text=True, timeout=120, preexec_fn=_limited(limit))
    assert proc.returncode == 0, proc.stderr
    assert "note: index: not written (File too large)" in proc.stderr
    assert list((results / "index").glob("v1-*/*")) == [] and list((results / "index").glob("v1-*/.*")) == []
    alone = report.write_report([results], tmp_path / "alone", ("txt",), index=False)
    assert (tmp_path / "out" / "report.txt").read_text().split("\n", 4)[4] == \
        alone.files["txt"].read_text().split("\n", 4)[4]


def test_two_reports_at_once_while_a_run_writes(results, tmp_path):
    """Two `scalebench report` processes at once, while a run appends to its perflogs and then writes its
    report: each report exits 0 and reads the run as it was (perflogs, or the report); segments are
    written whole or not at all; afterwards the index gives the JSON's answer."""
    running = results / "runs" / "20260105T000000Z-node-9"
    perflogs = running / "perflogs" / "local" / "default"
    perflogs.mkdir(parents=True)
    lines = (DATA / "hpl_local_perflog.log").read_text().splitlines(keepends=True)
    stop = threading.Event()

    def run() -> None:
        log = perflogs / "HPLCheck.log"
        for line in lines:
            with log.open("a") as handle:
                handle.write(line[:len(line) // 2])
                handle.flush()
                handle.write(line[len(line) // 2:])
            if stop.wait(0.02):
                break
        data = json.loads((DATA / "hpl_local_run_report.json").read_text())
        data["session_info"]["uuid"] = "00000000-0000-4000-8000-000000000009"
        tmp = running / "report.json.part"
        tmp.write_text(json.dumps(data))
        tmp.rename(running / "report.json")

    writer = threading.Thread(target=run)
    writer.start()
    procs = [subprocess.Popen([str(SCALEBENCH), "report", str(results), "--out", str(tmp_path / f"r{i}"), "--format",
                               "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    try:
        answers = [p.communicate(timeout=120) for p in procs]
    finally:
        stop.set()
        writer.join()
    assert [p.returncode for p in procs] == [0, 0], answers
    for segment in segments(results):
        manifest = json.loads((segment / "manifest.json").read_text())
        assert {name: hashlib.sha256((segment / name).read_bytes()).hexdigest() for name in manifest["files"]} \
            == manifest["files"]
    assert not list((results / "index").glob("v1-*/.*"))
    alone = outputs(report.write_report([results], tmp_path / "alone", TEXT, index=False))
    assert same(outputs(report.write_report([results], tmp_path / "after", TEXT)), alone)


def test_an_index_that_cannot_be_written_is_a_note(results, tmp_path):
    (results / "index").write_text("a file where the index would go\n")
    written = report.write_report([results], tmp_path / "o", ("csv",))
    assert written.notes and written.notes[0].startswith(f"index: cannot write into {results / 'index'}")


def test_loose_report_files_get_no_index_beside_them(tmp_path):
    """A report given by name outside a results directory's runs/ (as tests/data/reframe): nothing is
    written beside it."""
    shutil.copy(DATA / "hpl_local_run_report.json", tmp_path / "report.json")
    report.write_report([tmp_path / "report.json"], tmp_path / "out", ("csv",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "report.json"]


def test_csv_per_benchmark_and_parquet(results, tmp_path, capsys):
    from scalebench.cli import main

    assert main(["report", str(results), "--out", str(tmp_path / "o"), "--format", "csv,parquet", "--split-csv"]) == 0
    out = capsys.readouterr().out
    split = tmp_path / "o" / "report_csv"
    assert f"Written: {split}" in out
    names = sorted(p.name for p in split.iterdir())
    assert names == ["HPLCheck.csv", "LAMMPSCheck.csv", "OSUBandwidthCheck.csv", "OSULatencyCheck.csv",
                     "OpenFOAMCheck.csv"]
    tidy = pl.read_parquet(tmp_path / "o" / "report.parquet")
    parts = [pl.read_csv(split / name, infer_schema=False) for name in names]
    assert sum(p.height for p in parts) == tidy.height
    assert "msg_size" not in parts[0].columns and "msg_size" in parts[2].columns  # each its own parameters
    assert tidy.schema["value"] == pl.Float64 and tidy.schema["num_nodes"] == pl.Int64
