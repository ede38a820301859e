"""scalebench.hpl.case_plan: the one owner of an HPL case's geometry, grid, N, NB, time limit and
provenance; and `scalebench plan`, which prints the same plans for a whole site."""
import json
import math
from dataclasses import replace

import pytest
import yaml

from scalebench import paths
from scalebench.cli import main
from scalebench.errors import InputError
from scalebench.hpl import deck
from scalebench.hpl.case_plan import HplSettings, plan_hpl, plan_tuning
from scalebench.site.jobs import LeftOut
from scalebench.site.partition import GpuSpec, PartitionHpl, PartitionSpec, Reservation, StackSpec
from scalebench.site.scales import ScaleSpec
from scalebench.site_plan import asked_reservation
from plan_specs import XHPL, ZEN4

GiB = 2**30
RULES = deck.load_rules()
HPCC = StackSpec("h", "h", ("hpl",), {"hpl_binary": "hpcc"})


def test_thirteen_ranks_launch_the_grid_the_deck_asks_for():
    plan = plan_hpl(ZEN4, XHPL, "13_cores")
    assert (plan.deck.p, plan.deck.q, plan.job.tasks, plan.job.idle_ranks, plan.job.nodes) == (3, 4, 12, 1, 1)
    name, text = plan.input_file()
    lines = text.splitlines()
    assert name == "HPL.dat" and (lines[10].split()[0], lines[11].split()[0]) == ("3", "4")
    assert "idle" in plan.grid_reason and plan.provenance()["idle_ranks"] == 1


def test_a_sub_node_scale_sizes_n_from_the_memory_of_its_cores():
    plan = plan_hpl(ZEN4, XHPL, "16_cores")
    share = 768 * GiB * 16 // 128  # 96 GiB
    assert plan.deck.memory_per_node == share
    assert plan.deck.n ** 2 * 8 <= 0.8 * share < (plan.deck.n + plan.deck.nb) ** 2 * 8 * 1.1
    assert plan.job.time_limit_s < 3 * 3600  # not the 22 hours of a whole node's memory on 16 cores
    assert "the share of its 16 of 128 cores" in plan.n_policy
    assert plan_hpl(ZEN4, XHPL, "1_core").deck.memory_per_node == 6 * GiB  # no DeckError on one core


def test_multi_node_jobs_keep_their_node_count_on_every_rank():
    for nodes, grid in ((4, (16, 32)), (16, (32, 64)), (64, (64, 128))):
        plan = plan_hpl(ZEN4, XHPL, f"{nodes}_nodes")
        assert (plan.job.nodes, plan.job.tasks, plan.job.tasks_per_node) == (nodes, nodes * 128, 128)
        assert (plan.deck.p, plan.deck.q) == grid and plan.job.idle_ranks == 0
        assert plan.job.scheduler_options("slurm") == [f"--nodes={nodes}", "--mem=0"] and plan.job.exclusive


def test_time_limit_is_safety_times_the_predicted_solves_plus_an_allowance():
    plan = plan_hpl(ZEN4, XHPL, "4_nodes", HplSettings(trials=3))
    one = deck.predicted_seconds(plan.deck.n, 0.75 * plan.rpeak_gflops)
    assert plan.predicted_s == pytest.approx(3 * one)
    assert plan.job.time_limit_s == math.ceil(RULES.time_limit_safety * 3 * one + RULES.time_limit_allowance_s)


def test_n_shrinks_to_the_partitions_longest_job_and_says_so():
    plan = plan_hpl(ZEN4, XHPL, "1024_nodes")
    assert plan.job.time_limit_s <= 86400 and plan.deck.n % plan.deck.nb == 0
    assert "capped to N=" in plan.n_policy and "24h" in plan.n_policy.replace("24h00m", "24h")
    short = PartitionSpec(**{**ZEN4.__dict__, "max_time_limit_s": 599})  # less than the allowance
    with pytest.raises(LeftOut, match=r"^time limit: even N=\d+ needs .* allows 9m59s"):
        plan_hpl(short, XHPL, "1_node")


def test_a_frozen_deck_gives_nb_algorithm_and_its_grid_at_its_rank_count(tmp_path):
    (tmp_path / "zen4").mkdir()
    (tmp_path / "zen4" / "cpu.yaml").write_text(yaml.safe_dump(
        {"nb": 384, "grid": {"p": 8, "q": 16, "ranks": 128}, "algorithm": {"bcast": "2ringM"}}))
    plan = plan_hpl(ZEN4, XHPL, "1_node", HplSettings(decks_dir=tmp_path))
    assert (plan.deck.nb, plan.deck.p, plan.deck.q, plan.deck.algorithm.bcast) == (384, 8, 16, "2ringM")
    assert plan.deck_source.startswith("frozen deck ") and "frozen deck's grid" in plan.grid_reason
    assert (plan_hpl(ZEN4, XHPL, "2_nodes", HplSettings(decks_dir=tmp_path)).deck.p,) == (16,)  # 256: 16x16


def test_threads_per_rank_come_from_the_partition_and_fit_sub_node_scales():
    hybrid = replace(ZEN4, hpl=PartitionHpl(ranks_per_node=16, threads_per_rank=8))
    node = plan_hpl(hybrid, XHPL, "1_node")
    assert (node.job.ranks_per_node, node.job.threads_per_rank, node.deck.p, node.deck.q) == (16, 8, 4, 4)
    assert node.job.env_vars["OMP_NUM_THREADS"] == node.env_vars["OPENBLAS_NUM_THREADS"] == "8"
    one = plan_hpl(hybrid, XHPL, "1_core")
    assert (one.job.ranks_per_node, one.job.threads_per_rank) == (1, 1)


GPU = PartitionSpec("g", "gpu", "slurm", "srun", 128, 64, 512 * GiB, "zen4", 2.7, 16,
                    gpus=GpuSpec(4, 80 * 10**9, 67000.0))
NVIDIA = StackSpec("n", "n", ("hpl",), {"hpl_binary": "hpl.sh", "hpl_profile": "nvidia-hpl"})


def test_a_gpu_binary_runs_one_rank_per_gpu_and_sizes_n_from_their_memory():
    plan = plan_hpl(GPU, NVIDIA, "4_nodes")
    assert (plan.job.ranks_per_node, plan.job.threads_per_rank, plan.job.gpus_per_node) == (4, 16, 4)
    assert plan.deck.memory_per_node == 4 * 80 * 10**9 and plan.deck.nb == 1024
    assert plan.rpeak_gflops == pytest.approx(4 * 4 * 67000.0)
    assert plan.profile.args == ("--dat", "HPL.dat") and "ignores pfact" in plan.provenance()["deck_source"]
    with pytest.raises(LeftOut, match="has no GPUs"):
        plan_hpl(ZEN4, NVIDIA, "1_node")


def test_hpcc_writes_hpccinf_and_a_tuning_sweep_launches_every_rank():
    name, text = plan_hpl(ZEN4, HPCC, "1_node").input_file()
    assert name == "hpccinf.txt" and len(text.splitlines()) == 36
    thirteen = PartitionSpec(**{**ZEN4.__dict__, "cores_per_node": 13, "scale_spec": ScaleSpec()})
    sweep = plan_tuning(thirteen, XHPL)
    assert sweep.job.tasks == 13 and (3, 4) in sweep.sweep.grids
    # 1 x 13 is flatter than the allowed aspect: a sweep tries no grid the plan would never run
    assert (1, 13) not in sweep.sweep.grids and any("1x13 left out" in note for note in sweep.sweep.notes)
    assert sweep.expected_cases == sweep.sweep.tests and sweep.job.time_limit_s <= 86400


def test_plan_cli_covers_the_whole_zen4_archetype(capsys):
    site = paths.SITE_CONFIGS / "sites" / "archetypes" / "zen4-ib.yaml"
    assert main(["plan", str(site), "--json", "-n", "HPLCheck"]) == 0
    data = json.loads(capsys.readouterr().out)
    scales = {case["params"]["scale"] for case in data["cases"]}
    assert {"1_node", "1024_nodes", "16_cores"} <= scales
    full = next(c for c in data["cases"] if c["params"]["scale"] == "1024_nodes")
    assert full["job"]["nodes"] == 1024 and full["hpl"]["deck"]["p"] * full["hpl"]["deck"]["q"] == full["job"]["tasks"]
    assert main(["plan", str(site), "-n", "HPLCheck%scale=2_nodes$", "-p", "^openmpi"]) == 0
    text = capsys.readouterr().out
    assert "HPLCheck %scale=2_nodes" in text and "mpich-ofi" not in text and "1 case(s) planned" in text


def test_plan_cli_bad_filters_and_variables_are_one_line_errors(capsys):
    site = str(paths.SITE_CONFIGS / "sites" / "archetypes" / "seed-10gbe.yaml")
    assert main(["plan", site, "-n", "("]) == 2
    assert main(["plan", site, "-n", "NoSuchCheck"]) == 2
    assert main(["plan", site, "-S", "nb=big"]) == 2
    assert main(["plan", site, "-S", "colour=red"]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 4 and all(line.startswith("scalebench plan: error: ") for line in errors)


def test_a_site_files_relative_binary_is_under_the_repository_and_named_when_not_built(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    built = StackSpec("b", "b", ("hpl",), {"hpl_binary": "build/bin/xhpl"})
    plan = plan_hpl(ZEN4, built, "1_node")
    assert plan.binary == str(tmp_path / "build" / "bin" / "xhpl") and plan.profile.name == "xhpl"
    assert plan.missing.startswith("HPL binary build/bin/xhpl: no executable") and "scripts/install.sh" in plan.missing
    (tmp_path / "build" / "bin").mkdir(parents=True)
    (tmp_path / "build" / "bin" / "xhpl").write_text("")
    (tmp_path / "build" / "bin" / "xhpl").chmod(0o755)
    assert plan_hpl(ZEN4, built, "1_node").missing == ""
    # a name is the job's to find on PATH, a command line's path is used as given
    assert (plan_hpl(ZEN4, XHPL, "1_node").binary, plan_hpl(ZEN4, XHPL, "1_node").missing) == ("xhpl", "")
    given = plan_hpl(ZEN4, built, "1_node", HplSettings(hpl_binary="my/xhpl"))
    assert (given.binary, given.missing) == ("my/xhpl", "")


def test_xhpl_is_asked_for_the_dgemm_ceiling_and_hpcc_and_sweeps_are_not():
    profile = plan_hpl(ZEN4, XHPL, "1_node").profile
    assert plan_hpl(ZEN4, XHPL, "1_node").env_vars[profile.dgemm_env] == str(profile.dgemm_n)
    assert not any(k.startswith("SCALEBENCH_DGEMM") for k in plan_hpl(ZEN4, HPCC, "1_node").env_vars)
    assert profile.dgemm_env not in plan_tuning(ZEN4, XHPL).env_vars


@pytest.mark.parametrize("microarch, nb, entry", [("zen4", 384, "x86_64_v4"), ("icelake", 384, "x86_64_v4"),
                                                 ("zen2", 192, "x86_64_v3"), ("haswell", 192, "x86_64_v3"),
                                                 ("knl", 336, "knl")])
def test_nb_comes_from_the_microarchitecture_table_with_its_source(microarch, nb, entry):
    plan = plan_hpl(PartitionSpec(**{**ZEN4.__dict__, "microarch": microarch}), XHPL, "1_node")
    assert plan.deck.nb == nb and f"nb_by_microarch {entry} ({microarch})" in plan.deck_source


def test_nb_without_a_table_entry_is_the_rules_and_the_check_and_frozen_decks_win(tmp_path):
    other = PartitionSpec(**{**ZEN4.__dict__, "microarch": "a64fx"})
    assert plan_hpl(other, XHPL, "1_node").deck.nb == RULES.nb
    assert plan_hpl(ZEN4, XHPL, "1_node", HplSettings(nb=128)).deck.nb == 128
    (tmp_path / "zen4").mkdir()
    (tmp_path / "zen4" / "cpu.yaml").write_text(yaml.safe_dump({"nb": 232}))
    assert plan_hpl(ZEN4, XHPL, "1_node", HplSettings(decks_dir=tmp_path)).deck.nb == 232


@pytest.mark.parametrize("entry, message", [
    ({"dgemm_env": "SCALEBENCH_DGEMM_N"}, "dgemm_env goes with dgemm_n: give both"),
    ({"dgemm_env": "A B", "dgemm_n": 2048}, "dgemm_env: 'A B' is not a variable name"),
    ({"dgemm_env": "N", "dgemm_n": 0}, "dgemm_n"),
])
def test_a_binary_profiles_dgemm_keys_are_checked(tmp_path, entry, message):
    from scalebench.errors import InputError
    from scalebench.hpl.binaries import load_profiles

    path = tmp_path / "binaries.yaml"
    path.write_text(yaml.safe_dump({"mine": {"input": "HPL.dat", **entry}}))
    with pytest.raises(InputError, match=message):
        load_profiles(path)


def test_hpl_on_part_of_an_exclusive_node_counts_every_core_it_holds():
    # 8 ranks x 1 thread on a 128-core node held whole: efficiency against 128 cores, the idle ones said
    plan = plan_hpl(ZEN4, XHPL, "1_node", HplSettings(ranks_per_node=8))
    assert plan.job.exclusive and plan.rpeak_gflops == pytest.approx(ZEN4.rpeak_gflops(1, 128))
    assert "120 of the 128 cores each node holds stay idle (8 rank(s) x 1 thread(s))" in plan.rpeak_derivation
    assert plan.to_json()["rpeak_derivation"] == plan.rpeak_derivation
    # the time it is planned to take is still that of the 8 cores that work
    assert plan.predicted_s > plan_hpl(ZEN4, XHPL, "1_node").predicted_s
    sub = plan_hpl(ZEN4, XHPL, "16_cores")  # a sub-node scale measures its cores by design
    assert sub.rpeak_gflops == pytest.approx(ZEN4.rpeak_gflops(1, 16)) and "cores of scale 16_cores" in sub.rpeak_derivation


def test_a_gpu_tuning_sweep_follows_its_binary_profile():
    sweep = plan_tuning(GPU, NVIDIA).sweep
    assert sweep.nbs == (512, 768, 1024)  # hpl_decks/binaries.yaml sweep_nbs, not the CPU list
    assert sweep.bcasts == ("1ringM",) and sweep.depths == (1,)  # hpl.sh ignores BCAST and DEPTH
    assert sweep.tests == 3 * len(sweep.grids) and sweep.base.n % math.lcm(*sweep.nbs) == 0
    assert all(q / p <= 4 for p, q in sweep.grids)


def test_a_frozen_nb_outside_the_binary_profile_is_not_used(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "gpu.yaml").write_text(yaml.safe_dump({"nb": 256, "algorithm": {"bcast": "2ringM"}}))
    plan = plan_hpl(GPU, NVIDIA, "1_node", HplSettings(decks_dir=tmp_path))
    assert plan.deck.nb == 1024
    assert "the frozen deck's NB 256 is outside binary profile nvidia-hpl's range 512-1024" in plan.deck_source


def test_a_full_system_hpl_runs_in_the_partitions_reservation_with_its_time():
    reserved = PartitionSpec(**{**ZEN4.__dict__, "max_time_limit_s": 86400,
                                "reservation": Reservation("fullsystem", 7 * 86400, from_nodes=1024)})
    full, smaller = plan_hpl(reserved, XHPL, "1024_nodes"), plan_hpl(reserved, XHPL, "512_nodes")
    capped = plan_hpl(ZEN4, XHPL, "1024_nodes")
    assert full.job.reservation.name == "fullsystem" and smaller.job.reservation is None
    assert "--reservation=fullsystem" in full.job.scheduler_options("slurm")
    assert "--reservation" not in " ".join(smaller.job.scheduler_options("slurm"))
    # a day caps N at the partition; the reservation's week lets it use the memory the nodes have
    assert "capped to N=" in capped.n_policy and "capped" not in full.n_policy
    assert full.deck.n > capped.deck.n and 86400 < full.job.time_limit_s <= 7 * 86400
    assert full.to_json()["job"]["reservation"] == {"name": "fullsystem", "time_limit_s": 604800, "from_nodes": 1024}


def test_a_reservation_asked_for_on_the_command_line_takes_every_job():
    asked = asked_reservation("hpl", "3d")
    plan = plan_hpl(ZEN4, XHPL, "2_nodes", reservation=asked)
    assert plan.job.reservation == asked and "--reservation=hpl" in plan.job.scheduler_options("slurm")
    assert asked_reservation("") is None
    with pytest.raises(InputError, match="reservation_time_limit: set with reservation=NAME"):
        asked_reservation("", "3d")
    with pytest.raises(InputError, match="reservation: 'a b' must be at most 64 letters"):
        asked_reservation("a b")


@pytest.mark.parametrize("blas, variables", [
    ("aocl", {"BLIS_NUM_THREADS"}), ("mkl", {"MKL_NUM_THREADS"}), ("libsci", set()),
    ("openblas", {"OPENBLAS_NUM_THREADS", "OPENBLAS_VERBOSE"}),
    (None, {"OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "OPENBLAS_VERBOSE"}),  # not known: all
])
def test_the_thread_count_goes_to_the_variable_the_stacks_blas_reads(blas, variables):
    hybrid = replace(ZEN4, hpl=PartitionHpl(ranks_per_node=8, threads_per_rank=16))
    stack = StackSpec("s", "s", ("hpl",), {"hpl_binary": "xhpl", **({"blas": blas} if blas else {})})
    plan = plan_hpl(hybrid, stack, "1_node")
    assert set(plan.env_vars) - {"SCALEBENCH_DGEMM_N", "OPENBLAS_CORETYPE"} == variables
    assert all(plan.env_vars[v] == "16" for v in variables if v.endswith("_THREADS"))
    assert plan.job.env_vars["OMP_NUM_THREADS"] == "16"  # every job, whatever its BLAS


def test_the_netns_lab_plans_one_rank_per_node_as_its_mpi_settings_require(capsys):
    """The lab skips Open MPI's modex fence, which holds only with one rank per node (its site file)."""
    site = paths.SITE_CONFIGS / "sites" / "testcluster-netns.yaml"
    stacks = yaml.safe_load(site.read_text())["stacks"]
    assert all(stack["env_vars"]["OMPI_MCA_pmix_base_async_modex"] == 1 for stack in stacks)
    assert main(["plan", str(site), "--json"]) == 0
    jobs = [case["job"] for case in json.loads(capsys.readouterr().out)["cases"] if "job" in case]
    assert jobs and {job["ranks_per_node"] for job in jobs} == {1}


@pytest.mark.parametrize("env, variables, backend", [
    ({"FLEXIBLAS": "OPENBLAS-OPENMP"}, {"OPENBLAS_NUM_THREADS", "OPENBLAS_VERBOSE"}, "backend openblas"),
    ({"FLEXIBLAS": "imkl"}, {"MKL_NUM_THREADS"}, "backend mkl"),
    ({"FLEXIBLAS": "/opt/blis/lib/libblis-mt.so.4"}, {"BLIS_NUM_THREADS"}, "backend blis"),
    ({"FLEXIBLAS": "NETLIB"}, set(), "backend netlib"),  # the reference BLAS: OMP_NUM_THREADS alone
    # FlexiBLAS's configured default: every thread variable, and the job's stderr names the backend
    ({}, {"OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "OPENBLAS_VERBOSE", "FLEXIBLAS_VERBOSE"},
     "backend not known (FLEXIBLAS not set"),
])
def test_flexiblas_threads_and_records_the_backend_flexiblas_names(env, variables, backend):
    hybrid = replace(ZEN4, hpl=PartitionHpl(ranks_per_node=8, threads_per_rank=16))
    stack = StackSpec("s", "s", ("hpl",), {"hpl_binary": "xhpl", "blas": "flexiblas"}, env)
    plan = plan_hpl(hybrid, stack, "1_node")
    assert set(plan.env_vars) - {"SCALEBENCH_DGEMM_N"} == variables
    assert all(plan.env_vars[v] == "16" for v in variables if v.endswith("_THREADS"))
    recorded = plan.provenance()["blas"]
    assert recorded.startswith("flexiblas (site file), ") and backend in recorded
    assert "FLEXIBLAS" not in plan.env_vars  # the stack's own variable reaches the job as the stack's


def test_flexiblas_running_an_old_openblas_gets_the_openblas_kernel_policy():
    icelake = replace(ZEN4, microarch="icelake")
    lock = "hpl@2.3 +openmp; flexiblas@3.4.4; openblas@0.3.21 threads=openmp"
    stack = StackSpec("s", "s", ("hpl",), {"hpl_binary": "xhpl"}, {"FLEXIBLAS": "OpenBLAS"},
                      lock=("sha256:0", lock))
    plan = plan_hpl(icelake, stack, "1_node")
    assert plan.env_vars["OPENBLAS_CORETYPE"] == "SkylakeX"  # what OpenBLAS 0.3.21 misdetects there
    assert plan.provenance()["blas"] == ("flexiblas 3.4.4 (the stack's spack.lock), backend openblas 0.3.21 "
                                         "(FLEXIBLAS=OpenBLAS in the stack's env_vars)")
    mkl = replace(stack, env_vars={"FLEXIBLAS": "MKL"})
    assert "OPENBLAS_CORETYPE" not in plan_hpl(icelake, mkl, "1_node").env_vars
