"""The machinery that reads any file, whatever format it holds.

``lines`` (chunked reading, decoding, mojibake, ANSI), ``prefilter`` (the marker scan that lets
the segmenter skip inert lines), ``segmenter`` (blocks and their context), ``memo`` (a shape of
text parsed once), ``tablecells`` (pipe/HTML table cells), ``jsonstream`` (JSON read value by
value), ``cmdline`` and ``pyliteral`` (commands and printed ``Namespace(...)`` reprs).  The
formats themselves live in :mod:`benchvault.parsers`, one ``.lark`` + ``.py`` each.
"""
