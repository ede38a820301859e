"""scalebench.site.peak (Rpeak inputs and arithmetic) and scalebench.site.host (pure /proc and /sys text reads)."""
import archspec.cpu
import pytest

from scalebench.errors import InputError, PeakError
from scalebench.site import peak
from scalebench.site import host
from scalebench.site.host import Clock, HostInfo

# --- flops per cycle ----------------------------------------------------------------------------


@pytest.mark.parametrize("name, flops", [("icelake", 32), ("zen4", 16), ("zen3", 16), ("haswell", 16)])
def test_flops_per_cycle_table_entries(name, flops):
    value, source = peak.flops_per_cycle(name)
    assert value == flops
    assert source == f"table entry {name!r}"


def _unlisted_with_listed_ancestor():
    table = peak.load_flops_table()
    for name in ("graniterapids", "emeraldrapids", "zen6", "alderlake", "arrowlake"):
        target = archspec.cpu.TARGETS.get(name)
        if name not in table and target is not None:
            ancestor = next(a.name for a in target.ancestors if a.name in table)
            return name, ancestor, table[ancestor]
    pytest.skip("archspec knows none of the unlisted names tried")


def test_flops_per_cycle_walks_to_nearest_listed_ancestor():
    name, ancestor, flops = _unlisted_with_listed_ancestor()
    value, source = peak.flops_per_cycle(name)
    assert value == flops
    assert f"table entry {ancestor!r}" in source and "ancestor" in source


def test_flops_per_cycle_uses_a_given_table():
    # zen4's ancestors are zen3, x86_64_v4, zen2, ...: the nearest listed one is used
    assert peak.flops_per_cycle("zen4", {"zen2": 99})[0] == 99


def test_flops_per_cycle_unknown_name():
    with pytest.raises(PeakError, match="^microarch: 'no_such_cpu'"):
        peak.flops_per_cycle("no_such_cpu")


def test_flops_per_cycle_archspec_name_without_listed_ancestor():
    with pytest.raises(PeakError, match="^microarch: no flops_per_cycle entry"):
        peak.flops_per_cycle("x86_64")


# --- peak inputs --------------------------------------------------------------------------------

def test_peak_inputs_from_site_overrides_only():
    inputs = peak.peak_inputs({"cores_per_node": 64, "clock_ghz": 2.0, "flops_per_cycle": 32})
    assert (inputs.cores_per_node, inputs.clock_ghz, inputs.flops_per_cycle) == (64, 2.0, 32)
    assert inputs.microarch == "unknown"
    assert inputs.derivation == ("cores_per_node = 64 (site config)", "clock_ghz = 2.0 (site config)",
                                 "flops_per_cycle = 32 (site config)")


def test_peak_inputs_flops_from_site_microarch():
    inputs = peak.peak_inputs({"cores_per_node": 8, "clock_ghz": 3.0, "microarch": "zen3"})
    assert inputs.flops_per_cycle == 16 and inputs.microarch == "zen3"
    assert inputs.derivation[-1] == ("flops_per_cycle = 16 (scalebench/data/flops_per_cycle.yaml, "
                                     "table entry 'zen3')")


def test_peak_inputs_none_overrides_are_ignored():
    inputs = peak.peak_inputs({"cores_per_node": 4, "clock_ghz": 1.0, "flops_per_cycle": 8,
                               "microarch": None})
    assert len(inputs.derivation) == 3


def test_peak_inputs_missing_are_named():
    with pytest.raises(PeakError) as caught:
        peak.peak_inputs({"clock_ghz": 2.0})
    message = str(caught.value)
    assert "cores_per_node" in message and "flops_per_cycle" in message
    assert "clock_ghz" not in message


def test_peak_inputs_nothing_given():
    with pytest.raises(PeakError, match="cores_per_node, clock_ghz, flops_per_cycle"):
        peak.peak_inputs()


@pytest.mark.parametrize("field, value", [("cores_per_node", 0), ("clock_ghz", -2.0),
                                          ("flops_per_cycle", "32")])
def test_peak_inputs_bad_site_value_named(field, value):
    overrides = {"cores_per_node": 64, "clock_ghz": 2.0, "flops_per_cycle": 32, field: value}
    with pytest.raises(PeakError, match=f"^{field}: must be a positive number"):
        peak.peak_inputs(overrides)


def _host(**changes):
    values = dict(cpus=8, cores=4, sockets=1, model_name="test", microarch="haswell",
                  clock=Clock(2.5, "test clock"), memory_bytes=16 * 2**30)
    values.update(changes)
    return HostInfo(**values)


def test_peak_inputs_from_host_with_derivation():
    inputs = peak.peak_inputs(host=_host())
    assert (inputs.cores_per_node, inputs.clock_ghz, inputs.flops_per_cycle) == (4, 2.5, 16)
    assert inputs.derivation == (
        "microarch = haswell (archspec host detection)",
        "cores_per_node = 4 (physical cores in /proc/cpuinfo and CPU affinity)",
        "clock_ghz = 2.5 (test clock)",
        "flops_per_cycle = 16 (scalebench/data/flops_per_cycle.yaml, table entry 'haswell')",
    )


def test_site_override_wins_over_host():
    inputs = peak.peak_inputs({"cores_per_node": 2, "clock_ghz": None}, host=_host())
    assert inputs.cores_per_node == 2 and inputs.clock_ghz == 2.5
    assert "cores_per_node = 2 (site config)" in inputs.derivation
    assert not any("physical cores" in line for line in inputs.derivation)


def test_site_zero_is_not_replaced_by_host_value():
    with pytest.raises(PeakError, match="^cores_per_node: "):
        peak.peak_inputs({"cores_per_node": 0}, host=_host())


def test_host_without_clock_reports_missing_clock():
    with pytest.raises(PeakError, match="missing: clock_ghz"):
        peak.peak_inputs(host=_host(clock=None))


# --- Rpeak arithmetic ---------------------------------------------------------------------------

def _inputs():
    return peak.PeakInputs(cores_per_node=64, clock_ghz=2.0, flops_per_cycle=32, microarch="x",
                           derivation=())


def test_rpeak_per_node():
    assert _inputs().rpeak_gflops() == 4096.0  # 64 x 2.0 x 32


def test_rpeak_four_nodes():
    assert _inputs().rpeak_gflops(nodes=4) == 16384.0  # 4 x 64 x 2.0 x 32


def test_rpeak_sub_node():
    assert _inputs().rpeak_gflops(nodes=1, cores_per_node=8) == 512.0  # 8 x 2.0 x 32


def test_peak_json_has_per_node_rpeak():
    data = _inputs().to_json()
    assert data["rpeak_gflops_per_node"] == 4096.0 and data["derivation"] == []


# --- host: nominal clock ------------------------------------------------------------------------

CPUINFO_AT = """processor\t: 0
model name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz
cpu MHz\t\t: 3900.000

processor\t: 1
model name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz
cpu MHz\t\t: 1000.000
"""

CPUINFO_NO_AT = """processor\t: 0
model name\t: AMD EPYC 7763 64-Core Processor
cpu MHz\t\t: 2450.000
"""


def _sysfs(tmp_path, khz):
    (tmp_path / "base_frequency").write_text(f"{khz}\n")
    return tmp_path


def test_clock_from_model_name_wins(tmp_path):
    clock = host.nominal_clock(CPUINFO_AT, _sysfs(tmp_path, 2300000))
    assert clock.ghz == 2.10
    assert clock.source.startswith("CPU model name")


def test_clock_from_sysfs_base_frequency_without_at(tmp_path):
    clock = host.nominal_clock(CPUINFO_NO_AT, _sysfs(tmp_path, 2450000))
    assert clock.ghz == 2.45
    assert "base_frequency" in clock.source and "kHz" in clock.source


def test_clock_falls_back_to_cpu_mhz(tmp_path):
    clock = host.nominal_clock(CPUINFO_NO_AT, tmp_path)  # no base_frequency file
    assert clock.ghz == 2.45
    assert "cpu MHz" in clock.source


def test_clock_unknown(tmp_path):
    assert host.nominal_clock("processor\t: 0\nmodel name\t: Some CPU\n", tmp_path) is None


def test_clock_of_empty_cpuinfo(tmp_path):
    assert host.nominal_clock("", tmp_path) is None


# --- host: cores and memory ---------------------------------------------------------------------

def _cpuinfo(layout):
    """layout: (processor, physical id, core id) per logical CPU."""
    return "\n\n".join(f"processor\t: {cpu}\nphysical id\t: {socket}\ncore id\t\t: {core}"
                       for cpu, socket, core in layout) + "\n"


HYPERTHREADED = _cpuinfo([(0, 0, 0), (1, 0, 1), (2, 0, 0), (3, 0, 1)])  # 4 logical, 2 cores


def test_physical_cores_with_hyperthreads():
    assert host.physical_cores(HYPERTHREADED, {0, 1, 2, 3}) == (2, 1)


def test_physical_cores_affinity_subset_of_siblings():
    assert host.physical_cores(HYPERTHREADED, {0, 2}) == (1, 1)  # two threads of core 0


def test_physical_cores_affinity_subset_across_cores():
    assert host.physical_cores(HYPERTHREADED, {0, 1}) == (2, 1)


def test_physical_cores_two_sockets_same_core_ids():
    text = _cpuinfo([(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)])
    assert host.physical_cores(text, {0, 1, 2, 3}) == (4, 2)


def test_physical_cores_without_ids_counts_each_cpu():
    text = "processor\t: 0\n\nprocessor\t: 1\n\nprocessor\t: 2\n"
    assert host.physical_cores(text, {0, 1, 2}) == (3, 1)


def test_cpus_per_core():
    assert _host(cpus=8, cores=4).cpus_per_core == 2


def test_memory_bytes_from_meminfo():
    text = "MemTotal:       16303932 kB\nMemFree:         1234567 kB\n"
    assert host.memory_bytes(text) == 16303932 * 1024


def test_memory_bytes_without_memtotal():
    with pytest.raises(InputError):
        host.memory_bytes("MemFree: 1 kB\n")


# --- host: microarchitecture when archspec sees only a generic level ----------------------------

def _amd(family, model):
    return f"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: {family}\nmodel\t\t: {model}\n"


@pytest.mark.parametrize("family, model, name", [
    (23, 0x01, "zen"), (23, 0x31, "zen2"), (25, 0x01, "zen3"), (25, 0x11, "zen4"), (25, 0xa0, "zen4"),
    (26, 0x02, "zen5"), (26, 0x44, "zen5"),
])
def test_family_and_model_name_the_zen_generation(family, model, name):
    assert host.family_microarch(_amd(family, model)) == name


@pytest.mark.parametrize("text", [
    _amd(26, 0xff),  # a model Linux does not name
    _amd(16, 0x02),  # a family the table does not hold
    _amd(26, 0x02).replace("AuthenticAMD", "GenuineIntel"),
    "processor\t: 0\nvendor_id\t: AuthenticAMD\n",  # no family line
    _amd("x", 2),
    "",
])
def test_family_and_model_name_nothing_unlisted(text):
    assert host.family_microarch(text) is None


def _archspec_sees(monkeypatch, name):
    monkeypatch.setattr(archspec.cpu, "host", lambda: archspec.cpu.TARGETS[name])


def test_microarch_from_family_when_archspec_sees_only_the_generic_level(monkeypatch):
    # KVM on a Zen 5 EPYC hid pku, rdseed and movdiri: archspec said x86_64_v4
    _archspec_sees(monkeypatch, "x86_64_v4")
    name, source = host.microarch(_amd(26, 0x02))
    assert name == "zen5" and "cpu_families.yaml" in source and "x86_64_v4" in source


def test_microarch_keeps_the_generic_level_when_the_family_needs_more(monkeypatch):
    # AVX-512 hidden as well: the guest cannot run zen5's kernels, so its flop rate is not zen5's
    _archspec_sees(monkeypatch, "x86_64_v3")
    assert host.microarch(_amd(26, 0x02)) == ("x86_64_v3", "archspec host detection")


def test_microarch_archspec_name_wins_over_the_family(monkeypatch):
    _archspec_sees(monkeypatch, "zen4")
    assert host.microarch(_amd(26, 0x02)) == ("zen4", "archspec host detection")


def test_peak_derivation_names_where_the_microarch_came_from():
    inputs = peak.peak_inputs(host=_host(microarch="zen5", microarch_source="CPU family and model"))
    assert inputs.flops_per_cycle == 32 and inputs.derivation[0] == "microarch = zen5 (CPU family and model)"
