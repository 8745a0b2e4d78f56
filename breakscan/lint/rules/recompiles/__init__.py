"""Constructs that make TorchDynamo compile a function again on later calls (ids BRxxx)."""
