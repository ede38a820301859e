"""What the distribution holds beyond pyproject.toml's metadata: the library's packages, the checks
(reframe_tests/, imported as scalebench_checks) and the data directories a run reads (hpl_decks/,
site_configs/, spack_envs/, shipped under scalebench/shipped/ so that an installed scalebench needs no
clone: scalebench.paths finds them there)."""
from setuptools import find_packages, setup

SHIPPED = ("hpl_decks", "site_configs", "spack_envs")

setup(
    packages=[*find_packages(include=["scalebench", "scalebench.*", "scalebench_lab"]),
              "scalebench_checks", "scalebench_checks.tuning", *(f"scalebench.shipped.{d}" for d in SHIPPED)],
    package_dir={"scalebench_checks": "reframe_tests", **{f"scalebench.shipped.{d}": d for d in SHIPPED}},
    package_data={"scalebench": ["data/*.yaml", "data/schemas/*.yaml", "benchmarks/*/*.yaml", "benchmarks/*/inputs/*"],
                  "scalebench_checks": ["inputs/*/*"],
                  **{f"scalebench.shipped.{d}": ["**/*.yaml", "**/*.dat", "**/*.txt", "**/*.md"] for d in SHIPPED}},
)
