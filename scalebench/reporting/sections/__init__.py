"""The shared sections of a report, one module per concern (HPL's is in its benchmark, scalebench/benchmarks/hpl):
applications, microbenchmarks, transports (what each stack's MPI selected, fabric floors), interference
and noise (the node probe, noisy results), results over time (nightly runs) and the appendix (other
checks, failures, provenance); common.py holds what they share."""
from scalebench.reporting.sections.appendix import failures_section, other_section, provenance_section
from scalebench.reporting.sections.applications import application_section
from scalebench.reporting.sections.interference import interference_section
from scalebench.reporting.sections.microbenchmarks import micro_section
from scalebench.reporting.sections.over_time import over_time_section
from scalebench.reporting.sections.transports import transport_section

__all__ = ["application_section", "failures_section", "interference_section", "micro_section", "other_section",
           "over_time_section", "provenance_section", "transport_section"]
