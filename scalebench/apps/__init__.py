"""Application inputs: OpenFOAM cases sized for a rank count and scaling mode, and (common.py) what
they share with LAMMPS's workloads (scalebench.rooms.lammps.inputs)."""
