"""A LAMMPS workload and an OpenFOAM case (the lid-driven cavity's dictionaries) that the unit tests of
the applications' inputs, and of what a hostile value does to them, size and write."""
from scalebench.benchmarks.lammps import inputs as lammps
from scalebench.benchmarks.openfoam import cases as openfoam

LJ = lammps.LammpsWorkload(name="lj", input="in.lj", atoms_per_cell=4, atoms=32000, steps=300,
                         time_unit="tau/day")
TEMPLATE = "variable nx index 20\nrun ${steps}\n"

CAVITY_MESH = """scale 0.1;
vertices
(
    (0 0 0)
    (1 0 0)
    (1 1 0)
    (0 1 0)
    (0 0 0.1)
    (1 0 0.1)
    (1 1 0.1)
    (0 1 0.1)
);
blocks
(
    hex (0 1 2 3 4 5 6 7) (20 20 1) simpleGrading (1 1 1)
);
"""
CONTROL = """application icoFoam;
startFrom       startTime;
endTime         0.5;
deltaT          0.005;
writeControl    timeStep;
writeInterval   20;
functions
{
    #includeFunc streamlines
    probes { type probes; fields (p); }
}
"""
SOLUTION = """solvers { p { solver PCG; } }
SIMPLE
{
    nNonOrthogonalCorrectors 0;
    residualControl
    {
        p               1e-2;
        "(k|epsilon)"   1e-3;
    }
}
"""
DECOMPOSE = "numberOfSubdomains @ranks@;\nmethod simple;\nn (@nx@ @ny@ @nz@);\n"
TEXTS = {"system/blockMeshDict": CAVITY_MESH, "system/controlDict": CONTROL, "system/fvSolution": SOLUTION}
CAVITY = openfoam.OpenfoamCase(name="cavity", tutorial="x", solver="icoFoam", cells=400, steps=50,
                           weak="stretch", deltaT=0.0025)
