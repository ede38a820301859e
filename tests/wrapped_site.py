"""A site whose one stack runs wrappers instead of the programs: HPL's prints a prepared output
(FAKE_HPL_OUTPUT); the others run the real application and then spoil what it wrote. Failing-case
and reference tests run the real checks through it."""
import textwrap

FAKE_HPL = "#!/bin/sh\n# HPL that prints what it is told to\nexec cat \"$FAKE_HPL_OUTPUT\"\n"
NAN_LAMMPS = """#!/bin/sh
# the real lmp (not this wrapper, first on PATH), then a NaN in every thermo row's energy, as a
# diverged run prints
PATH=${PATH#*:}
[ "$1" = -h ] && exec lmp -h
lmp "$@" || exit $?
sed -i -E 's/^( +[0-9]+ +[-0-9.e+]+ +)[-0-9.e+]+/\\1nan/' log.lammps
"""
DIVERGED_ICOFOAM = """#!/bin/sh
# the real icoFoam, its residuals turned to nan from the third step on, as a diverging solver prints
PATH=${PATH#*:} icoFoam "$@" | awk '/^Time = /{n++} n>=3{gsub(/Final residual = [^,]+/, "Final residual = nan")} 1'
"""
CUT_NETPIPE = """#!/bin/sh
# the real NetPIPE, its curve cut after 20 sizes, as a run killed half-way leaves it
NPopenmpi "$@" || exit $?
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] && head -n 20 np.out > np.cut && mv np.cut np.out
exit 0
"""


def site_file(tmp_path, fakes):
    """A two-core machine whose stack runs the wrappers; Open MPI may oversubscribe (tests pinned to a
    core still run)."""
    site = tmp_path / "site.yaml"
    site.write_text(textwrap.dedent(f"""
        system: fakes
        partitions:
          - {{name: one, scheduler: local, launcher: mpirun, max_nodes: 1, cores_per_node: 2, memory_per_node: 2GiB,
              clock_ghz: 2.0, flops_per_cycle: 16, microarch: x86_64, hpl_trials: 3, time_limit: 10m,
              environs: [wrapped]}}
        stacks:
          - name: wrapped
            features: [hpl, lammps, openfoam, netpipe]
            hpl_binary: {fakes}/xhpl
            lmp_binary: {fakes}/lmp
            netpipe_binary: {fakes}/NPcut
            launcher_options: [--oversubscribe, --bind-to, none]
            env_vars:
              PATH: {fakes}:$PATH
              OMPI_ALLOW_RUN_AS_ROOT: 1
              OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: 1
              WM_PROJECT_DIR: /usr/share/openfoam
              FOAM_TUTORIALS: /usr/share/doc/openfoam-examples/examples
        """))
    return site


def install_wrappers(root):
    """The wrappers, executable, in root/bin (returned)."""
    fakes = root / "bin"
    fakes.mkdir()
    for name, text in (("xhpl", FAKE_HPL), ("lmp", NAN_LAMMPS), ("icoFoam", DIVERGED_ICOFOAM), ("NPcut", CUT_NETPIPE)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    return fakes
