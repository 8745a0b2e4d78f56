"""The HTML report's stylesheet, inlined into every report (the file must work offline)."""

CSS = """
:root { --red: #c62828; --green: #2e7d32; --amber: #b26a00; --violet: #6a1b9a; --ink: #1d2125;
        --muted: #5f6b76; --line: #d9dee3; --paper: #ffffff; --wash: #f5f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       background: var(--wash); }
header, main { max-width: 1100px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; font-family: ui-monospace, monospace; }
h3 { font-size: 15px; margin: 16px 0 6px; }
.meta, .muted { color: var(--muted); }
.timeline { display: flex; flex-wrap: wrap; gap: .4em; list-style: none; padding: 0; }
.timeline li { border: 1px solid var(--muted); border-radius: 4px; padding: .1em .5em; }
.timeline li.recompiled { border-color: #b58900; }
section.file, section.box { background: var(--paper); border: 1px solid var(--line); border-radius: 8px;
                            padding: 4px 18px 16px; margin: 18px 0; }
.status-confirmed { color: var(--red); font-weight: 600; }
.status-dynamic-only { color: var(--violet); font-weight: 600; }
.status-static-only { color: var(--amber); font-weight: 600; }
article.finding { border-left: 4px solid var(--line); padding: 2px 0 6px 12px; margin: 14px 0; }
article.finding.confirmed { border-color: var(--red); }
article.finding.dynamic-only { border-color: var(--violet); }
article.finding.static-only { border-color: var(--amber); }
article.finding:target { background: #fff8e1; }
article.finding h4 { margin: 6px 0 2px; font-size: 15px; }
code, pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--wash); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
      overflow-x: auto; margin: 6px 0; }
pre.diff .add { color: var(--green); } pre.diff .del { color: var(--red); } pre.diff .hunk { color: #00838f; }
.frame .hit, .source .hit { background: #ffebee; }
.source .hit.static-only { background: #fff3e0; }
.source .ln { display: inline-block; width: 4.5em; color: var(--muted); text-align: right; padding-right: 1em;
              user-select: none; }
.source .tag { display: inline-block; width: 4.5em; color: var(--green); user-select: none; }
.source .tag a { color: var(--red); font-weight: 600; text-decoration: none; }
.source span.row { display: block; }
.source span.row:target { background: #fff8e1; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; }
svg.chain { display: block; max-width: 100%; height: auto; margin: 8px 0; }
svg.chain text { font: 13px ui-monospace, monospace; }
svg.chain .graph rect { fill: #e8f5e9; stroke: var(--green); }
svg.chain .break rect { fill: #ffebee; stroke: var(--red); }
svg.chain .eager rect { fill: #f3e5f5; stroke: var(--violet); stroke-dasharray: 5 3; }
svg.chain .gap text { fill: var(--muted); }
svg.chain a:hover rect { stroke-width: 2.5; }
.ops { color: var(--muted); }
details > summary { cursor: pointer; color: var(--muted); margin: 6px 0; }
"""
