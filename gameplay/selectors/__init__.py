"""Reads that several callers share (DESIGN.md). One module per caller family; no writes."""
