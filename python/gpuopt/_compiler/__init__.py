"""Parsers behind :mod:`gpuopt.compiler` (one module per report or artifact kind)."""
