"""What the application checks share (common.py): scaling modes applied to inputs, factor splits, spec
files. Their rooms are scalebench.rooms.lammps and scalebench.rooms.openfoam."""
