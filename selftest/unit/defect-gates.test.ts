// The mutation run's gate ignorer (mutation/defect-gates.mjs): which code it leaves out
// of the score because only a switched-on defect or variant reaches it, and which code
// it must still mutate (a live branch must never be ignored as a gate).
import { describe, expect, it } from 'vitest';
import { parseSync, traverse } from '@babel/core';
// @ts-expect-error -- a plain ES module plugin for StrykerJS, without types
import { strykerPlugins } from '../../mutation/defect-gates.mjs';

const ignorer = (strykerPlugins as Array<{ value: { shouldIgnore(path: unknown): string | undefined } }>)[0]!.value;

/** The source text of every node the ignorer ignores, outermost only. */
function ignored(code: string): string[] {
  const ast = parseSync(code, { filename: 'x.ts', presets: [], parserOpts: { plugins: ['typescript'] }, babelrc: false, configFile: false })!;
  const out: string[] = [];
  traverse(ast, {
    enter(path) {
      if (ignorer.shouldIgnore(path)) {
        out.push(code.slice(path.node.start!, path.node.end!));
        path.skip();
      }
    },
  });
  return out;
}

describe('defect and variant gates in mutation runs', () => {
  it('ignores a switch and the branch only it reaches, not the live branch', () => {
    expect(ignored("if (ctx.defect('a')) one(); else two();")).toEqual(["ctx.defect('a')", 'one();']);
    expect(ignored("const x = ctx.variant('v') ? gated() : live();")).toEqual(["ctx.variant('v')", 'gated()']);
  });

  it('treats a const bound to a switch as the switch', () => {
    const code = "const extra = ctx.variant('extra-fields');\nif (extra) { body.x = 1; }\nbody.y = 2;";
    expect(ignored(code)).toEqual(["ctx.variant('extra-fields')", 'extra', '{ body.x = 1; }']);
  });

  it('treats a const bound to an || or ?: of switches as a switch', () => {
    expect(ignored("const s = ctx.defect('a') || (req.stream && ctx.defect('b'));\nif (s) gated();")).toContain('gated();');
    expect(ignored("const u = isDone ? ctx.defect('a') : ctx.defect('b');\nif (!u) live();")).not.toContain('live();');
  });

  it('does not treat a const that can be true with every switch off as a switch', () => {
    const code = "const withUsage = plan.includeUsage && !ctx.variant('no-usage');\nif (withUsage) live();";
    expect(ignored(code)).not.toContain('live();');
    expect(ignored("let extra = ctx.variant('x');\nextra = true;\nif (extra) live();")).not.toContain('live();');
    expect(ignored("const mixed = ctx.defect('a') || other;\nif (mixed) live();")).not.toContain('live();');
  });
});
