import { describe, expect, it } from 'vitest';
import { convertHtml, HTML_CONVERSION_LIMITS } from './convert-html';
import { htmlToPlainText } from './html-to-plain-text';
import { measureHtml } from './measure-html';

const BASE = 'https://example.com/docs/page.html';

const PAGE = `<!doctype html>
<html><head><title>  The  Guide &amp; More </title><style>.x { color: red }</style>
<script>var secret = "script-content";</script></head>
<body>
<header><a href="/">Site logo</a></header>
<nav><a href="/a">Nav link</a></nav>
<main>
  <h1>Getting started</h1>
  <p>Read the <a href="../intro.html">introduction</a> and <strong>install</strong> it.</p>
  <noscript>enable javascript</noscript>
  <img src="/img/chart.png" alt="A chart">
  <ul><li>one</li><li>two</li></ul>
  <pre><code>npm install tollgate</code></pre>
  <form><input name="q"><button>Search</button></form>
  <iframe src="https://ads.example/"></iframe>
  <svg><text>svg-text</text></svg>
  <div hidden>hidden-text</div>
</main>
<aside>Related posts</aside>
<footer>Copyright footer</footer>
</body></html>`;

describe('convertHtml', () => {
  it('returns the title and the main content as markdown, chrome removed, links absolute', () => {
    const { title, content } = convertHtml(PAGE, 'markdown', BASE);
    expect(title).toBe('The Guide & More');
    expect(content).toBe(
      [
        '# Getting started',
        '',
        'Read the [introduction](https://example.com/intro.html) and **install** it.',
        '',
        '![A chart](https://example.com/img/chart.png)',
        '',
        '-   one',
        '-   two',
        '',
        '```',
        'npm install tollgate',
        '```',
      ].join('\n'),
    );
  });

  it('returns plain text for format text', () => {
    const { title, content } = convertHtml(PAGE, 'text', BASE);
    expect(title).toBe('The Guide & More');
    expect(content).toBe(
      ['Getting started', '', 'Read the introduction and install it.', '', 'A chart', '', '-   one', '-   two', '', 'npm install tollgate'].join('\n'),
    );
  });

  it('uses the whole body without main or article, still dropping chrome', () => {
    const html = '<title>T</title><header>Top bar</header><h2>Hello *world*</h2><p>Text</p><script>x()</script><footer>f</footer>';
    expect(convertHtml(html, 'markdown', BASE)).toEqual({ title: 'T', content: '## Hello \\*world\\*\n\nText' });
  });

  it('prefers top-level articles and keeps an article header', () => {
    const html = '<div>Intro teaser</div><article><header><h1>Post</h1></header><p>Body</p><article><p>Comment</p></article></article>';
    expect(convertHtml(html, 'markdown', BASE)).toEqual({ title: null, content: '# Post\n\nBody\n\nComment' });
  });

  it('keeps a page-wide form that wraps the content, drops javascript: links', () => {
    const html = '<form><main><h1>Web forms</h1><p><a href="javascript:alert(1)">Click</a></p></main></form>';
    expect(convertHtml(html, 'markdown', BASE).content).toBe('# Web forms\n\nClick');
  });

  it('numbers ordered list items from their start, nested lists apart, as turndown does', () => {
    const html = '<ol start="3"><li>three</li><li>four<ol><li>inner</li></ol></li><li>five</li></ol><ul><li>dot</li></ul>';
    expect(convertHtml(html, 'markdown', BASE).content).toBe('3.  three\n4.  four\n    1.  inner\n5.  five\n\n-   dot');
    // A hidden item is dropped, as before, and not numbered.
    expect(convertHtml('<ol><li>a</li><li hidden>b</li><li>c</li></ol>', 'markdown', BASE).content).toBe('1.  a\n2.  c');
    const long = convertHtml(`<ol>${'<li>x'.repeat(20_000)}</ol>`, 'markdown', BASE).content.split('\n');
    expect([long.length, long[0], long.at(-1)]).toEqual([20_000, '1.  x', '20000.  x']);
  });

  it('reads a page past its limits as text: too deeply nested (which overflowed the stack) or too many elements', () => {
    expect(HTML_CONVERSION_LIMITS).toEqual({ elements: 100_000, depth: 128 });
    const deep = `<title>Deep</title><body>${'<ul><li>'.repeat(5_000)}bottom &amp; <b>end</b>`;
    expect(convertHtml(deep, 'markdown', BASE)).toEqual({ title: 'Deep', content: 'bottom & end' });
    const atDepth = `<body>${'<div>'.repeat(127)}**x**`;
    expect(convertHtml(atDepth, 'markdown', BASE).content).toBe('\\*\\*x\\*\\*');
    expect(convertHtml(`<body>${'<div>'.repeat(129)}**x**`, 'markdown', BASE).content).toBe('**x**');
    const many = `<body><ol>${'<li>x'.repeat(100_001)}</ol>`;
    expect(convertHtml(many, 'text', BASE).content.split('\n')).toHaveLength(100_001);
  });
});

describe('measureHtml', () => {
  it('counts start tags and the nesting a parser would build', () => {
    expect(measureHtml('<ul><li>a<li>b</ul>')).toEqual({ elements: 3, depth: 2 });
    expect(measureHtml('<ul><li><ul><li>a</ul></ul>')).toEqual({ elements: 4, depth: 4 });
    expect(measureHtml('<table><tr><td>a<td>b<tr><td>c</table>')).toEqual({ elements: 6, depth: 3 });
    expect(measureHtml('<p>a<p>b<div><br><img src=x><hr/></div>')).toEqual({ elements: 6, depth: 2 });
    // Comments, doctypes and script text hold no elements; an end tag closes what it names.
    expect(measureHtml('<!doctype html><!-- <div><div> --><script>"<div><div>"</script><div></div><div><span></span></div>')).toEqual({
      elements: 4,
      depth: 2,
    });
    expect(measureHtml('<div><span>a<div>x</span></div></div>')).toEqual({ elements: 3, depth: 3 });
    // A script never closed, a tag never ended: what came before counts.
    expect(measureHtml('<div><script>never')).toEqual({ elements: 2, depth: 2 });
    expect(measureHtml('<div><span')).toEqual({ elements: 1, depth: 1 });
    // Stops once past a limit.
    expect(measureHtml('<div>'.repeat(1_000), { elements: 10, depth: 1_000 })).toEqual({ elements: 11, depth: 11 });
  });
});

describe('htmlToPlainText', () => {
  it('keeps the words and the lines: tags dropped, script and style with their content, references decoded', () => {
    const html =
      '<title>A &amp; B</title><style>p{}</style><h1>Head</h1><p>one &lt;two&gt; &#x263A;&#9731;&nbsp;x<br>next</p><script>if (a<b) {}</script><div>  spaced   out </div>';
    expect(htmlToPlainText(html)).toEqual({ title: 'A & B', content: 'Head\n\none <two> ☺☃ x\nnext\n\nspaced out' });
    expect(htmlToPlainText('no tags at all')).toEqual({ title: null, content: 'no tags at all' });
    expect(htmlToPlainText('<p>cut <b')).toEqual({ title: null, content: 'cut' });
    // A comment is markup, whatever it holds; a `<` that starts no tag is text.
    expect(htmlToPlainText('<p>a<!-- x > y -->b</p><p>1 < 2</p>')).toEqual({ title: null, content: 'a b\n\n1 < 2' });
    expect(htmlToPlainText('<script>never closed').content).toBe('');
  });
});
