// A workload that cannot be used (a file that cannot be read, a malformed line, an
// impossible distribution): one line naming the source, the line and the fix; the
// runner turns it into exit 2 before any request. Plain module (k6 bundles load/workload).
export class WorkloadInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkloadInputError';
  }
}

/** "file:line: problem; fix" (line 0 = the file as a whole). */
export function inputError(source: string, line: number, problem: string, fix: string): WorkloadInputError {
  return new WorkloadInputError(`${source}${line > 0 ? `:${line}` : ''}: ${problem}; ${fix}`);
}
