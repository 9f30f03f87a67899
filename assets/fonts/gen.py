#!/usr/bin/python3
"""Make the Hangul faces Churon draws Korean with (assets/fonts/*.ttf).

Fyne's own fonts have no Hangul. Without a Korean font on the system a
person sees empty boxes, and Fyne 2.7's fallback (it asks the system's
fonts for each rune none of its faces has) slows down the longer Korean
text is shown. So Churon carries its own faces: NanumGothic (body text)
and NanumGothicCoding (code) from Debian's fonts-nanum, cut down to what
Korean needs, and given to Fyne as the theme's font for every style. Fyne
puts the theme's font first and its own font second, so a rune is drawn
from the first face that has it: Hangul from these, Latin from Fyne's.

Three changes beyond the cut, each so that nothing but the Hangul changes:

- the vertical metrics are Fyne's fonts' (Noto Sans for text, DejaVu Sans
  Mono for code): Fyne takes a text's line height from the face that
  draws a space, which is now this one, so without it every label in the
  window would change height;
- the space keeps the width of Fyne's font of the same style, so that
  monospaced tab stops (eight spaces wide) stay where they were; and in
  the code face every glyph is widened to two columns of Fyne's
  monospaced font (one for a half-width form), centred, so that Korean
  in a code block keeps to the grid;
- the family is renamed: the fonts are under the SIL Open Font License,
  whose Reserved Font Names ("Nanum", "NanumGothic", ...) a modified
  version may not carry.

Run on Debian or Ubuntu (the outputs are committed; run again only to
change them):

    sudo apt-get install fonts-nanum python3-fonttools
    /usr/bin/python3 assets/fonts/gen.py
"""

import logging
import os
import sys

from fontTools import subset
from fontTools.ttLib import TTFont
from fontTools.ttLib.scaleUpem import scale_upem

NANUM = "/usr/share/fonts/truetype/nanum"
HERE = os.path.dirname(os.path.abspath(__file__))

# What Korean text needs: the space and the no-break space (a run of
# Hangul keeps its face across spaces; the other spaces are ASCII's to the
# shaper), Hangul Jamo and its extensions, compatibility jamo, the 11,172
# syllables, CJK symbols and punctuation (「」, 〈〉, ・ ...), circled
# numbers, parenthesised and circled Hangul, and the full- and half-width
# forms: none of which Fyne's fonts have, but for the spaces.
UNICODES = (
    "U+0020,U+00A0,U+1100-11FF,U+2460-24FF,U+3000-303F,U+30FB,"
    "U+3130-318F,U+3200-321E,U+3260-327E,U+A960-A97F,U+AC00-D7A3,"
    "U+D7B0-D7FF,U+FF01-FF60,U+FFA0-FFDC"
)

# (output, source, family, style, units per em, ascent, descent, space
# advance): the Latin font's own figures, the face scaled to its units per
# em first so that they are exact. Noto Sans: 1000, 1069/-293, space 260.
# DejaVu Sans Mono: 2048, 1901/-483, space 1233.
FACES = [
    ("ChuronHangulSans-Regular.ttf", "NanumGothic.ttf", "Churon Hangul Sans", "Regular", 1000, 1069, -293, 260),
    ("ChuronHangulSans-Bold.ttf", "NanumGothicBold.ttf", "Churon Hangul Sans", "Bold", 1000, 1069, -293, 260),
    ("ChuronHangulMono-Regular.ttf", "NanumGothicCoding.ttf", "Churon Hangul Mono", "Regular", 2048, 1901, -483, 1233),
]


def cut(src):
    opts = subset.Options()
    opts.layout_features = ["*"]
    opts.hinting = False  # Fyne's rasteriser does not hint
    opts.name_IDs = ["*"]
    opts.notdef_outline = True
    font = TTFont(src, recalcTimestamp=False)
    s = subset.Subsetter(opts)
    s.populate(unicodes=subset.parse_unicodes(UNICODES))
    s.subset(font)
    return font


def rename(font, family, style):
    name = font["name"]
    full = family if style == "Regular" else f"{family} {style}"
    ps = family.replace(" ", "") + "-" + style
    old = name.getDebugName(4)
    for rec in list(name.names):
        # Names that carry the reserved names go; copyright, licence,
        # trademark and designer stay, as the licence asks.
        if rec.nameID in (1, 2, 3, 4, 5, 6, 10, 16, 17, 18, 21, 22) or (rec.nameID >= 256):
            name.removeNames(nameID=rec.nameID)
    version = font["head"].fontRevision
    for nid, value in (
        (1, family),
        (2, style),
        (3, f"{ps};{version:.3f};churon"),
        (4, full),
        (5, f"Version {version:.3f}; Hangul subset of {old} for Churon"),
        (6, ps),
        (10, f"Hangul subset of {old}, with the vertical metrics of the Latin face it is drawn beside."),
    ):
        name.setName(value, nid, 3, 1, 0x409)


def metrics(font, ascent, descent, space):
    hhea, os2 = font["hhea"], font["OS/2"]
    hhea.ascent, hhea.descent, hhea.lineGap = ascent, descent, 0
    os2.sTypoAscender, os2.sTypoDescender, os2.sTypoLineGap = ascent, descent, 0
    os2.usWinAscent, os2.usWinDescent = ascent, -descent
    cmap = font.getBestCmap()
    hmtx = font["hmtx"]
    for r in (0x20, 0xA0):
        g = cmap.get(r)
        if g is not None:
            hmtx[g] = (space, hmtx[g][1])


def to_grid(font, column):
    """Widens every glyph to whole columns of the Latin monospaced font:
    a full-width glyph (one em) to two, a half-width one to one, each
    outline centred in its new advance. The syllables are composites of
    simple jamo glyphs, so moving the simple glyphs moves them too."""
    glyf, hmtx = font["glyf"], font["hmtx"]
    half = font["head"].unitsPerEm / 2
    for name in font.getGlyphOrder():
        adv, lsb = hmtx[name]
        if adv == column:
            continue  # the space, already a column wide
        width = max(1, round(adv / half)) * column
        dx = (width - adv) // 2
        g = glyf[name]
        if not g.isComposite() and g.numberOfContours > 0:
            g.coordinates.translate((dx, 0))
            g.recalcBounds(glyf)
        hmtx[name] = (width, lsb + dx)


def main():
    # fontTools says it drops the VTT sources (TSI*) it cannot cut: they are
    # hinting sources, dropped with the hinting anyway.
    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)
    for out, src, family, style, upem, ascent, descent, space in FACES:
        path = os.path.join(NANUM, src)
        if not os.path.exists(path):
            sys.exit(f"gen.py: {path} is missing: sudo apt-get install fonts-nanum")
        font = cut(path)
        if font["head"].unitsPerEm != upem:
            scale_upem(font, upem)
        rename(font, family, style)
        metrics(font, ascent, descent, space)
        if "Mono" in family:
            to_grid(font, space)
        dst = os.path.join(HERE, out)
        font.save(dst)
        print(f"{out}: {os.path.getsize(dst)} bytes, {len(font.getBestCmap())} runes, from {src}")


if __name__ == "__main__":
    main()
