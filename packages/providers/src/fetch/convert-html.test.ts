import { describe, expect, it } from 'vitest';
import { convertHtml } from './convert-html';

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
});
