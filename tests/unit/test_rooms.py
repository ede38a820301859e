"""The list of benchmark rooms is explicit (scalebench.rooms.ROOMS, each room imported by name) and whole:
every folder of scalebench/rooms/ is in it, under its folder's name, and the report's sections are the
rooms' own around the shared ones."""
from scalebench import benchmarks, room
from scalebench.rooms import KINDS, ROOMS


def test_every_room_folder_is_listed_once_in_name_order():
    folders = sorted(path.name for path in room.ROOMS.iterdir() if (path / "__init__.py").is_file())
    assert [found.name for found in ROOMS] == folders, "a room's package is missing from scalebench.rooms.ROOMS"
    assert list(KINDS) == folders


def test_the_registrys_sections_are_the_rooms_own_around_the_shared_ones():
    leading = [found.name for found in ROOMS if found.section is not None and found.leads]
    others = [found.name for found in ROOMS if found.section is not None and not found.leads]
    assert benchmarks.SECTIONS == (*leading, "application", "microbenchmark", "screening", "other", *others)


def test_a_room_of_its_own_section_names_it_for_its_checks():
    """A room's section shows the checks whose registry section is the room's name."""
    sections = {entry.section for entry in benchmarks.registry().values()}
    assert {found.name for found in ROOMS if found.section is not None} <= sections
