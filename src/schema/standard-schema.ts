/**
 * The Standard Schema interfaces (https://standardschema.dev, `@standard-schema/spec` 1.1), copied as the spec asks
 * libraries to do: it is types only, so the harness needs no runtime dependency for it, and an app's declaration files
 * never have to resolve a package the app did not install. zod 3.24+, zod 4, Valibot and ArkType schemas all match.
 * @module
 */

/** A schema of any Standard Schema library: what the harness accepts wherever a schema is given. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

export declare namespace StandardSchemaV1 {
  /** The properties under `~standard`. */
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    /** Validates an unknown value, synchronously or not. */
    readonly validate: (value: unknown, options?: Options | undefined) => Result<Output> | Promise<Result<Output>>;
    readonly types?: Types<Input, Output> | undefined;
    /** Present on libraries that also implement Standard JSON Schema (zod 4.2+ among them). */
    readonly jsonSchema?: JsonSchemaConverter | undefined;
  }
  interface Options {
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
  type Result<Output> = SuccessResult<Output> | FailureResult;
  interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  interface PathSegment {
    readonly key: PropertyKey;
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  /** The Standard JSON Schema converter (`~standard.jsonSchema`). */
  interface JsonSchemaConverter {
    readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    readonly output: (options: { readonly target: string }) => Record<string, unknown>;
  }
  /** The type a schema accepts. */
  type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input'];
  /** The type a schema produces once it validated a value. */
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
}
