// The stable test id scheme (harness/clause-test.ts gives each test its id at the test):
// "<suite file>/<what it probes>[/<case>...]", e.g. "auth/missing-key/models",
// "clients/openai@6/error-401". Lower case, so ids read the same in every report.
// No dependency: the runner, the self-tests and the suites all use it.

/** A stable test id: "<suite file>/<slug>[/<slug>...]", each slug lower-case letters, digits and - . @ _ */
export const TEST_ID = /^[a-z][a-z0-9-]*(\/[a-z0-9@._][a-z0-9@._-]*)+$/;

/** One segment of a test id from a data label (an endpoint, a path, a model id): "POST /chat/completions" -> "post-chat-completions". */
export function idPart(label: string): string {
  return label.toLowerCase().replace(/[^a-z0-9@._]+/g, '-').replace(/^-+|-+$/g, '');
}
