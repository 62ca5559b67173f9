// The repository README's SDK quick start, run as written against the
// built package (dist/): every ```js block of ../../README.md is a whole
// Node program, and the ```text block after it is what it must print. The
// one change made to it is the import: 'flowtrack' names this build.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = new URL('../dist/index.js', import.meta.url).href;

// fences returns the fenced code blocks of a Markdown document, in order,
// each with its language, body and the line of its opening fence.
function fences(doc) {
  const out = [];
  let cur = null;
  doc.split('\n').forEach((line, i) => {
    if (!line.startsWith('```')) {
      if (cur) cur.body += line + '\n';
      return;
    }
    if (cur) {
      out.push(cur);
      cur = null;
    } else {
      cur = { lang: line.slice(3).trim(), body: '', line: i + 1 };
    }
  });
  if (cur) throw new Error(`README.md: the code block opened on line ${cur.line} is never closed`);
  return out;
}

describe('README.md SDK quick start', () => {
  const blocks = fences(readFileSync(join(root, 'README.md'), 'utf8'));
  const programs = blocks.flatMap((b, i) => (b.lang === 'js' ? [{ ...b, want: blocks[i + 1] }] : []));

  it('has a quick start, each followed by what it prints', () => {
    assert.ok(programs.length > 0, 'README.md has no js block');
    for (const p of programs) {
      assert.equal(p.want?.lang, 'text', `README.md line ${p.line}: a js program must be followed by a text block with what it prints`);
    }
  });

  for (const p of programs) {
    it(`runs the program on line ${p.line} as written`, () => {
      assert.match(p.body, /from 'flowtrack';/, 'the program imports the package by its name');
      const dir = mkdtempSync(join(tmpdir(), 'flowtrack-readme-'));
      try {
        const file = join(dir, 'quickstart.mjs');
        writeFileSync(file, p.body.replaceAll("from 'flowtrack';", `from '${dist}';`));
        const out = execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        assert.equal(out, p.want.body, `README.md line ${p.line} prints something else than its text block`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
