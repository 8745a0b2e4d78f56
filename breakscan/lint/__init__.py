"""The static half: parse with libcst, find compiled regions, run rules, never execute user code."""
