"""Results: the store of ReFrame run reports, series, reports (Markdown, HTML, CSV), bake-off
comparisons and acceptance verdicts."""
