"""HPL tuning sweeps: run only when named (reframe -c reframe_tests/tuning)."""
