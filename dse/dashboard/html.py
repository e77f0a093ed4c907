"""HTML pages of the static dashboard site.

Vega, Vega-Lite and Vega-Embed come from vl-convert-python's bundled copy, written once
to ``assets/vega-bundle.js`` and loaded as a classic script, so the pages work offline,
from ``file://`` as well as from a web server, with no CDN.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 0; color: #1d2330; background: #fafbfc; }
header { background: #17324d; color: #fff; padding: 14px 28px; }
header a { color: #cfe3ff; text-decoration: none; margin-right: 18px; }
header h1 { margin: 4px 0 0 0; font-size: 22px; font-weight: 600; }
header nav { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 0; }
details.studies { display: inline-block; position: relative; color: #cfe3ff; }
details.studies summary { cursor: pointer; }
details.studies div.menu { position: absolute; z-index: 10; background: #fff; color: #1d2330; border: 1px solid #c9d1da;
  border-radius: 6px; padding: 8px 12px; min-width: 320px; max-height: 70vh; overflow-y: auto; box-shadow: 0 4px 16px rgba(0,0,0,.15); }
details.studies div.menu a { color: #17324d; display: block; margin: 2px 0; }
details.studies div.menu h3 { font-size: 12px; text-transform: uppercase; color: #6a7383; margin: 8px 0 2px 0; }
details.studies input { width: 100%; box-sizing: border-box; padding: 4px 6px; margin-bottom: 4px; }
main { padding: 18px 28px 40px 28px; max-width: 1400px; }
h2 { font-size: 18px; margin-top: 30px; border-bottom: 1px solid #dde2e8; padding-bottom: 4px; }
p.note { color: #4b5565; max-width: 980px; }
.chart { background: #fff; border: 1px solid #e3e7ec; border-radius: 6px; padding: 10px; margin: 10px 10px 10px 0; display: inline-block; vertical-align: top; }
table.data { border-collapse: collapse; font-size: 13px; background: #fff; }
table.data th, table.data td { border: 1px solid #e1e5ea; padding: 4px 8px; text-align: right; }
table.data th { background: #f1f4f7; }
table.data td.l, table.data th.l { text-align: left; }
td.ok { color: #1a7f37; font-weight: 600; } td.fail { color: #cf222e; font-weight: 600; } td.off { color: #9a6700; font-weight: 600; }
ul.cards { list-style: none; padding: 0; } ul.cards li { margin: 6px 0; }
code { background: #eef1f4; padding: 1px 4px; border-radius: 3px; }
"""


@dataclass
class Page:
    title: str
    filename: str
    subtitle: str = ""
    blocks: list[str] = field(default_factory=list)
    specs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: Files the page links to (site-relative path -> bytes), written beside it.
    files: dict[str, bytes] = field(default_factory=dict)

    def download(self, label: str, path: str, data: bytes) -> None:
        """A file written with the site and a link to it."""
        self.files[path] = data
        self.blocks.append(f'<p class="note"><a href="{html.escape(path)}" download>{html.escape(label)}</a></p>')

    def heading(self, text: str) -> None:
        self.blocks.append(f"<h2>{html.escape(text)}</h2>")

    def note(self, text: str) -> None:
        self.blocks.append(f'<p class="note">{html.escape(text)}</p>')

    def raw(self, fragment: str) -> None:
        self.blocks.append(fragment)

    def chart(self, chart: Any) -> None:
        """Add an Altair chart (or a Vega-Lite dict)."""
        spec = chart if isinstance(chart, dict) else chart.to_dict()
        cid = f"chart{len(self.specs)}"
        self.specs.append((cid, spec))
        self.blocks.append(f'<div class="chart" id="{cid}"></div>')

    def table(self, columns: list[str], rows: list[list[Any]], left: set[str] | None = None,
              classes: list[list[str]] | None = None) -> None:
        left = left or set()
        head = "".join(f'<th class="{"l" if c in left else ""}">{html.escape(c)}</th>' for c in columns)
        body = []
        for i, row in enumerate(rows):
            cells = []
            for j, (c, v) in enumerate(zip(columns, row)):
                cls = "l" if c in left else ""
                if classes is not None and classes[i][j]:
                    cls = classes[i][j]
                cells.append(f'<td class="{cls}">{html.escape(_fmt(v))}</td>')
            body.append("<tr>" + "".join(cells) + "</tr>")
        self.blocks.append(f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')

    def render(self, nav: list[tuple[str, str]], groups: dict[str, list[tuple[str, str]]] | None = None) -> str:
        links = "".join(f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in nav) + _study_menu(groups or {})
        embeds = "\n".join(
            f"vegaEmbed('#{cid}', {_script_json(spec)}, {{actions: false, renderer: 'svg'}})"
            f".catch(function (e) {{ console.error(e); }});"
            for cid, spec in self.specs
        )
        sub = f"<div>{html.escape(self.subtitle)}</div>" if self.subtitle else ""
        return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(self.title)} · cxl-dse</title>
<link rel="icon" href="data:,">
<style>{CSS}</style>
<script src="assets/vega-bundle.js"></script>
</head><body>
<header><nav>{links}</nav><h1>{html.escape(self.title)}</h1>{sub}</header>
<main>
{chr(10).join(self.blocks)}
</main>
<script>
{embeds}
</script>
</body></html>
"""


def _study_menu(groups: dict[str, list[tuple[str, str]]]) -> str:
    """A drop-down of every study, grouped (comparisons, then by model), with a filter box:
    the navigation stays one line however many studies a site holds."""
    if not groups:
        return ""
    parts = []
    for group, items in groups.items():
        links = "".join(f'<a href="{html.escape(h)}" data-name="{html.escape(label.lower())}">{html.escape(label)}</a>' for label, h in items)
        parts.append(f"<section><h3>{html.escape(group)}</h3>{links}</section>")
    count = sum(len(v) for v in groups.values())
    script = ("var q=this.value.toLowerCase();this.parentNode.querySelectorAll('section').forEach(function(s){var n=0;"
              "s.querySelectorAll('a').forEach(function(a){var m=a.dataset.name.indexOf(q)>=0;a.style.display=m?'':'none';if(m)n++;});"
              "s.style.display=n?'':'none';});")
    return (f'<details class="studies"><summary>studies ({count})</summary><div class="menu">'
            f'<input type="search" placeholder="filter studies" aria-label="filter studies" oninput="{html.escape(script)}">'
            f'{"".join(parts)}</div></details>')


def _script_json(obj: Any) -> str:
    """JSON to inline in a <script>: '<' (and '>', '&') escaped, so that text in the data
    such as '</script>' or '<!--' cannot end or change the script."""
    return json.dumps(obj).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
