package export

// pageCSS styles the HTML export. Colours are variables set for a light
// scheme, replaced for a dark one (prefers-color-scheme) and forced back
// to light for printing; the code colours follow GitHub's palettes, which
// keep a contrast of at least 4.5:1 on their backgrounds. The font lists
// name the usual Korean, Japanese and Chinese system fonts so that CJK
// text is drawn with a matching face on every OS.
const pageCSS = `:root {
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --border: #d1d9e0;
  --user: #eef2f7; --code: #f6f8fa; --link: #0969da; --mark: #fff8c5;
  --k: #cf222e; --t: #953800; --s: #0a3069; --c: #59636e; --n: #0550ae;
  --f: #6639ba; --m: #8250df; --v: #953800; --a: #0550ae;
  --gi-fg: #116329; --gi-bg: #dafbe1; --gd-fg: #82071e; --gd-bg: #ffebe9;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d;
    --user: #161c26; --code: #151b23; --link: #4493f8; --mark: #3b2e00;
    --k: #ff7b72; --t: #ffa657; --s: #a5d6ff; --c: #9198a1; --n: #79c0ff;
    --f: #d2a8ff; --m: #d2a8ff; --v: #ffa657; --a: #79c0ff;
    --gi-fg: #aff5b4; --gi-bg: #033a16; --gd-fg: #ffdcd7; --gd-bg: #67060c;
  }
}
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body {
  margin: 0 auto; max-width: 52rem; padding: 2rem 1.25rem 3rem;
  font: 16px/1.65 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK KR",
    "Apple SD Gothic Neo", "Malgun Gothic", "NanumGothic", "Hiragino Sans", "Yu Gothic",
    "PingFang SC", "Microsoft YaHei", sans-serif;
  word-break: keep-all; overflow-wrap: anywhere;
}
header { border-bottom: 1px solid var(--border); margin-bottom: 1.5rem; padding-bottom: 1rem; }
h1 { font-size: 1.75rem; line-height: 1.3; margin: 0 0 .75rem; }
dl.meta { display: flex; flex-wrap: wrap; gap: .25rem 1.5rem; margin: 0; color: var(--muted); font-size: .875rem; }
dl.meta div { display: flex; gap: .4rem; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; }
section.system { margin-top: 1rem; }
section.system h2 { font-size: .875rem; color: var(--muted); margin: 0 0 .25rem; text-transform: uppercase; letter-spacing: .04em; }
.plain { white-space: pre-wrap; }
section.system .plain { border-left: 3px solid var(--border); padding: .25rem .75rem; color: var(--muted); }
article.msg { margin: 0 0 1.75rem; }
.who { display: flex; flex-wrap: wrap; align-items: baseline; gap: .6rem; font-size: .8125rem; color: var(--muted); margin-bottom: .35rem; }
.who .role { font-weight: 700; color: var(--fg); }
article.user .body { background: var(--user); border-radius: .75rem; padding: .75rem 1rem; }
article.system .body, article.tool .body { border: 1px dashed var(--border); border-radius: .5rem; padding: .5rem .75rem; font-size: .9rem; }
.md > :first-child { margin-top: 0; }
.md > :last-child { margin-bottom: 0; }
.md p, .md ul, .md ol, .md blockquote, .md table, .md .code { margin: 0 0 .9rem; }
.md h1, .md h2, .md h3, .md h4, .md h5, .md h6 { line-height: 1.3; margin: 1.2rem 0 .6rem; }
.md h1 { font-size: 1.4rem; } .md h2 { font-size: 1.25rem; } .md h3 { font-size: 1.1rem; }
.md h4, .md h5, .md h6 { font-size: 1rem; }
.md ul, .md ol { padding-left: 1.6rem; }
.md li + li { margin-top: .2rem; }
.md li > input[type=checkbox] { margin: 0 .4rem 0 -1.3rem; vertical-align: middle; }
.md ul:has(> li > input[type=checkbox]) { list-style: none; }
.md blockquote { border-left: 3px solid var(--border); color: var(--muted); padding: 0 0 0 .9rem; margin-left: 0; }
.md del { color: var(--muted); text-decoration-thickness: .09em; }
.md hr { border: 0; border-top: 1px solid var(--border); margin: 1.25rem 0; }
.md table { border-collapse: collapse; display: block; max-width: 100%; overflow-x: auto; width: max-content; }
.md th, .md td { border: 1px solid var(--border); padding: .35rem .75rem; text-align: left; vertical-align: top; }
.md th { background: var(--code); font-weight: 600; }
.md tr:nth-child(2n) td { background: color-mix(in srgb, var(--code) 55%, transparent); }
.md th[align=center], .md td[align=center] { text-align: center; }
.md th[align=right], .md td[align=right] { text-align: right; }
a { color: var(--link); }
.link { text-decoration: underline dotted; }
.img { font-style: italic; }
.raw { white-space: pre-wrap; font-family: ui-monospace, "SF Mono", Menlo, Consolas, "Noto Sans Mono CJK KR", monospace; font-size: .9em;
  background: var(--code); border-radius: .35rem; padding: .3rem .6rem; width: fit-content; max-width: 100%; }
code, pre { tab-size: 4; font-family: ui-monospace, "SF Mono", SFMono-Regular, Menlo, Consolas, "Liberation Mono",
  "Noto Sans Mono CJK KR", "D2Coding", monospace; font-size: .875em; }
:not(pre) > code { background: var(--code); border-radius: .35rem; padding: .1em .35em; }
.code { border: 1px solid var(--border); border-radius: .5rem; background: var(--code); overflow: hidden; }
.code .lang { font: 600 .75rem/1 system-ui, sans-serif; color: var(--muted); padding: .5rem .9rem 0; text-transform: lowercase; }
.code pre { margin: 0; padding: .6rem .9rem .75rem; overflow-x: auto; line-height: 1.5; word-break: normal; overflow-wrap: normal; }
.code pre code { font-size: 1em; }
.hl-k { color: var(--k); } .hl-t { color: var(--t); } .hl-s { color: var(--s); }
.hl-c { color: var(--c); font-style: italic; } .hl-n { color: var(--n); } .hl-f { color: var(--f); }
.hl-m { color: var(--m); } .hl-v { color: var(--v); } .hl-a { color: var(--a); }
.hl-gi { color: var(--gi-fg); background: var(--gi-bg); } .hl-gd { color: var(--gd-fg); background: var(--gd-bg); }
.hl-gh { font-weight: 700; }
.stats { color: var(--muted); font-size: .75rem; margin: .5rem 0 0; }
.stats .sampler { opacity: .85; }
table.index { border-collapse: collapse; width: 100%; }
table.index th, table.index td { border-bottom: 1px solid var(--border); padding: .4rem .5rem; text-align: left; }
footer { border-top: 1px solid var(--border); color: var(--muted); font-size: .75rem; margin-top: 2rem; padding-top: .75rem; }
@media print {
  :root {
    --bg: #ffffff; --fg: #000000; --muted: #444c56; --border: #c8cfd6; --user: #f2f4f7; --code: #f6f8fa; --link: #0550ae;
    --k: #cf222e; --t: #953800; --s: #0a3069; --c: #59636e; --n: #0550ae; --f: #6639ba; --m: #8250df; --v: #953800; --a: #0550ae;
    --gi-fg: #116329; --gi-bg: #dafbe1; --gd-fg: #82071e; --gd-bg: #ffebe9;
  }
  body { max-width: none; padding: 0; font-size: 11pt; }
  .code pre { white-space: pre-wrap; overflow-wrap: anywhere; }
  .md table { display: table; width: auto; }
  .code, .md tr, .who { break-inside: avoid; }
  .who { break-after: avoid; }
  .md a[href^="http"]:not(.auto)::after { content: " (" attr(href) ")"; color: var(--muted); font-size: .85em; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
`
