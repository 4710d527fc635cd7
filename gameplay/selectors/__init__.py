"""Reads that several callers share (docs/architecture.md, "Conventions"). One module per caller
family; no writes."""
