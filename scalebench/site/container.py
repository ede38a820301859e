"""A stack that runs in a container image: Slurm's pyxis (srun --container-image) or Apptainer /
Singularity (`apptainer exec IMAGE ...` under the MPI launcher).

Everything the program needs happens inside the image: the job's check that the program exists (and
the search for OSU's programs under the stack's osu_dir) runs in the launched command, not on the
host, where a vendor's /workspace/hpl.sh does not exist (scalebench.site.launch). The stage
directory (the job's working directory, $PWD where the launcher runs) is mounted at the same path, so
the program reads its HPL.dat and writes its outputs there; the variables that make the MPI name its
transport pass through (pyxis and Apptainer keep the job's environment).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

RUNTIMES = ("pyxis", "apptainer", "singularity")


@dataclass(frozen=True)
class ContainerSpec:
    runtime: str  # pyxis | apptainer | singularity
    image: str  # pyxis: an enroot image or registry name; Apptainer: a .sif or a URI
    mounts: tuple[str, ...] = ()  # SRC[:DST[:FLAGS]], besides the stage directory
    options: tuple[str, ...] = ()  # more options of the runtime, as given

    @classmethod
    def from_site(cls, data: Mapping[str, Any] | None) -> ContainerSpec | None:
        """From a stack's `container:` (its shape checked by the site schema) or from to_json()."""
        if not data:
            return None
        return cls(str(data["runtime"]), str(data["image"]), tuple(map(str, data.get("mounts") or ())),
                   tuple(map(str, data.get("options") or ())))

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "image": self.image, "mounts": list(self.mounts), "options": list(self.options)}

    def launcher_options(self) -> tuple[str, ...]:
        """srun's pyxis options (none for Apptainer, which wraps the program instead)."""
        if self.runtime != "pyxis":
            return ()
        mounts = ",".join(["$PWD:$PWD", *self.mounts])  # $PWD: the job's stage directory, expanded by its shell
        return (f"--container-image={self.image}", f"--container-mounts={mounts}", "--container-workdir=$PWD",
                *self.options)

    def wrapper(self, gpu_runtime: str = "") -> list[str]:
        """What precedes the program on the launch line: `apptainer exec ... IMAGE` (nothing for pyxis)."""
        if self.runtime == "pyxis":
            return []
        gpus = {"cuda": ["--nv"], "rocm": ["--rocm"]}.get(gpu_runtime, [])
        binds = [arg for mount in ("$PWD", *self.mounts) for arg in ("--bind", mount)]
        return [self.runtime, "exec", *gpus, "--pwd", "$PWD", *binds, *self.options, self.image]

