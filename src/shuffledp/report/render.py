"""Rendering: the list of blocks as Markdown (figures linked by relative path) or as one
self-contained HTML file (figures embedded as base64, inline CSS, no external asset).

Room: formatting only; imports :mod:`shuffledp.report.blocks` and the standard library.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path

from shuffledp.report.blocks import BulletList, Figure, Heading, Paragraph, Table


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(blocks: Sequence) -> str:
    """Markdown text of the report (figures linked by relative path)."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(("#" * block.level) + " " + block.text)
        elif isinstance(block, Paragraph):
            out.append(block.text)
        elif isinstance(block, BulletList):
            out.append("\n".join(f"- {item}" for item in block.items))
        elif isinstance(block, Table):
            lines = ["| " + " | ".join(_md_cell(c) for c in block.columns) + " |"]
            lines.append("|" + "|".join("---" for _ in block.columns) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            out.append("\n".join(lines))
        elif isinstance(block, Figure):
            # one line: the image, then its caption in italics (it flows below a full-width image)
            out.append(f"![{block.caption}]({block.link}) *{block.caption}*")
        else:
            raise TypeError(f"`block` must be a report block; got {type(block).__name__}.")
    return "\n\n".join(out) + "\n"


_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)]+)\)")


def _inline_html(text: str) -> str:
    pieces, last = [], 0
    for match in _INLINE.finditer(text):
        pieces.append(html.escape(text[last : match.start()]))
        code, bold, italic, label, target = match.groups()
        if code is not None:
            pieces.append(f"<code>{html.escape(code)}</code>")
        elif bold is not None:
            pieces.append(f"<strong>{html.escape(bold)}</strong>")
        elif italic is not None:
            pieces.append(f"<em>{html.escape(italic)}</em>")
        else:
            pieces.append(f'<a href="{html.escape(target, quote=True)}">{html.escape(label)}</a>')
        last = match.end()
    pieces.append(html.escape(text[last:]))
    return "".join(pieces)


_MIME = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".gif": "image/gif",
}


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222}
table{border-collapse:collapse;margin:0.8rem 0;font-size:0.85rem}
.table-wrap{overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f2f2f2}
code{background:#f5f5f5;padding:0 0.2rem}
figure{margin:1rem 0}
figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:0.85rem;color:#555}
"""


def render_html(blocks: Sequence, *, title: str = "Reproduction report") -> str:
    """One self-contained HTML page: inline CSS, figures embedded as base64 data URIs."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
    ]
    for block in blocks:
        if isinstance(block, Heading):
            anchor = f' id="{html.escape(block.anchor)}"' if block.anchor else ""
            out.append(f"<h{block.level}{anchor}>{_inline_html(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{_inline_html(block.text)}</p>")
        elif isinstance(block, BulletList):
            out.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{_inline_html(str(c))}</th>" for c in block.columns)
            body = "".join(
                "<tr>" + "".join(f"<td>{_inline_html(str(c))}</td>" for c in row) + "</tr>"
                for row in block.rows
            )
            # a wide table scrolls inside its own box instead of widening the page
            out.append(
                f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
            )
        elif isinstance(block, Figure):
            mime = _MIME.get(Path(block.path).suffix.lower())
            if mime is None:
                out.append(
                    f"<p>{_inline_html(block.caption)}: format {html.escape(Path(block.path).suffix)} cannot be "
                    "embedded; see the Markdown report.</p>"
                )
                continue
            data = base64.b64encode(Path(block.path).read_bytes()).decode("ascii")
            out.append(
                f'<figure><img alt="{html.escape(block.caption, quote=True)}" src="data:{mime};base64,{data}">'
                f"<figcaption>{_inline_html(block.caption)}</figcaption></figure>"
            )
        else:
            raise TypeError(f"`block` must be a report block; got {type(block).__name__}.")
    out += ["</body>", "</html>", ""]
    return "\n".join(out)
