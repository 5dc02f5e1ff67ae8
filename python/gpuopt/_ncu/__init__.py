"""Readers and the collector behind :mod:`gpuopt.ncu`: :mod:`rep` (``.ncu-rep`` framing, the ncu-report
package and the ncu CLI readers) and :mod:`collect` (``gpuopt ncu collect``)."""
