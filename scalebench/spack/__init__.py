"""Spack environments of spack_envs/: an offline validator and a real-Spack concretization helper.

- `validate_env(path)` / `validate_tree(dir)`: YAML structure, the subset of the Spack environment
  schema the project uses, and package, variant and value names checked against
  scalebench/data/spack_packages.yaml (no Spack needed). Each `Finding` names the file, the YAML
  key path (e.g. `spack.specs[0].matrix[1][0]`) and what is wrong. That includes the fabric
  rules of `scalebench.spack.fabric_rules`: a stack requests what its name and its site's fabric need.
- `scalebench.spack.concretize`: find a Spack (SPACK_ROOT or `spack` on PATH) and concretize an
  environment on a temporary copy, never writing into the repository.
- `scalebench.cli.spack`: `scalebench spack validate [DIR]`.
"""
from scalebench.spack.specs import PackageTable, load_table
from scalebench.spack.validate import Finding, validate_env, validate_tree

__all__ = ["Finding", "PackageTable", "load_table", "validate_env", "validate_tree"]
