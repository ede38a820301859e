"""scalebench.hpl.blas: the OpenBLAS kernel a run gets; a user's OPENBLAS_CORETYPE is never overridden."""
from scalebench.hpl import blas


def test_environment_choice_is_respected():
    choice = blas.choose_coretype({"OPENBLAS_CORETYPE": "SkylakeX"}, "icelake")
    assert choice.value == "SkylakeX"
    assert "already set in the environment" in choice.reason
    assert choice.warning is None  # same as the table's recommendation


def test_environment_choice_differing_from_table_is_kept_with_a_warning():
    choice = blas.choose_coretype({"OPENBLAS_CORETYPE": "Haswell"}, "icelake")
    assert choice.value == "Haswell"
    assert choice.recommended == "SkylakeX"
    assert "OPENBLAS_CORETYPE=Haswell" in choice.warning and "SkylakeX" in choice.warning


def test_environment_choice_compared_case_insensitively():
    assert blas.choose_coretype({"OPENBLAS_CORETYPE": "skylakex"}, "icelake").warning is None


def test_environment_choice_for_cpu_without_table_entry_has_no_warning():
    choice = blas.choose_coretype({"OPENBLAS_CORETYPE": "Haswell"}, "no_such_cpu")
    assert choice.value == "Haswell" and choice.warning is None


def test_empty_environment_value_counts_as_unset():
    choice = blas.choose_coretype({"OPENBLAS_CORETYPE": ""}, "icelake")
    assert choice.value == "SkylakeX"
    assert "table choice" in choice.reason


def test_blank_environment_value_counts_as_unset():
    assert blas.choose_coretype({"OPENBLAS_CORETYPE": "  "}, "icelake").value == "SkylakeX"


def test_icelake_gets_skylakex():
    choice = blas.choose_coretype({}, "icelake")
    assert (choice.value, choice.recommended, choice.warning) == ("SkylakeX", "SkylakeX", None)


def test_table_walks_archspec_ancestors():
    # alderlake is not in the table; its ancestor skylake is (AVX2 only -> Haswell kernel)
    assert blas.recommended_coretype("alderlake") == "Haswell"


def test_unknown_microarch_leaves_openblas_to_auto_detect():
    choice = blas.choose_coretype({}, "no_such_cpu")
    assert choice.value is None and choice.recommended is None
    assert "no table entry for no_such_cpu" in choice.reason


def test_archspec_name_without_entry_leaves_openblas_to_auto_detect():
    choice = blas.choose_coretype({}, "power9le")
    assert choice.value is None and "auto-detection" in choice.reason


def test_kernels_reported_reads_openblas_verbose_lines():
    stderr = "Core: SkylakeX\nsome MPI noise\n  Core: SkylakeX\nCore: Haswell\n"
    assert blas.kernels_reported(stderr) == ["SkylakeX", "SkylakeX", "Haswell"]
    assert blas.kernels_reported("no kernel lines") == []
