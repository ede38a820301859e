"""HPL: deck rules and writers, the process grid, the BLAS kernel policy, tuning sweeps and frozen
decks, and the plan of every HPL case a site would submit."""
