"""The BLAS a stack links (scalebench.site.blas) and the OpenBLAS kernel its HPL job gets
(scalebench.hpl.blas): OPENBLAS_CORETYPE only for OpenBLAS, only on a CPU an OpenBLAS release was seen
to misdetect, never over a value of the stack or the shell."""
import shutil
import subprocess

import pytest

from conftest import XHPL
from scalebench.hpl import blas
from scalebench.site.blas import StackBlas, linked_blas, locked_blas, stack_blas, threads_variables

OPENBLAS_OLD = StackBlas("openblas", "0.3.21", "ldd xhpl")
UNKNOWN = StackBlas(None, None, "")


def test_a_value_of_the_stack_or_the_shell_is_kept():
    choice = blas.choose_coretype({"OPENBLAS_CORETYPE": "SkylakeX"}, {}, "icelake", OPENBLAS_OLD)
    assert choice.value == "SkylakeX" and "from the stack's env_vars (kept)" in choice.reason
    assert choice.warning is None  # what the table forces too
    shell = blas.choose_coretype({}, {"OPENBLAS_CORETYPE": "Haswell"}, "icelake", OPENBLAS_OLD)
    assert shell.value == "Haswell" and "from the submitting shell" in shell.reason
    assert "OPENBLAS_CORETYPE=Haswell is set; SkylakeX is the kernel for this CPU" in shell.warning
    assert blas.choose_coretype({}, {"OPENBLAS_CORETYPE": "skylakex"}, "icelake", OPENBLAS_OLD).warning is None


@pytest.mark.parametrize("value", ["", "  "])
def test_a_blank_value_counts_as_unset(value):
    assert blas.choose_coretype({"OPENBLAS_CORETYPE": value}, {}, "icelake", OPENBLAS_OLD).value == "SkylakeX"


def test_forced_only_where_an_openblas_release_was_seen_to_misdetect_the_cpu():
    choice = blas.choose_coretype({}, {}, "icelake", OPENBLAS_OLD)
    assert (choice.value, choice.recommended) == ("SkylakeX", "SkylakeX")
    assert "OpenBLAS 0.3.21 was seen to misdetect icelake" in choice.reason
    newer = blas.choose_coretype({}, {}, "icelake", StackBlas("openblas", "0.3.28", "the stack's spack.lock"))
    assert newer.value is None and "newer than the OpenBLAS 0.3.21" in newer.reason
    unknown_version = blas.choose_coretype({}, {}, "cascadelake", StackBlas("openblas", None, "site file"))
    assert unknown_version.value == "SkylakeX" and "this version is not known" in unknown_version.reason


@pytest.mark.parametrize("microarch", ["zen4", "neoverse_v2", "sapphirerapids", "zen"])
def test_a_cpu_no_release_was_seen_to_misdetect_gets_no_forced_kernel(microarch):
    # Genoa got Zen (AVX2) and Grace NeoverseN1 (no SVE) when every CPU was forced from a table
    choice = blas.choose_coretype({}, {}, microarch, OPENBLAS_OLD)
    assert choice.value is None and f"no OpenBLAS release is known to misdetect {microarch}" in choice.reason


@pytest.mark.parametrize("stack", [StackBlas("mkl", None, "site file"), StackBlas("nvpl", "0.3", "spack.lock"),
                                   UNKNOWN])
def test_no_openblas_variable_for_another_or_an_unknown_blas(stack):
    choice = blas.choose_coretype({}, {}, "icelake", stack)
    assert choice.value is None and "no OPENBLAS_CORETYPE" in choice.reason


def test_the_stack_blas_from_the_site_file_the_lock_or_the_binary(tmp_path):
    lock = "hpl@2.3 +openmp; openmpi@5.0.8 fabrics=ucx; intel-oneapi-mkl@2025.2 +cluster"
    assert locked_blas(lock) == StackBlas("mkl", "2025.2", "the stack's spack.lock")
    assert stack_blas(None, lock, "xhpl").name == "mkl"
    assert stack_blas("libsci", "", "xhpl") == StackBlas("libsci", None, "site file")
    assert stack_blas(None, "", "xhpl") == UNKNOWN  # a name on PATH: only the job knows which one
    assert "give the stack's `blas:`" in UNKNOWN.describe()


def test_the_built_xhpl_links_openblas_with_its_version():
    if not XHPL.is_file() or shutil.which("ldd") is None:
        pytest.skip("needs build/bin/xhpl (scripts/install.sh) and ldd")
    found = linked_blas(str(XHPL))
    assert found is not None and found.name == "openblas" and found.source == f"ldd {XHPL}"
    assert found.version and found.version[0].isdigit()  # from libopenblas<flavour>-r<version>.so


def test_kernels_reported_reads_openblas_verbose_lines():
    stderr = "Core: SkylakeX\nsome MPI noise\n  Core: SkylakeX\nCore: Haswell\n"
    assert blas.kernels_reported(stderr) == ["SkylakeX", "SkylakeX", "Haswell"]
    assert blas.kernels_reported("no kernel lines") == []
    assert blas.fallback_core("Prescott") and not blas.fallback_core("SkylakeX")


# --- FlexiBLAS: a BLAS that loads another at run time ---------------------------------------------

@pytest.mark.parametrize("value, runs", [
    ("OPENBLAS", "openblas"), ("OpenBLAS-OpenMP", "openblas"), ("openblas-pthread", "openblas"),
    ("imkl", "mkl"), ("MKL", "mkl"), ("BLIS-OPENMP", "blis"), ("AMDBLIS", "aocl"), ("NETLIB", "netlib"),
    ("/sw/lib/libopenblas.so.0", "openblas"), ("/opt/intel/lib/libmkl_rt.so.2", "mkl"),
    ("MyVendorBLAS", None),  # a backend scalebench does not know: as a BLAS not known
])
def test_the_backend_flexiblas_names_is_the_blas_whose_kernels_run(value, runs):
    linked = stack_blas("flexiblas", "", "xhpl", {"FLEXIBLAS": value})
    assert linked.name == "flexiblas" and linked.runs.name == runs
    assert f"(FLEXIBLAS={value} in the stack's env_vars)" in linked.describe()
    assert threads_variables(linked.runs.name) == (
        {"openblas": ["OPENBLAS_NUM_THREADS"], "mkl": ["MKL_NUM_THREADS"], "blis": ["BLIS_NUM_THREADS"],
         "aocl": ["BLIS_NUM_THREADS"], "netlib": []}.get(runs, ["BLIS_NUM_THREADS", "MKL_NUM_THREADS",
                                                                 "OPENBLAS_NUM_THREADS"]))


def test_the_stacks_flexiblas_before_the_shells_and_none_names_its_default():
    shell = stack_blas("flexiblas", "", "xhpl", {}, {"FLEXIBLAS": "BLIS"})
    assert shell.runs.name == "blis" and "(FLEXIBLAS=BLIS in the submitting shell)" in shell.describe()
    assert stack_blas("flexiblas", "", "xhpl", {"FLEXIBLAS": "MKL"}, {"FLEXIBLAS": "BLIS"}).runs.name == "mkl"
    default = stack_blas("flexiblas", "", "xhpl")
    assert default.backend is None and default.runs.name is None
    assert default.describe() == ("flexiblas (site file), backend not known (FLEXIBLAS not set: FlexiBLAS's "
                                  "configured default)")
    assert blas.choose_coretype({}, {}, "icelake", default).value is None  # not known to be OpenBLAS
    # FLEXIBLAS means nothing to a stack that does not link FlexiBLAS
    assert stack_blas("mkl", "", "xhpl", {"FLEXIBLAS": "OPENBLAS"}).runs.name == "mkl"


def test_flexiblas_from_the_lock_with_its_backends_version():
    lock = "hpl@2.3; openblas@0.3.28 threads=openmp; flexiblas@3.4.4"
    assert locked_blas(lock) == StackBlas("flexiblas", "3.4.4", "the stack's spack.lock")  # its backends follow
    linked = stack_blas(None, lock, "xhpl", {"FLEXIBLAS": "OpenBLAS"})
    assert (linked.runs.name, linked.runs.version) == ("openblas", "0.3.28")
    newer = blas.choose_coretype({}, {}, "icelake", linked)
    assert newer.value is None and "newer than the OpenBLAS 0.3.21" in newer.reason
    assert newer.reason.startswith("flexiblas 3.4.4 (the stack's spack.lock), backend openblas 0.3.28")


def test_ldd_recognises_libflexiblas(monkeypatch, tmp_path):
    binary = tmp_path / "xhpl"
    out = (f"\tlinux-vdso.so.1 (0x00007ffd)\n\tlibflexiblas.so.3 => {tmp_path}/libflexiblas.so.3 (0x00007f)\n"
           f"\tlibmpi.so.40 => /usr/lib/libmpi.so.40 (0x00007f)\n")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=out))
    assert linked_blas(str(binary)) == StackBlas("flexiblas", None, f"ldd {binary}")
