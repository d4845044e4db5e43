// A bad setting: one line naming the variable and the fix (exit 2 before any request).
// Its own module so that the modules loadConfig calls (selection.ts) can throw it too.
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}
