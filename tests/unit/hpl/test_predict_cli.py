"""`scalebench predict` and `plan --predict`: the model at every planned HPL scale, its JSON fields, the
closing sentence, and bad input as one named line (exit 2)."""
import json
import shutil

import pytest

from scalebench import paths
from scalebench.cli import main

SEED = str(paths.SITE_CONFIGS / "sites" / "archetypes" / "seed-10gbe.yaml")
ZEN4 = str(paths.SITE_CONFIGS / "sites" / "archetypes" / "zen4-ib.yaml")
NUMBERS = ["--dgemm-gflops", "40", "--latency-us", "6", "--bandwidth-gbs", "1.21"]


def _run(argv):
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_json_has_nodes_and_efficiency_per_case(capsys):
    assert _run(["predict", SEED, *NUMBERS, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    nodes = [case["nodes"] for case in data["cases"]]
    assert nodes == [2, 4, 6, 8, 10, 12, 16, 18, 20, 24, 25, 28, 30, 32, 36]
    for case in data["cases"]:
        assert 0 < case["efficiency"] <= 100 and case["dominant_loss"] in ("compute", "bandwidth", "latency")
        assert case["rmax_gflops"] == pytest.approx(case["efficiency"] / 100 * case["rpeak_gflops"], rel=1e-3)
        assert sum(case["losses"].values()) + case["efficiency"] == pytest.approx(100, abs=0.05)
        assert {"time_s", "n", "nb", "p", "q", "ranks", "stack", "partition", "name"} <= set(case)
    calibration = data["calibrations"][0]
    assert calibration["rank_gflops"] == 40 and calibration["latency_us"] == pytest.approx(6)
    assert calibration["bandwidth_mbs"] == pytest.approx(1210) and calibration["load_exponent"] == 0.25
    assert calibration["exchange_share"] is None  # unmeasured: one direction after the other
    assert data["summary"] and data["summary"][0].startswith("openmpi-10gbe on seed:nodes: ")


def test_text_ends_with_a_sentence_per_stack(capsys):
    assert _run(["predict", SEED, *NUMBERS]) == 0
    lines = capsys.readouterr().out.rstrip().splitlines()
    assert lines[0] == "Calibration:" and "40 Gflop/s per rank (--dgemm-gflops 40)" in lines[1]
    assert lines[-1].startswith("openmpi-10gbe on seed:nodes: 89% at 2 nodes, 86% at 36; holds >= ")


def test_filters_select_cases_as_plan_does(capsys):
    assert _run(["predict", SEED, *NUMBERS, "-n", "scale=(2|4)_nodes$", "--json"]) == 0
    assert [c["nodes"] for c in json.loads(capsys.readouterr().out)["cases"]] == [2, 4]


def test_load_exponent_asks_what_if(capsys):
    _run(["predict", SEED, *NUMBERS, "--json", "--load-exponent", "0"])
    flat = json.loads(capsys.readouterr().out)["cases"]
    _run(["predict", SEED, *NUMBERS, "--json", "--load-exponent", "1"])
    steep = json.loads(capsys.readouterr().out)["cases"]
    assert flat[0]["efficiency"] == steep[0]["efficiency"]  # 2 nodes: no load
    assert steep[-1]["efficiency"] < flat[-1]["efficiency"]


def test_cases_without_a_figure_are_listed_with_the_reason(capsys):
    assert _run(["predict", ZEN4, "--dgemm-gflops", "300", "--latency-us", "1.5", "--bandwidth-gbs", "24", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert max(c["nodes"] for c in data["cases"]) == 1024
    assert data["not_predicted"] and all("intra-node" in c["reason"] for c in data["not_predicted"])


def test_plan_predict_adds_the_predicted_rmax(capsys):
    assert _run(["plan", SEED, "-n", "HPLCheck", "--predict", *NUMBERS]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].rstrip().endswith("Predicted Rmax (Gflop/s)")
    assert lines[1].split()[-1] == "79.4"
    assert _run(["plan", SEED, "-n", "HPLCheck", "--predict", *NUMBERS, "--json"]) == 0
    case = json.loads(capsys.readouterr().out)["cases"][0]
    assert case["prediction"]["nodes"] == 2 and case["prediction"]["rmax_gflops"] == pytest.approx(79.4, abs=0.05)


def test_plan_without_predict_is_unchanged(capsys):
    assert _run(["plan", SEED, "-n", "HPLCheck", "--json"]) == 0
    assert "prediction" not in json.loads(capsys.readouterr().out)["cases"][0]


@pytest.mark.parametrize("options", [["--from", "does/not/matter"], ["--dgemm-gflops", "40"], NUMBERS,
                                     ["--load-exponent", "0.5"]])
def test_plan_refuses_calibration_without_predict(capsys, options):
    """Without --predict the model is not run: a calibration given there would be dropped unsaid."""
    assert _run(["plan", SEED, *options]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and options[0] in err and "--predict" in err


@pytest.mark.parametrize("argv, named", [
    ([SEED], "nothing to calibrate the model on"),
    ([SEED, "--dgemm-gflops", "40"], "no inter-node latency and bandwidth"),
    ([SEED, "--dgemm-gflops", "40", "--latency-us", "6"], "--latency-us and --bandwidth-gbs go together"),
    ([SEED, "--dgemm-gflops", "0", "--latency-us", "6", "--bandwidth-gbs", "1"], "argument --dgemm-gflops"),
    ([SEED, "--dgemm-gflops", "nan", "--latency-us", "6", "--bandwidth-gbs", "1"], "argument --dgemm-gflops"),
    ([SEED, "--dgemm-gflops", "40", "--latency-us", "-1", "--bandwidth-gbs", "1"], "argument --latency-us"),
    ([SEED, "--dgemm-gflops", "40", "--latency-us", "6", "--bandwidth-gbs", "inf"], "argument --bandwidth-gbs"),
    ([SEED, *NUMBERS, "--load-exponent", "5"], "argument --load-exponent"),
    ([SEED, *NUMBERS, "-n", "NoSuchCheck"], "no case matches the filters"),
    ([SEED, "--from", "does/not/exist"], "does/not/exist"),
    (["no-such-site.yaml", *NUMBERS], "no-such-site.yaml"),
])
def test_bad_input_is_one_named_line_and_exit_2(capsys, argv, named):
    assert _run(["predict", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err and "Traceback" not in err


def test_a_node_without_its_own_ping_pong_is_not_sent_to_the_inter_node_flags(capsys):
    # --latency-us and --bandwidth-gbs give the link between nodes; one node's ranks need one within it
    local = str(paths.SITE_CONFIGS / "sites" / "local.yaml")
    _run(["predict", local, "--dgemm-gflops", "40", "--latency-us", "1", "--bandwidth-gbs", "5", "-x", "1_core"])
    err = capsys.readouterr().err
    assert "no intra-node latency and bandwidth" in err and "--latency-us" not in err


def test_from_a_recorded_run_of_the_embedded_default(capsys, tmp_path):
    """This machine's plan (site_configs/sites/local.yaml), calibrated on a recorded run of the
    embedded default: its 1-core HPL's share of Rpeak and its NetPIPE within the node."""
    run = tmp_path / "results" / "runs" / "recorded"  # --from writes the results' index beside them
    run.mkdir(parents=True)
    shutil.copy(paths.REPO_ROOT / "tests" / "data" / "reframe" / "local_hpl_netpipe_run_report.json",
                run / "report.json")
    assert _run(["predict", "--from", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    calibration = next(c for c in data["calibrations"] if c["stack"] == "openmpi-sm")
    assert calibration["rank_share_of_rpeak"] == pytest.approx(72.34 / 83.2)
    cases = [c for c in data["cases"] if c["stack"] == "openmpi-sm"]
    assert cases and all(c["nodes"] == 1 for c in cases)
    assert all(c["efficiency"] <= 100 * 72.34 / 83.2 + 0.01 for c in cases)  # not above the calibration (JSON rounds)
