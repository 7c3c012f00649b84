/**
 * What the listener's request (packages/node/src/node-request.ts) and the upstream fetch's reply
 * (packages/node/src/upstream-response.ts) share: a class that stands in for a web `Request` or
 * `Response`, answers the members the hot path uses itself, and makes the real object (once) for
 * everything else.
 */

/** The method a stand-in makes (once) the real object it stands for with. */
export const kMaterialise = Symbol('tollgate.materialise');

/** An instance of a stand-in class. */
export interface StandIn<Real extends object> {
  [kMaterialise](): Real;
}

/** A web class (`Request`, `Response`) as a value: its prototype is what matters here. */
type WebClass = abstract new (...args: never[]) => object;

/**
 * Makes `standIn`'s instances pass for `real`'s: every member of `real`'s prototype chain that
 * `standIn` does not define itself (getters and methods), and every symbol-keyed slot an instance of
 * `real` carries (`sample`: where undici 6 keeps its state, which `new Request(input)`, `fetch(input)`
 * and undici's own methods read), is answered by the real object the instance materialises; and
 * `standIn`'s prototype is chained to `real.prototype`, so `instanceof` holds. Returns `follow`: call
 * it before handing out an instance, so that a global replaced later by a subclass of `real` (as
 * `serve()` of @hono/node-server replaces `Request` and `Response`) is followed too.
 *
 * @example
 * const follow = standInFor(NodeRequest, Request, new Request('http://localhost/'), () => Request);
 */
export function standInFor(standIn: { prototype: object }, real: WebClass, sample: object, global: () => WebClass): () => void {
  const own = standIn.prototype;
  for (let prototype: object | null = real.prototype; prototype !== null && prototype !== Object.prototype; prototype = Object.getPrototypeOf(prototype)) {
    for (const name of Object.getOwnPropertyNames(prototype)) {
      if (name === 'constructor' || Object.hasOwn(own, name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      const getter = descriptor?.get;
      const method: unknown = descriptor?.value;
      if (getter !== undefined) {
        Object.defineProperty(own, name, {
          configurable: true,
          get(this: StandIn<object>): unknown {
            return Reflect.apply(getter, this[kMaterialise](), []);
          },
        });
      } else if (typeof method === 'function') {
        Object.defineProperty(own, name, {
          configurable: true,
          writable: true,
          value(this: StandIn<object>, ...args: unknown[]): unknown {
            return Reflect.apply(method, this[kMaterialise](), args);
          },
        });
      }
    }
  }
  for (const slot of Object.getOwnPropertySymbols(sample)) {
    Object.defineProperty(own, slot, {
      configurable: true,
      get(this: StandIn<object>): unknown {
        return Reflect.get(this[kMaterialise](), slot);
      },
    });
  }
  Object.setPrototypeOf(own, real.prototype);
  let extended = real;
  return () => {
    const current = global();
    if (current !== extended && current.prototype instanceof real) {
      Object.setPrototypeOf(own, current.prototype);
      extended = current;
    }
  };
}
