"""Test and operations tooling kept out of the library: the throwaway Slurm cluster, fault injection
and the emulated-interconnect lab. The library (scalebench) never imports this package."""
