import { afterAll, describe, expect, it } from "vitest";
import { closeTestPool, compileExample, runBinding } from "./helpers";

const lisp = compileExample("lisp");
const run = (program: string, extra: Record<string, unknown> = {}) =>
  runBinding(lisp, "run", { program, ...extra });
afterAll(closeTestPool);

describe("[TOOLSETS] lisp", () => {
  it("is a single execute binding with a 5 s timeout declared in code", () => {
    expect(lisp.bindings.map((b) => [b.name, b.category])).toEqual([["run", "execute"]]);
    expect(lisp.declarations.timeoutMs).toBe(5000);
  });

  it("runs definitions, higher-order functions and named-let loops", async () => {
    const result = await run(`
      (define (fib n) (let loop ((a 0) (b 1) (i 0)) (if (= i n) a (loop b (+ a b) (+ i 1)))))
      (map fib (range 10))`);
    expect(result).toMatchObject({
      ok: true,
      value: { value: [0, 1, 1, 2, 3, 5, 8, 13, 21, 34], printed: "(0 1 1 2 3 5 8 13 21 34)" },
    });
  });

  it("collects printed output and supports strings, cond, closures and set!", async () => {
    const result = await run(`
      (define (make-counter) (let ((n 0)) (lambda () (set! n (+ n 1)) n)))
      (define c (make-counter))
      (c) (c)
      (define (classify x) (cond ((< x 0) 'negative) ((= x 0) 'zero) (else 'positive)))
      (for-each (lambda (x) (print x (classify x))) '(-2 0 5))
      (display (string-append "count=" (number->string (c))))
      (sort '(3 1 2))`);
    expect(result).toMatchObject({
      ok: true,
      value: { value: [1, 2, 3], output: ["-2 negative", "0 zero", "5 positive", "count=3"] },
    });
  });

  it("runs deep tail recursion in constant stack", async () => {
    const result = await run(
      "(define (count n acc) (if (= n 0) acc (count (- n 1) (+ acc 1)))) (count 20000 0)",
    );
    expect(result).toMatchObject({ ok: true, value: { value: 20000 } });
  });

  it("stops endless loops with the step budget and deep recursion with a clear error", async () => {
    expect(await run("(define (f) (f)) (f)", { max_steps: 10000 })).toMatchObject({
      ok: false,
      error: "lisp: step budget of 10000 exhausted (an endless loop?)",
    });
    expect(await run("(define (f n) (+ 1 (f n))) (f 1)")).toMatchObject({
      ok: false,
      error: "lisp: recursion deeper than 200 (use tail calls or an accumulator)",
    });
  });

  it("reports reader and runtime errors with the output so far", async () => {
    expect(await run("(+ 1 2")).toMatchObject({
      ok: false,
      error: "lisp: unexpected end of program: a ( is not closed",
    });
    expect(await run('(display "hi") (undefined-thing)')).toMatchObject({
      ok: false,
      error: 'lisp: unbound variable: undefined-thing (output so far: "hi")',
    });
  });
});
