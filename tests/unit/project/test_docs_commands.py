"""The docs a newcomer follows word for word (README.md and docs/*.md). Every command line of their fenced
shell blocks that starts with scalebench, make or reframe is run here, in a copy of the repository,
against its data; or it is listed in ELSEWHERE with the file that runs it or why it cannot run here.
Every relative link and anchor between the docs resolves, and the reference names every site key."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VENV_BIN, file_hashes
from scalebench.cli import main

PAGES = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
PROGRAMS = ("scalebench", ".venv/bin/scalebench", "make", "reframe", ".venv/bin/reframe")
SHELL = {"", "sh", "bash", "shell", "console"}

# Placeholders a reader replaces with their own; here, what the repository ships.
SUBSTITUTIONS = {
    "site_configs/sites/<site>.yaml": "site_configs/sites/archetypes/zen4-ib.yaml",
    "SCALEBENCH_SPACK_SITE=<site>": "SCALEBENCH_SPACK_SITE=example-cray-ex",
    "--system <system> --partition <partition>": "--system local --partition default",
}
# Files the commands read that a run would have written: recorded real outputs stand in for them.
INPUTS = {
    "results/runs/20261125T000000Z-vm-1/report.json": "tests/data/reframe/local_hpl_netpipe_run_report.json",
    "hpccoutf.txt": "tests/data/hpcc/hpcc150_8procs_full.txt",
}

SITE_S = "needs a real Slurm site"
YOURS = "your_config.py is a site's own ReFrame configuration"
# The one table of doc commands not run here: (the file that runs it, or "", and why not here).
ELSEWHERE = {
    "make run": (
        "tests/integration/test_concurrent_runs.py",
        "7-9 minutes; that test runs its `scalebench run --report`, and make test its scripts/install.sh"),
    "make test": (".ci/run", "CI runs exactly this; it is the whole suite"),
    "make install": ("tests/integration/test_site_install.py", "installs a .venv"),
    "make install WHEELHOUSE=wheelhouse": (
        "tests/integration/test_site_install.py", "installs a .venv from a wheelhouse"),
    "make wheelhouse": (
        "tests/wheel_cache.py", "asks the package registry for ~470 MiB; that file makes one Python's at a time"),
    "make wheelhouse PYTHONS=3.12 PLATFORMS=aarch64": (
        "tests/wheel_cache.py", "asks the package registry; that file makes one per Python and machine"),
    ".venv/bin/scalebench run --report -- -x '%scaling=weak'": (
        "tests/integration/test_concurrent_runs.py", "the whole suite on this machine: minutes"),
    ".venv/bin/scalebench run -- -n 'HPLCheck%scale=1_node$' -S nb=128": (
        "tests/integration/test_concurrent_runs.py", "real HPL through ReFrame"),
    ".venv/bin/scalebench run -- -n GROMACSCheck -x '%scaling=weak'": (
        "tests/integration/test_reframe_gromacs.py", "real GROMACS through ReFrame: that test runs its 1-core case"),
    ".venv/bin/reframe -C site_configs/local.py -c reframe_tests -r": (
        "tests/integration/test_reframe_references.py", "every check on this machine: minutes"),
    "scalebench facts template your_config.py --system eiger > facts/eiger.yaml": (
        "tests/unit/site/test_site_reframe_config.py", YOURS),
    "scalebench facts template your_config.py --system eiger --slurm > facts/eiger.yaml": (
        "tests/unit/site/test_site_reframe_config.py", f"{YOURS}; --slurm runs scontrol and sinfo"),
    "scalebench plan your_config.py --system eiger -n HPLCheck": (
        "tests/integration/test_site_reframe_configs.py", YOURS),
    "reframe -C your_config.py -c <scalebench_checks> --system eiger --dry-run": (
        "tests/integration/test_site_reframe_configs.py", YOURS),
    "reframe -C your_config.py -c <scalebench_checks> --system eiger:mc -r": ("", f"{YOURS}; {SITE_S}"),
    "scalebench run --config your_config.py --facts facts/eiger.yaml -- --system eiger -n HPLCheck": (
        "", f"{YOURS}; {SITE_S}"),
    ".venv/bin/scalebench facts slurm --partition normal": (
        "tests/integration/test_slurm_facts_live.py", "runs scontrol and sinfo: the throwaway cluster"),
    "scalebench references freeze results/ --system local": (
        "tests/integration/test_reframe_references.py", "needs three accepted runs of every figure"),
    "scalebench compare results/ --by stack --figure gflops_per_watt": (
        "tests/unit/energy/test_energy_report.py", "the recorded run has no energy figures"),
    "scalebench predict site_configs/sites/<site>.yaml --from results/": (
        "tests/unit/hpl/test_predict_cli.py", "needs runs of the site's own stacks"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests/screening.py -n ScreeningCheck -r": (
        "tests/integration/test_slurm_screening_check.py", f"{SITE_S}: that test screens the throwaway one"),
    ".venv/bin/scalebench screen results/": (
        "tests/integration/test_slurm_screening_check.py", "needs screening results"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests/screening.py -n ScreeningCheck "
    "--system <system>:<partition> -p '^<stack>$' -S screen_nodes='n[1-5]' -r": (
        "tests/integration/test_slurm_screening_check.py", f"{SITE_S}: that test runs the printed re-screen"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests/hpl.py -n NodeHealthCheck --distribute=all -r": (
        "tests/integration/test_slurm_screening.py", f"{SITE_S}: that test runs it on the throwaway one"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests -c reframe_tests/tuning --system <system> "
    "--dry-run": ("tests/integration/test_dry_run_sites.py", "that test dry-runs every shipped site"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests/tuning -r -S freeze=true": (
        "tests/integration/test_reframe_tune.py", f"{SITE_S}: that test sweeps and freezes on this machine"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests -r": (
        "tests/integration/test_slurm_hpl.py", f"{SITE_S}: that test runs HPL on the throwaway one"),
    ".venv/bin/reframe -C site_configs/slurm.py -c reframe_tests/hpl.py -r -n 'HPLCheck%scale=1024_nodes$' "
    "-S reservation=fullsystem -S reservation_time_limit=3d": (
        "tests/unit/hpl/test_hpl_plan.py", f"{SITE_S} and its reservation; that test plans the case in it"),
    "SCALEBENCH_SITE=site_configs/sites/testcluster.yaml .venv/bin/reframe -C site_configs/slurm.py "
    "-c reframe_tests/hpl.py -r -n '%scale=(1_node|2_nodes|4_nodes)$' -S ranks_per_node=1": (
        "tests/integration/test_slurm_hpl.py", "starts the throwaway cluster as root"),
}


@dataclass(frozen=True)
class DocCommand:
    page: str                      # relative to the repository
    text: str                      # as written, continuation lines joined, comment dropped
    exports: tuple[str, ...] = ()  # its block's `export` lines above it
    output: tuple[str, ...] = ()   # in a console block, the lines under it

    @property
    def program(self) -> str:
        words = self.text.split()
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):  # VAR=value before the program
            words.pop(0)
        return words[0] if words else ""

    @property
    def synopsis(self) -> bool:
        """A usage line ([optional], a|b, ...), not a command to run."""
        bare = re.sub(r"'[^']*'", "", self.text)
        return bool(re.search(r"\[|\||\.\.\.", bare))


def _joined(lines: list[str]) -> list[str]:
    out, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].strip() + " "
        else:
            out.append(pending + line.strip())
            pending = ""
    return out


def _block(page: str, kind: str, lines: list[str]) -> list[DocCommand]:
    found, exports, current = [], [], None
    for line in _joined(lines) + (["$ "] if kind == "console" else []):
        if kind == "console":  # `$ command`, then what it prints
            if line.startswith("$ "):
                if current is not None:
                    found.append(DocCommand(page, current[0], (), tuple(current[1])))
                current = (line[2:].strip(), []) if line[2:].strip() else None
            elif current is not None:
                current[1].append(line)
            continue
        text = " ".join(re.sub(r"\s#\s.*$", "", line).split())
        if text.startswith("export "):
            exports.append(text)
        elif text:
            found.append(DocCommand(page, text, tuple(exports)))
    return [c for c in found if c.program in PROGRAMS]


def doc_commands() -> list[DocCommand]:
    commands = []
    for path in PAGES:
        block, kind, indent = None, "", ""
        for line in path.read_text().splitlines():
            fence = re.match(r"^(\s*)```\s*([\w-]*)", line)
            if block is None and fence:
                block, indent, kind = [], fence.group(1), fence.group(2)
            elif block is not None and fence:
                if kind in SHELL:
                    commands += _block(str(path.relative_to(REPO)), kind, block)
                block = None
            elif block is not None:
                block.append(line[len(indent):] if line.startswith(indent) else line.strip())
    return commands


COMMANDS = doc_commands()
BY_TEXT = {c.text: c for c in COMMANDS}
# One run per command and its exports, however many pages show it.
RUN_HERE = list({(c.text, c.exports): c for c in COMMANDS if c.text not in ELSEWHERE and not c.synopsis}.values())


def _substituted(text: str) -> str:
    for placeholder, value in SUBSTITUTIONS.items():
        text = text.replace(placeholder, value)
    return text


# --- every command is run here or listed -----------------------------------------------------------

def test_every_doc_command_runs_here_or_is_listed():
    for command in RUN_HERE:
        where = f"{command.page}: {command.text}"
        assert command.program != "make", f"{where}: a make target is never run here; list it in ELSEWHERE"
        assert not re.search(r"<\w+>", _substituted(" ".join([*command.exports, command.text]))), (
            f"{where}: a placeholder with no SUBSTITUTIONS entry; add one, or list it in ELSEWHERE")


def test_the_table_lists_only_commands_the_docs_show():
    shown = set(BY_TEXT)
    assert not set(ELSEWHERE) - shown, f"in ELSEWHERE but in no doc: {sorted(set(ELSEWHERE) - shown)}"
    for command, (runs_it, why) in ELSEWHERE.items():
        assert why, command
        assert not runs_it or (REPO / runs_it).is_file(), f"{command}: {runs_it} does not exist"
    everything = " ".join(c.text + " " + " ".join(c.exports) for c in COMMANDS)
    assert all(p in everything for p in SUBSTITUTIONS), "a SUBSTITUTIONS entry no doc command has"


def test_the_readme_is_short_and_names_make_test():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert "make test" in BY_TEXT and BY_TEXT["make test"].page == "README.md"
    assert "exec make test" in (REPO / ".ci" / "run").read_text()


@dataclass
class Ran:
    status: int
    stdout: str
    stderr: str
    clone: Path


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[tuple[str, tuple[str, ...]], Ran]:
    """Every RUN_HERE command, two at a time, in a copy of the repository (SCALEBENCH_HOME: what a command
    writes by the repository's own paths lands in the copy too)."""
    clone = tmp_path_factory.mktemp("clone")
    shutil.copytree(REPO, clone, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "results", "__pycache__", ".cache", "wheelhouse", ".pytest_cache"))
    (clone / ".venv").symlink_to(VENV_BIN.parent)
    for target, source in INPUTS.items():
        (clone / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / source, clone / target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCALEBENCH_")}
    env.update(SCALEBENCH_HOME=str(clone), PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}")
    before = file_hashes(REPO / "site_configs") | file_hashes(REPO / "hpl_decks")

    def run(command: DocCommand) -> tuple[tuple[str, tuple[str, ...]], Ran]:
        script = "\n".join([*map(_substituted, command.exports), _substituted(command.text)])
        proc = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True,
                              timeout=300)
        return (command.text, command.exports), Ran(proc.returncode, proc.stdout, proc.stderr, clone)

    def run_all(commands: list[DocCommand]) -> list[tuple[tuple[str, tuple[str, ...]], Ran]]:
        return [run(c) for c in commands]

    # ReFrame's queries share its results database: one after the other.
    reframe = [c for c in RUN_HERE if "reframe" in c.program]
    batches = [reframe] + [[c] for c in RUN_HERE if c not in reframe]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(item for batch in pool.map(run_all, batches) for item in batch)
    assert file_hashes(REPO / "site_configs") | file_hashes(REPO / "hpl_decks") == before, "wrote into the repo"
    return results


@pytest.mark.parametrize("command", RUN_HERE, ids=[c.text[:60] for c in RUN_HERE])
def test_doc_command_runs(ran, command):
    text, result = command.text, ran[command.text, command.exports]
    where = f"{command.page}: {text}\n{result.stderr[-2000:]}"
    assert result.status == 0, where
    redirect = re.search(r"\s>\s*(\S+)", text)
    if redirect and redirect.group(1) != "/dev/null":
        assert (result.clone / redirect.group(1)).stat().st_size > 0, where
    else:
        assert (result.stdout + result.stderr).strip(), where
    if "--json" in text and not redirect:
        json.loads(result.stdout)
    # A console block's output is what the command prints: line by line, in order ("..." ends a cut line).
    printed = iter(result.stdout.splitlines())
    for shown in filter(None, command.output):
        prefix = shown[:-3] if shown.endswith("...") else None
        assert any(line.startswith(prefix) if prefix else line.rstrip() == shown for line in printed), (
            f"{command.page} shows a line {text!r} does not print: {shown!r}")


# --- usage lines and --help -------------------------------------------------------------------------

def _help(*path: str) -> str:
    out = StringIO()
    with redirect_stdout(out), redirect_stderr(StringIO()), pytest.raises(SystemExit) as stop:
        main([*path, "--help"])
    assert stop.value.code == 0 and out.getvalue().strip(), path
    return out.getvalue()


def _subcommands(*path: str) -> list[str]:
    found = re.search(r"^\s+\{([\w,-]+)\}$", _help(*path), re.M)  # the positional {a,b}, not --format's
    return found.group(1).split(",") if found else []


def _command_paths(*path: str) -> list[tuple[str, ...]]:
    paths = [path] if path else []
    for name in _subcommands(*path):
        paths += _command_paths(*path, name)
    return paths


def test_every_subcommand_has_its_help():
    paths = _command_paths()
    assert ("plan",) in paths and ("facts", "template") in paths
    for path in paths:
        assert "usage: scalebench " + " ".join(path) in " ".join(_help(*path).split())


@pytest.mark.parametrize("text", [c.text for c in BY_TEXT.values() if c.synopsis],
                         ids=[c.text[:50] for c in BY_TEXT.values() if c.synopsis])
def test_usage_line_names_real_options(text):
    """A usage line's subcommands exist, and each option it names is in their --help."""
    words = text.split()[1:]
    paths = [()]
    while words and paths:
        names = words[0].split("|")
        known = set(_subcommands(*paths[0]))
        if not set(names) <= known:
            break
        paths = [(*p, n) for p in paths for n in names]
        words.pop(0)
    assert paths and paths[0], text
    helps = " ".join(_help(*p) for p in paths)
    for option in re.findall(r"(?:^|[\s\[])(--?[A-Za-z][\w-]*)", " ".join(words)):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", helps), f"{text}: {option}"


# --- links, the contents, the reference, line widths ------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors, seen = set(), {}
    for line in _prose(path.read_text()).splitlines():
        if re.match(r"^#{1,6} ", line):
            slug = _slug(line.lstrip("#"))
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _prose(text: str) -> str:
    """The text without its fenced blocks."""
    return re.sub(r"^\s*```.*?^\s*```[^\n]*$", "", text, flags=re.M | re.S)


def _links(path: Path) -> list[str]:
    return re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)", _prose(path.read_text()))


def test_relative_links_and_anchors_resolve():
    broken = []
    for page in PAGES:
        for link in _links(page):
            if re.match(r"^[a-z]+:", link):
                continue
            target, _, anchor = link.partition("#")
            resolved = (page.parent / target).resolve() if target else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(REPO)}: {link}: no such file")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.relative_to(REPO)}: {link}: no such heading")
    assert not broken, "\n".join(broken)


def test_the_contents_list_every_page():
    listed = {(REPO / "docs" / link.partition("#")[0]).resolve() for link in _links(REPO / "docs" / "index.md")}
    missing = [p.name for p in PAGES[1:] if p.name != "index.md" and p.resolve() not in listed]
    assert not missing, f"docs/index.md does not list {missing}"


def test_doc_lines_within_120_columns():
    long = [f"{p.relative_to(REPO)}:{n}" for p in PAGES for n, line in enumerate(p.read_text().splitlines(), 1)
            if len(line) > 120]
    assert not long, long


def _schema_keys(node: dict, defs: dict, prefix: str = "", depth: int = 2) -> set[str]:
    """A schema's keys, nested ones as parent.child, two levels deep."""
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/"):
        node = defs[ref.split("/")[-1]]
    keys = set()
    for part in [*node.get("allOf", []), *([node["items"]] if "items" in node else [])]:
        keys |= _schema_keys(part, defs, prefix, depth)
    for name, child in node.get("properties", {}).items():
        keys.add(prefix + name)
        if depth > 1:
            keys |= _schema_keys(child, defs, f"{prefix}{name}.", depth - 1)
    return keys


def test_the_reference_names_every_site_key():
    schemas = [yaml.safe_load(p.read_text()) for p in sorted((REPO / "scalebench").rglob("site.yaml"))]
    site = next(s for s in schemas if "$defs" in s)
    defs = site["$defs"]
    for fragment in (s for s in schemas if "$defs" not in s):  # a benchmark's own keys
        for place in ("partition", "stack"):
            defs[place]["properties"].update(fragment.get(place) or {})
    keys = set(site["properties"]) | _schema_keys(defs["partition"], defs) | _schema_keys(defs["stack"], defs)
    reference = (REPO / "docs" / "reference.md").read_text().split("## Site keys", 1)[1]
    named = set(re.findall(r"`([\w.]+)`", reference))
    assert len(keys) > 100 and not keys - named, f"not in docs/reference.md's site keys: {sorted(keys - named)}"
