#!/usr/bin/env python3
"""Paragraph text from DocBook-style HTML manuals (Debian FAQ, installation guide, GIMP help).

    python3 corpus/htmltext.py FILE.html...   # prints one paragraph per line

Every block element (p, li, dt, dd, td, th, h1–h6, caption, blockquote) becomes one paragraph;
nested blocks are emitted on their own, and their text is not repeated in the outer block. Inline
markup (code, em, a, span) keeps its text. Program listings (pre), scripts, styles, the page head
and the navigation bars of DocBook output are skipped.
"""
import re
import sys
from html.parser import HTMLParser

BLOCK = {"p", "li", "dt", "dd", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "caption",
         "blockquote", "figcaption", "title"}
SKIP = {"pre", "script", "style", "head", "code-block", "kbd-block"}
NAV = re.compile(r"\bnav(header|footer)\b|\bbreadcrumb")
SPACE = re.compile(r"\s+")
VOID = {"br", "img", "hr", "meta", "link", "input", "col", "area", "base", "wbr", "source"}


class _Paragraphs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []      # open block elements: (tag, [text pieces])
        self.skip = []       # open skipped elements (tag names)
        self.out = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            if tag == "br" and self.stack:
                self.stack[-1][1].append(" ")
            return
        cls = dict(attrs).get("class") or ""
        if self.skip or tag in SKIP or (tag == "div" and NAV.search(cls)):
            self.skip.append(tag)
            return
        if tag in BLOCK:
            self.stack.append((tag, []))

    def handle_endtag(self, tag):
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            return
        if tag in BLOCK and self.stack:
            # close up to the matching block (HTML in the wild is not always balanced)
            while self.stack:
                t, buf = self.stack.pop()
                text = SPACE.sub(" ", "".join(buf)).strip()
                if text:
                    self.out.append(text)
                if t == tag:
                    break

    def handle_data(self, data):
        if self.skip or not self.stack:
            return
        self.stack[-1][1].append(data)


def paragraphs(src):
    p = _Paragraphs()
    p.feed(src)
    p.close()
    while p.stack:
        p.handle_endtag(p.stack[-1][0])
    return p.out


if __name__ == "__main__":
    for f in sys.argv[1:]:
        for line in paragraphs(open(f, encoding="utf-8", errors="replace").read()):
            print(line)
