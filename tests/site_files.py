"""A small site file the unit tests vary (SITE, written by write()), and run directories in each
test's tmp_path (run_dir: autouse in every module that imports it)."""
import textwrap

import pytest

SITE = """
system: demo
partitions:
  - name: cpu
    scheduler: squeue
    launcher: srun
    max_nodes: 8
    cores_per_node: 64
    memory_per_node: 256GiB
    clock_ghz: 2.0
    microarch: zen3
    environs: [ompi]
stacks:
  - name: ompi
    env_vars: {OMPI_MCA_pml: ob1}
"""


def write(tmp_path, text):
    path = tmp_path / "site.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(autouse=True)
def run_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALEBENCH_RUN_DIR", str(tmp_path / "run"))
