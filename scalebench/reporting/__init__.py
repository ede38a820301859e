"""Results: the store of ReFrame run reports, series, the report's parts and shared sections (the
report itself: scalebench.report), bake-off comparisons and acceptance verdicts."""
