"""Reports over the warehouse: Markdown tables (jinja2), charts, README regions, comparisons.

The last stage of the flow: it reads the warehouse read-only and imports nothing from the
parsers.  ``make_report`` builds one report, ``render`` turns reports into Markdown,
``update_file`` regenerates ``<!-- benchvault:begin ... -->`` regions in place, ``compare``
pairs a baseline with a candidate, ``write_charts`` draws PNG + SVG.
"""

from .kinds import KINDS, ReportKind
from .query import ReportError

__all__ = ["KINDS", "ReportKind", "ReportError"]
