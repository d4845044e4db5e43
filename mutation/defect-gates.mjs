// A StrykerJS ignorer for the reference server's defect and variant gates.
//
// The reference carries the suite's seeded defects and legal variants behind switches:
// ctx.defect('name'), ctx.variant('name'), d('name') in stream-plan.ts and
// variants.has('name') in options.ts/server.ts. A mutation run serves neither (no
// REFERENCE_DEFECT, no REFERENCE_VARIANTS), so a switch is always false there, and:
//   - the switch's own mutants (the name string, `switch -> false`) change nothing;
//   - code only a switched-on gate reaches (`if (gate) ...`, `gate && x`, `gate ? a : b`'s a)
//     never runs, and would show as "no coverage".
// Both sides are proven elsewhere, case by case: every defect by the defect catalogue
// self-tests (the suite fails exactly its clauses), every variant by the legal-variant
// self-tests (the suite passes clean). So these nodes are ignored here, with that reason;
// the code the gate leaves live (the else branch, `a || gate`'s a, `!gate || x`'s
// consequent) is mutated as usual.
import { PluginKind, declareValuePlugin } from '@stryker-mutator/api/plugin';

const REASON = 'defect/variant gate: off in the mutation run; the defect catalogue and legal-variant self-tests prove both sides';

function isGate(node) {
  if (node?.type !== 'CallExpression') return false;
  const c = node.callee;
  if (c.type === 'MemberExpression' && !c.computed && c.property.type === 'Identifier') {
    if (c.property.name === 'defect' || c.property.name === 'variant') return true;
    if (c.property.name === 'has' && ((c.object.type === 'Identifier' && c.object.name === 'variants') || (c.object.type === 'MemberExpression' && c.object.property?.name === 'variants'))) return true;
  }
  // stream-plan.ts: const d = (name) => ctx.defect(name)
  return c.type === 'Identifier' && c.name === 'd' && node.arguments.length === 1 && node.arguments[0].type === 'StringLiteral';
}
const isNotGate = (n) => n?.type === 'UnaryExpression' && n.operator === '!' && isGate(n.argument);
const unwrap = (n) => (n?.type === 'ParenthesizedExpression' ? unwrap(n.expression) : n);

function operands(node, op) {
  node = unwrap(node);
  return node?.type === 'LogicalExpression' && node.operator === op ? [...operands(node.left, op), ...operands(node.right, op)] : [node];
}
/** Always false when every gate is off: a gate, or an && chain with a gate in it. */
const alwaysFalse = (n) => operands(n, '&&').some(isGate);
/** Always true when every gate is off: !gate, or an || chain with !gate in it. */
const alwaysTrue = (n) => operands(n, '||').some(isNotGate);

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'defect-gates', {
    shouldIgnore(path) {
      const node = path.node;
      if (isGate(node) || isNotGate(node)) return REASON;
      if (node.type === 'LogicalExpression' && (alwaysFalse(node) || alwaysTrue(node))) return REASON;
      const parent = path.parent;
      if ((parent?.type === 'IfStatement' || parent?.type === 'ConditionalExpression') && path.key !== 'test') {
        if (path.key === 'consequent' && alwaysFalse(parent.test)) return REASON;
        if (path.key === 'alternate' && alwaysTrue(parent.test)) return REASON;
      }
      return undefined;
    },
  }),
];
