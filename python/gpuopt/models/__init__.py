"""Pydantic models: the single source of truth for every document gpuopt prints or stores (no I/O here)."""
