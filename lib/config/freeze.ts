/**
 * Freezing a built value all the way down, so that settings built once stay as built.
 *
 * @module
 */

/** A value whose every property, element and nested object is read-only. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown ? T
  : T extends readonly (infer E)[] ? readonly DeepReadonly<E>[]
  : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
  : T;

/**
 * Freezes `value` and every object and array it reaches (`Object.freeze`, depth first); a
 * value met twice is frozen once. In strict code a later write to any part throws a TypeError.
 *
 * @example
 * ```ts
 * import { deepFreeze } from "./freeze.ts";
 * const settings = deepFreeze({ limits: { said: 16384 }, dirs: ["/a"] });
 * console.assert(Object.isFrozen(settings.limits) && Object.isFrozen(settings.dirs));
 * ```
 * @returns `value` itself, typed read-only
 */
export function deepFreeze<T>(value: T): DeepReadonly<T> {
  const seen = new Set<object>();
  const visit = (v: unknown) => {
    if (typeof v !== "object" || v === null || seen.has(v)) return;
    seen.add(v);
    for (const key of Reflect.ownKeys(v)) visit((v as Record<PropertyKey, unknown>)[key]);
    Object.freeze(v);
  };
  visit(value);
  return value as DeepReadonly<T>;
}
