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

function isGateCall(node) {
  if (node?.type !== 'CallExpression') return false;
  const c = node.callee;
  if (c.type === 'MemberExpression' && !c.computed && c.property.type === 'Identifier') {
    if (c.property.name === 'defect' || c.property.name === 'variant') return true;
    if (c.property.name === 'has' && ((c.object.type === 'Identifier' && c.object.name === 'variants') || (c.object.type === 'MemberExpression' && c.object.property?.name === 'variants'))) return true;
  }
  // stream-plan.ts: const d = (name) => ctx.defect(name)
  return c.type === 'Identifier' && c.name === 'd' && node.arguments.length === 1 && node.arguments[0].type === 'StringLiteral';
}
const unwrap = (n) => (n?.type === 'ParenthesizedExpression' ? unwrap(n.expression) : n);

function operands(node, op) {
  node = unwrap(node);
  return node?.type === 'LogicalExpression' && node.operator === op ? [...operands(node.left, op), ...operands(node.right, op)] : [node];
}
/**
 * A gate: a switch call, or a const bound to an expression that is always false with
 * every switch off (const extra = ctx.variant('extra-fields'); const x = gate || gate),
 * so that `if (extra) ...` is a gate as `if (ctx.variant('extra-fields')) ...` is.
 */
function isGate(node, scope) {
  node = unwrap(node);
  if (isGateCall(node)) return true;
  if (node?.type !== 'Identifier' || !scope) return false;
  const binding = scope.getBinding(node.name);
  const decl = binding?.path.node;
  return binding?.kind === 'const' && decl?.type === 'VariableDeclarator' && decl.id.type === 'Identifier' && !!decl.init && alwaysFalse(decl.init, binding.path.scope);
}
const isNotGate = (n, scope) => { n = unwrap(n); return n?.type === 'UnaryExpression' && n.operator === '!' && isGate(n.argument, scope); };
/** Always false when every gate is off: a gate, an && chain with a gate in it, an || chain or a ?: of such. */
function alwaysFalse(n, scope) {
  n = unwrap(n);
  if (operands(n, '&&').some((o) => isGate(o, scope))) return true;
  if (n?.type === 'LogicalExpression' && n.operator === '||') return operands(n, '||').every((o) => alwaysFalse(o, scope));
  if (n?.type === 'ConditionalExpression') return alwaysFalse(n.consequent, scope) && alwaysFalse(n.alternate, scope);
  return false;
}
/** Always true when every gate is off: !gate, or an || chain with !gate in it. */
const alwaysTrue = (n, scope) => operands(n, '||').some((o) => isNotGate(o, scope));

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'defect-gates', {
    shouldIgnore(path) {
      const node = path.node;
      const scope = path.scope;
      // The const's own name where it is declared is not a use of it.
      if (node.type === 'Identifier' && !path.isReferencedIdentifier()) return undefined;
      if (isGate(node, scope) || isNotGate(node, scope)) return REASON;
      if ((node.type === 'LogicalExpression' || node.type === 'ConditionalExpression') && (alwaysFalse(node, scope) || alwaysTrue(node, scope))) return REASON;
      const parent = path.parent;
      if ((parent?.type === 'IfStatement' || parent?.type === 'ConditionalExpression') && path.key !== 'test') {
        if (path.key === 'consequent' && alwaysFalse(parent.test, scope)) return REASON;
        if (path.key === 'alternate' && alwaysTrue(parent.test, scope)) return REASON;
      }
      return undefined;
    },
  }),
];
