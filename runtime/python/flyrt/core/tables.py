"""The runtime's records as tables: HTML where a notebook shows it, the
plain text everywhere else (a console, a log, `print`)."""

import html


def html_table(headers, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Table:
    """Rows under headers, with `text` as its plain form."""

    def __init__(self, headers, rows, text):
        self.headers, self.rows, self.text = headers, rows, text

    def _repr_html_(self):
        return html_table(self.headers, self.rows)

    def __repr__(self):
        return self.text


def aligned_text(title, headers, rows):
    """`title`, then the headers and rows in columns padded to their widest
    cell (the plain form of a table a console shows)."""
    table = [list(map(str, headers))] + [list(map(str, row)) for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]
    return "\n".join([title] + lines)
