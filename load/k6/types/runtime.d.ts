// k6 provides console in every context; @types/k6 does not declare it and lib is
// ES2017 without DOM, so declare the part the scripts use.
declare const console: {
  log(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
};
