"""Test data builders shared by the tests and the benchmarks."""
