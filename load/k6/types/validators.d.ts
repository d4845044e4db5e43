// The module the build generates from schemas/*.schema.json with ajv's standalone
// code (see build.ts). It exists only inside the bundles, so its shape is declared here.
declare module 'chatgate:validators' {
  export interface AjvError {
    instancePath: string;
    schemaPath: string;
    keyword: string;
    params: Record<string, unknown>;
    message?: string;
    /** Present because the ajv is created with verbose: true; carries our x-clause annotations. */
    parentSchema?: Record<string, unknown>;
    data?: unknown;
  }
  export interface StandaloneValidator {
    (data: unknown): boolean;
    errors?: AjvError[] | null;
  }
  export const chatCompletion: StandaloneValidator;
  export const chatCompletionChunk: StandaloneValidator;
  export const errorBody: StandaloneValidator;
  export const modelList: StandaloneValidator;
}
