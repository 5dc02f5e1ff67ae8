"""Models of the evaluation core: records, requests, driver protocol, invocation runtime (no I/O here)."""
