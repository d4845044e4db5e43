// The k6 side's build: the TypeScript sources type-check against @types/k6, every
// script bundles into one ES2017 module whose only imports are k6's own, the
// validators generated from schemas/ judge exactly as lib/spec/schema-validator.ts
// does, and the k6-operator example has the fields the docs rely on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { buildK6, K6_DIR, ROOT_DIR, scriptNames, type BuildResult } from '../../load/k6/build.ts';
import { validate, type SchemaName } from '../../lib/spec/schema-validator.ts';
import { startReferenceServer, type ReferenceServer } from '../../reference/server.ts';

const run = promisify(execFile);
const TSC = join(ROOT_DIR, 'node_modules', 'typescript', 'bin', 'tsc');
const EXPECTED_SCRIPTS = ['brain-mix', 'chat-stream', 'chat-stream-sse', 'chat-throughput', 'ratelimit-probe'];

let outdir: string;
let built: BuildResult;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'chatgate-k6-build-'));
  built = await buildK6({ outdir });
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Syntax newer than ES2017 that older k6 runtimes (goja) reject; esbuild should have lowered all of it. */
function newerThanEs2017(code: string): string[] {
  const sf = ts.createSourceFile('bundle.js', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const found = new Set<string>();
  const visit = (node: ts.Node, inFunction: boolean): void => {
    if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node) || ts.isCallExpression(node)) {
      if (node.questionDotToken) found.add('optional chaining');
    }
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (op === ts.SyntaxKind.QuestionQuestionToken) found.add('??');
      if (op === ts.SyntaxKind.QuestionQuestionEqualsToken || op === ts.SyntaxKind.BarBarEqualsToken || op === ts.SyntaxKind.AmpersandAmpersandEqualsToken) found.add('logical assignment');
    }
    if (ts.isSpreadAssignment(node)) found.add('object spread');
    if (ts.isObjectBindingPattern(node) && node.elements.some((e) => e.dotDotDotToken)) found.add('object rest');
    if (ts.isCatchClause(node) && !node.variableDeclaration) found.add('optional catch binding');
    if (ts.isForOfStatement(node) && node.awaitModifier) found.add('for await');
    if (ts.isPropertyDeclaration(node)) found.add('class field');
    if (ts.isPrivateIdentifier(node)) found.add('private name');
    if (ts.isClassStaticBlockDeclaration(node)) found.add('static block');
    if (ts.isBigIntLiteral(node)) found.add('bigint');
    if (ts.isRegularExpressionLiteral(node) && /\/[a-z]*s[a-z]*$/.test(node.text)) found.add('regex s flag');
    if (node.kind === ts.SyntaxKind.AwaitExpression && !inFunction) found.add('top-level await');
    const fn = inFunction || ts.isFunctionLike(node);
    ts.forEachChild(node, (child) => visit(child, fn));
  };
  visit(sf, false);
  return [...found];
}

/** What goja ran natively before ES2016 (base mode has no Babel): everything newerThanEs2017 finds, plus ES2016/2017 syntax and generators. */
function newerThanEs2015(code: string): string[] {
  const found = new Set(newerThanEs2017(code));
  const sf = ts.createSourceFile('bundle.js', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Async)) found.add('async function');
    if (node.kind === ts.SyntaxKind.AwaitExpression) found.add('async function');
    if (ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.AsteriskAsteriskToken || node.operatorToken.kind === ts.SyntaxKind.AsteriskAsteriskEqualsToken)) found.add('**');
    if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isMethodDeclaration(node)) && node.asteriskToken) found.add('generator');
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return [...found];
}

describe('k6 sources type-check', () => {
  it('tsc -p load/k6/tsconfig.json (scripts against @types/k6) and load/k6/tsconfig.build.json (build.ts) pass', async () => {
    const check = (project: string) => run(process.execPath, [TSC, '-p', project, '--noEmit'], { cwd: ROOT_DIR }).then(
      () => '',
      (e: { stdout?: string; stderr?: string }) => `${project}:\n${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
    const errors = await Promise.all([check('load/k6/tsconfig.json'), check('load/k6/tsconfig.build.json')]);
    expect(errors.join('')).toBe('');
  });
});

describe('k6 bundles', () => {
  it('one bundle per script, plus the validators', () => {
    expect(scriptNames()).toEqual(EXPECTED_SCRIPTS);
    expect(built.bundles.map((b) => b.name)).toEqual(EXPECTED_SCRIPTS);
    expect(readdirSync(outdir).sort()).toEqual([...EXPECTED_SCRIPTS.map((s) => `${s}.js`), 'base', 'validators.js'].sort());
    expect(readdirSync(join(outdir, 'base')).sort()).toEqual(EXPECTED_SCRIPTS.map((s) => `${s}.js`).sort());
  });

  it('each bundle imports only k6 modules and exports default, options and handleSummary', () => {
    for (const b of built.bundles) {
      expect(b.imports.every((p) => /^k6(\/|$)/.test(p)), `${b.name}: ${b.imports.join(', ')}`).toBe(true);
      expect(b.exports).toEqual(expect.arrayContaining(['default', 'options', 'handleSummary']));
      const code = readFileSync(b.file, 'utf8');
      const imports = [...code.matchAll(/^import\s.*?from\s+"([^"]+)";?$/gm)].map((m) => m[1]);
      expect(imports.length).toBeGreaterThan(0);
      expect(imports.filter((p) => !/^k6(\/|$)/.test(p!)), b.name).toEqual([]);
      expect(code, `${b.name} mentions node:`).not.toMatch(/["']node:/);
      // A real require() call (the validators only mention one inside a string).
      expect(code, `${b.name} calls require()`).not.toMatch(/(^|[^\w.$'"])require\(/m);
      expect(code, `${b.name} imports from the network`).not.toMatch(/from\s+"https?:/);
      expect(code, `${b.name} still imports chatgate:validators`).not.toContain('"chatgate:validators"');
    }
  });

  it('bundles use no syntax newer than ES2017 (older k6 runtimes run them too)', () => {
    for (const f of [built.validators, ...built.bundles]) {
      expect(newerThanEs2017(readFileSync(f.file, 'utf8')), f.name).toEqual([]);
    }
    // The checker itself finds what it looks for.
    expect(newerThanEs2017('const a = b?.c ?? { ...d }; await a;')).toEqual(expect.arrayContaining(['optional chaining', '??', 'object spread', 'top-level await']));
    expect(newerThanEs2017('async function f() { await g(); }')).toEqual([]);
  });

  it('dist/base/: CommonJS for --compatibility-mode=base, k6 modules only through require(), ES2015 syntax, the same exports', () => {
    expect(built.baseBundles.map((b) => b.name)).toEqual(EXPECTED_SCRIPTS);
    for (const b of built.baseBundles) {
      const code = readFileSync(b.file, 'utf8');
      expect(code, b.name).not.toMatch(/^\s*(import|export)\s/m);
      expect(code, b.name).toMatch(/^module\.exports = /m);
      const required = [...code.matchAll(/(?:^|[^\w.$'"])require\("([^"]+)"\)/gm)].map((m) => m[1]!);
      expect(required.length, b.name).toBeGreaterThan(0);
      expect(required.filter((p) => !/^k6(\/|$)/.test(p)), b.name).toEqual([]);
      // Once: on k6 v0.40 each require is its own instance, and setResponseCallback must reach every request.
      expect(required.filter((p) => p === 'k6/http'), b.name).toEqual(['k6/http']);
      expect(b.exports, b.name).toEqual(expect.arrayContaining(['default', 'options', 'handleSummary', 'setup']));
      const esm = built.bundles.find((e) => e.name === b.name)!;
      expect([...b.exports].sort(), b.name).toEqual([...esm.exports].sort());
      expect(newerThanEs2015(code), b.name).toEqual([]);
      expect(code).not.toMatch(/new Function|\beval\(/);
    }
    // The checker finds ES2016/ES2017 syntax too.
    expect(newerThanEs2015('async function f() { await g(); } const x = 2 ** 3; function* h() { yield 1; }')).toEqual(expect.arrayContaining(['async function', '**', 'generator']));
  });

  it('the validators are compiled in: no ajv, no schema files at run time', () => {
    expect(built.validators.imports).toEqual([]);
    for (const b of built.bundles) {
      const code = readFileSync(b.file, 'utf8');
      expect(code).toContain('https://chatgate.local/schemas/chat-completion.schema.json');
      // k6's global open() reads files; xk6-sse's sse.open() is a method, not a file read.
      expect(code).not.toMatch(/(?<![.\w$])open\(/);
      expect(code).not.toMatch(/new Function|\beval\(/);
    }
  });

  it('npm run build:k6 (tsx load/k6/build.ts) writes load/k6/dist', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(K6_DIR, 'build.ts')], { cwd: ROOT_DIR });
    for (const s of EXPECTED_SCRIPTS) expect(stdout).toContain(`load/k6/dist/${s}.js`);
    expect(readdirSync(join(K6_DIR, 'dist'))).toEqual(expect.arrayContaining(EXPECTED_SCRIPTS.map((s) => `${s}.js`)));
  });
});

describe('standalone validators agree with lib/spec/schema-validator.ts', () => {
  let ref: ReferenceServer;
  let validators: Record<string, (data: unknown) => boolean>;
  beforeAll(async () => {
    ref = await startReferenceServer({});
    validators = await import(pathToFileURL(built.validators.file).href);
  });
  afterAll(() => ref.close());

  const completion = {
    id: 'chatcmpl-abc', object: 'chat.completion', model: 'svc',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
  const cases: Array<[string, SchemaName, string, unknown]> = [
    ['valid completion', 'chat-completion', 'chatCompletion', completion],
    ['id without chatcmpl-', 'chat-completion', 'chatCompletion', { ...completion, id: 'cmpl-abc' }],
    ['no usage', 'chat-completion', 'chatCompletion', { ...completion, usage: undefined }],
    ['empty choices', 'chat-completion', 'chatCompletion', { ...completion, choices: [] }],
    ['content parts', 'chat-completion', 'chatCompletion', { ...completion, choices: [{ index: 0, message: { role: 'assistant', content: [{ type: 'text', text: 'x' }] }, finish_reason: 'stop' }] }],
    ['string tokens', 'chat-completion', 'chatCompletion', { ...completion, usage: { prompt_tokens: '3', completion_tokens: 2, total_tokens: 5 } }],
    ['empty model (minLength, via ucs2length)', 'chat-completion', 'chatCompletion', { ...completion, model: '' }],
    ['valid chunk', 'chat-completion-chunk', 'chatCompletionChunk', { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'svc', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] }],
    ['chunk with string delta', 'chat-completion-chunk', 'chatCompletionChunk', { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'svc', choices: [{ index: 0, delta: 'x' }] }],
    ['valid error', 'error', 'errorBody', { error: { message: 'no', type: 'invalid_request_error', code: 'bad' } }],
    ['flat error', 'error', 'errorBody', { message: 'no', type: 't', code: 'c' }],
    ['error code null', 'error', 'errorBody', { error: { message: 'no', type: 't', code: null } }],
    ['model list', 'model-list', 'modelList', { object: 'list', data: [{ id: 'svc' }] }],
    ['not JSON at all', 'chat-completion', 'chatCompletion', undefined],
  ];
  for (const [what, schema, exported, data] of cases) {
    it(`${what}: same verdict`, () => {
      const expected = validate(schema, data).valid;
      expect(validators[exported]!(data)).toBe(expected);
    });
  }

  it('accepts the reference\'s chat completion and rejects a defect\'s', async () => {
    const ask = async (r: ReferenceServer) => {
      const res = await fetch(`${r.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${r.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc', messages: [{ role: 'user', content: 'hi' }] }),
      });
      return res.json();
    };
    expect(validators.chatCompletion!(await ask(ref))).toBe(true);
    const broken = await startReferenceServer({ defect: 'cc-id-no-prefix' });
    try {
      const body = await ask(broken);
      expect(validators.chatCompletion!(body)).toBe(false);
      const errors = (validators.chatCompletion as unknown as { errors: Array<{ parentSchema: Record<string, unknown> }> }).errors;
      expect(errors[0]!.parentSchema['x-clause']).toBe('RES-CC-1');
    } finally {
      await broken.close();
    }
  });
});

describe('k6-operator example (load/k6/operator/testrun.yaml)', () => {
  const docs = parseAllDocuments(readFileSync(join(K6_DIR, 'operator', 'testrun.yaml'), 'utf8'));

  it('parses, and is one TestRun', () => {
    for (const d of docs) expect(d.errors).toEqual([]);
    expect(docs.map((d) => d.toJS().kind)).toEqual(['TestRun']);
  });

  it('has the fields docs/K6.md relies on', () => {
    const tr = docs[0]!.toJS();
    expect(tr.apiVersion).toBe('k6.io/v1alpha1');
    expect(tr.metadata.name).toMatch(/^[a-z0-9-]+$/);
    expect(Number.isInteger(tr.spec.parallelism) && tr.spec.parallelism >= 2).toBe(true);
    expect(tr.spec.script.configMap.name).toBeTruthy();
    // The ConfigMap holds a bundle from dist/, not a TypeScript source.
    expect(EXPECTED_SCRIPTS.map((s) => `${s}.js`)).toContain(tr.spec.script.configMap.file);
    expect(tr.spec.runner.envFrom).toEqual(expect.arrayContaining([{ secretRef: { name: expect.any(String) } }]));
    const entries = tr.spec.runner.env as Array<{ name: string; value?: string; valueFrom?: unknown }>;
    const env = Object.fromEntries(entries.map((e) => [e.name, e.value]));
    expect(env.SUMMARY_DIR).toBe('none');
    expect(Number(env.RATE)).toBeGreaterThan(0);
    // Kubernetes env values must be strings (or come from valueFrom, as the pod name does).
    for (const e of entries) expect(typeof e.value === 'string' || (e.value === undefined && typeof e.valueFrom === 'object')).toBe(true);
    // Keys come from the Secret only (TARGET_URL is not a secret; see selftest/unit/k6-operator.test.ts).
    for (const name of ['API_KEY', 'LIMITED_API_KEY', 'RATE_LIMIT_API_KEY']) expect(env[name]).toBeUndefined();
  });
});
