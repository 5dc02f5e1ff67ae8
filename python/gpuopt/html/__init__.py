"""HTML reports for people: one self-contained page of plotly plots per export, trace or root.

``page`` assembles and writes a page (plotly.js inlined, so it opens offline), ``timeline`` draws GPU
operations per device and stream (every operation up to a limit, binned above it), ``profiles`` builds
the pages of an nsys export and a PyTorch trace, ``evaluation`` the page of an artifact root or of one
invocation. Data come from the engines and the evaluation views; nothing here parses a file.
"""
