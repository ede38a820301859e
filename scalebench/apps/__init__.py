"""Application inputs: LAMMPS workloads and OpenFOAM cases sized for a rank count and scaling mode."""
