"""Benchmark rooms, one package each (scalebench.room says what a room is and finds them)."""
