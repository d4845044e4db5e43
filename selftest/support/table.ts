// Prints a Markdown table to the terminal (past vitest's console capture) and keeps
// a copy under reports/selftest/ for people to read after the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run-suite.ts';

export function markdownTable(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function publishTable(name: string, title: string, head: string[], rows: string[][], footer = ''): void {
  const text = `## ${title}\n\n${markdownTable(head, rows)}\n${footer ? `\n${footer}\n` : ''}`;
  const dir = join(ROOT, 'reports/selftest');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.md`), text);
  process.stdout.write(`\n${text}\n`);
}
