// The settings of npm test come from one table (lib/run/settings.ts): --help prints it,
// docs/CONFIGURATION.md holds it, and every variable loadConfig reads is in it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { SETTINGS, helpText } from '../../lib/run/settings.ts';
import { CONFIGURATION_DOC, withSettingsTable } from '../../runner/configuration-doc.ts';

const names = SETTINGS.flatMap((s) => s.name.split(', '));

describe('settings', () => {
  it('docs/CONFIGURATION.md holds the table of lib/run/settings.ts (regenerate: npx tsx runner/configuration-doc.ts)', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    expect(doc).toBe(withSettingsTable(doc));
  });

  it('names every variable loadConfig reads', () => {
    const read = new Set<string>();
    const env = new Proxy({} as NodeJS.ProcessEnv, { get: (_, k) => { if (typeof k === 'string') read.add(k); return undefined; } });
    loadConfig(env);
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((v) => !names.includes(v))).toEqual([]);
  });

  it('--help prints every setting but the self-test seams, with its default', () => {
    const help = helpText();
    for (const s of SETTINGS) expect(help.includes(`  ${s.name} `), s.name).toBe(!s.seam);
    expect(help).toContain('TIMEOUT_MS');
    expect(help).toMatch(/TIMEOUT_MS +Limit for one request .*\(default: 30000\)/);
  });
});
