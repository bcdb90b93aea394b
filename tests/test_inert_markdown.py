"""Text from outside the run is inert in the report: rendered as GitHub renders it, it makes no link, image or HTML.

The checks render the markdown with cmarkgfm (GitHub's cmark-gfm, with its autolink extension)
and with markdown-it-py (linkify on), and read the HTML: not the markdown's text.
"""

from __future__ import annotations

import json
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt
from toys import toy

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.gate.baseline import compare, render_comparison
from claimcheck.report.markdown import WORD_JOINER, md, render, render_compact
from claimcheck.report.rundata import RunData

HOSTILE = [
    "http://evil.example/a",
    "see https://evil.example/b now",
    "HTTPS://EVIL.EXAMPLE/C",
    "ftp://evil.example/f",
    "www.evil.example/w",
    "WWW.evil.example",
    "mail me@evil.example",
    "mailto:me@evil.example",
    "xmpp:me@evil.example",
    "<http://evil.example/angle>",
    "<me@evil.example>",
    "![i](http://evil.example/i.png)",
    "[l](http://evil.example/l)",
    "[ref]: http://evil.example/ref",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "&lt;b&gt;entity&lt;/b&gt;",
    "`code` and ``more``",
    "line\n# heading\n<div>block</div>",
    "| pipe | break |",
]


def _hostile(i: int) -> str:
    return HOSTILE[i % len(HOSTILE)]


def _run() -> RunData:
    """Return a run whose every piece of outside text (names, values, paths, messages, notes) is hostile."""
    tests = []
    for i, text in enumerate(HOSTILE):
        rec = ClaimRecorder(claim_id=f"C{i}", seed=0)
        rec.check(f"stat {text}", 0.5, "<=", 1.0, label=f"label {text}")
        rec.check(f"stat {text}", 2.0, "<=", 1.0, control=f"control {text}")
        rec.set_regime(f"regime {text}", path=f"/data/{text}", value=text)
        rec.note(f"note {text}")
        rec.curve(f"curve {text}", [1.0, 0.5], group=f"group {text}")
        outcome = "error" if i % 3 == 0 else "passed"
        tests.append(TestOutcome(f"test_{i}.py::test[{text}]", f"C{i}", f"title {text}", f"source {text}", outcome,
                                 record=rec, message=f"ValueError: {text}"))  # fmt: skip
    env = {f"key {_hostile(i)}": f"value {_hostile(i + 1)}" for i in range(len(HOSTILE))}
    env["run id"] = "abc"
    files = [{"file": f"jena/{t}.csv", "size": "1", "sha256": "0" * 64, "status": t} for t in HOSTILE]
    return RunData(
        title=f"title {HOSTILE[0]} {HOSTILE[4]}",
        env=env,
        tests=tests,
        incomplete=[f"did not run or finish: {t}" for t in HOSTILE[:4]],
        counters={f"counter {HOSTILE[6]}": 1},
        data_files=files,
        not_run={"C1": [f"test_1.py::test[{HOSTILE[5]}]"]},
    )


class _Tags(HTMLParser):
    """Collect every tag of an HTML document with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


STRUCTURE = {"h1", "h2", "h3", "p", "strong", "em", "code", "pre", "ul", "ol", "li", "table", "thead", "tbody",
             "tr", "th", "td", "blockquote", "br", "hr", "details", "summary", "del"}  # fmt: skip


def _live(html: str) -> list[str]:
    """Return every link, image or HTML element in ``html`` that the report did not mean to make."""
    parser = _Tags()
    parser.feed(html)
    bad = []
    for tag, attrs in parser.tags:
        if tag in STRUCTURE:
            continue
        href, src = attrs.get("href") or "", attrs.get("src") or ""
        if tag == "a" and (href.startswith("#claim-") or (not href and set(attrs) == {"id"})):
            continue  # the report's own anchors and the links to them
        if tag == "img" and ":" not in src and not src.startswith("/") and src.endswith(".png"):
            continue  # the report's own figures: a file beside it (no scheme, no host)
        bad.append(f"<{tag} {attrs}>")
    return bad


def _cmark(text: str) -> str:
    # UNSAFE: pass raw HTML through, as a renderer that does not sanitise would, so that none can hide
    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


def _markdown_it(text: str) -> str:
    renderer = MarkdownIt("commonmark", {"linkify": True, "html": True}).enable(["linkify", "table"])
    renderer.linkify.set({"fuzzy_link": False})  # a bare name.tld is no link on GitHub either
    return renderer.render(text)


@pytest.mark.parametrize("renderer", [_cmark, _markdown_it], ids=["cmarkgfm", "markdown-it-py+linkify"])
def test_outside_text_makes_no_link_image_or_html_in_the_report(renderer) -> None:  # type: ignore[no-untyped-def]
    run = _run()
    baseline = _run()
    for t in baseline.tests:  # a moved statistic: the comparison shows it
        t.record.checks[0] = replace(t.record.checks[0], value=0.9)  # type: ignore[union-attr]
    comparison = render_comparison(compare(run, baseline, f"baseline {HOSTILE[0]} {HOSTILE[6]}.json"))
    text = render(run, figure_folder="claim-report-figures", extra=[comparison])
    assert "Comparison with baseline" in text and "**Notes**" not in text  # what is tested was rendered
    assert _live(renderer(text)) == []
    assert _live(renderer(render_compact(run))) == []


@pytest.mark.parametrize("text", HOSTILE)
def test_md_keeps_the_words_a_reader_sees(text: str) -> None:
    shown = _Text()
    shown.feed(_cmark(md(text)))
    seen = "".join(shown.parts).replace(WORD_JOINER, "").strip()  # the joiner before an @ is invisible
    assert seen == " ".join(text.replace("&lt;", "<").replace("&gt;", ">").split("\n"))


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def test_a_crafted_baseline_renders_no_live_link_to_its_host(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=toy())
    pytester.runpytest("--claim-report=base.md")
    data = json.loads((pytester.path / "base.json").read_text())
    for i, t in enumerate(data["tests"]):
        t["claim_id"] = f"C9 http://evil.example/{i} www.evil.example x@evil.example"
        t["title"] = "<img src=http://evil.example/t.png> https://evil.example/title"
        t["record"]["checks"][0]["statistic"] = f"[click](http://evil.example) www.evil.example/{i}"
    data["env"] = {**data["env"], "cpu": "http://evil.example/cpu", "gpu": "me@evil.example"}
    (pytester.path / "evil.json").write_text(json.dumps(data))
    pytester.runpytest("--claim-baseline=evil.json", "--claim-report")
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "Comparison with baseline" in text and "evil.example" in text
    assert _live(_cmark(text)) == []


def test_paths_in_figure_links_and_code_spans_cannot_break_out(tmp_path: Path) -> None:
    rec = ClaimRecorder(claim_id="C9", seed=0)
    rec.check("s", 0.5, "<=", 1.0)
    rec.check("s", 2.0, "<=", 1.0, control="c")
    rec.curve("loss", [1.0, 0.5], group="g")
    test = TestOutcome("test_`x`.py::test[a` [l](http://evil.example/x) `b]", "C9", "t", "s", "error", record=rec,
                       message="E")  # fmt: skip
    run = RunData(title="t", env={"rerun options": "--claim-data-dir '/data/` [l](http://evil.example/r) `'"},
                  tests=[test])  # fmt: skip
    html = _cmark(render(run, figure_folder="my report) [l](http://evil.example/f)-figures"))
    assert _live(html) == [] and "my%20report" in html  # the figure's folder is a quoted relative path
