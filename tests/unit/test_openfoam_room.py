"""The OpenFOAM room (scalebench.rooms.openfoam) is found without being named centrally, and reports in
the shared applications section."""
from scalebench import benchmarks, room
from scalebench.parse import KINDS
from scalebench.site_plan import CHECKS
from scalebench.rooms.openfoam import rules
from scalebench.site import siteconf
from test_siteconf import SITE, write


def test_the_room_is_found_without_being_named_centrally():
    [openfoam] = [found for found in room.rooms() if found.name == "openfoam"]
    assert KINDS["openfoam"] is openfoam.parse
    assert CHECKS["OpenFOAMCheck"] == rules.checks()[0]
    assert {place: set(keys) for place, keys in openfoam.site_keys().items()} == {
        "stack": {"openfoam_bashrc"}, "partition": set()}
    assert openfoam.section is None and "openfoam" not in benchmarks.SECTIONS
    assert benchmarks.registry()["OpenFOAMCheck"].section == "application"


def test_a_spack_stack_keeps_the_bashrc_its_site_file_names(tmp_path):
    view = tmp_path / "view"
    config = siteconf.load_site(write(tmp_path, SITE.replace(
        "    env_vars: {OMPI_MCA_pml: ob1}", f"    spack_view: {view}\n    openfoam_bashrc: /opt/of/etc/bashrc")))
    assert config["environments"][0]["extras"]["openfoam_bashrc"] == "/opt/of/etc/bashrc"
