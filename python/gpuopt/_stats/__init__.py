"""Helpers behind :mod:`gpuopt.stats`: :mod:`buffers` (values, samples, cases and flags as the byte buffers
the engine reads), :mod:`results` (what a comparison or a noise run returns) and :mod:`files` (sample files
read, then compared or used for noise). :mod:`gpuopt.stats` is the public face: it re-exports them and adds
the comparisons of values in memory and the documents the commands print."""
