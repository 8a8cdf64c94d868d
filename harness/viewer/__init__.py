"""A trajectory viewer in the browser: a run table with filters, a page per run (each LM call, code step and
tool call in order) and a page per task (its runs side by side across arms, models and programs).

`harness view RESULTS...` serves it on 127.0.0.1; `--out DIR` (and `harness report`) write a static copy."""

from harness.viewer.data import RunIndex, load_index
from harness.viewer.live import live_index
from harness.viewer.server import make_server
from harness.viewer.site import export_site

__all__ = ["RunIndex", "export_site", "live_index", "load_index", "make_server"]
