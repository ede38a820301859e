"""The OpenFOAM benchmark (scalebench.benchmarks.openfoam) joins the central lists through scalebench.benchmarks, and
reports in the shared applications section."""
from scalebench import registry
from scalebench.benchmarks import KINDS, BENCHMARKS
from scalebench.benchmarks.openfoam import rules
from scalebench.site_plan import CHECKS
from scalebench.site import siteconf
from site_files import SITE, write


def test_the_benchmark_joins_the_central_lists():
    [openfoam] = [found for found in BENCHMARKS if found.name == "openfoam"]
    assert KINDS["openfoam"] == openfoam.parse
    assert CHECKS["OpenFOAMCheck"] == rules.CHECKS[0]
    assert {place: set(keys) for place, keys in openfoam.site_keys().items()} == {
        "stack": {"openfoam_bashrc"}, "partition": set()}
    assert openfoam.section is None and "openfoam" not in registry.SECTIONS
    assert registry.registry()["OpenFOAMCheck"].section == "application"


def test_a_spack_stack_keeps_the_bashrc_its_site_file_names(tmp_path):
    view = tmp_path / "view"
    config = siteconf.load_site(write(tmp_path, SITE.replace(
        "    env_vars: {OMPI_MCA_pml: ob1}", f"    spack_view: {view}\n    openfoam_bashrc: /opt/of/etc/bashrc")))
    assert config["environments"][0]["extras"]["openfoam_bashrc"] == "/opt/of/etc/bashrc"
