/**
 * Runs small programs written in a Scheme-like Lisp, inside the toolset with a step budget: a
 * place for an agent to execute an algorithm it wrote (loops, recursion, list processing) and get
 * an exact answer. The interpreter reaches nothing outside itself.
 * @timeout 5000
 */

type Value = number | string | boolean | null | LispSymbol | Pair | Procedure | Nil;

interface LispSymbol {
  readonly sym: string;
}
interface Pair {
  car: Value;
  cdr: Value;
}
interface Nil {
  readonly nil: true;
}
interface Procedure {
  readonly name: string;
  readonly params?: string[];
  readonly rest?: string;
  readonly code?: Code;
  readonly env?: Env;
  readonly builtin?: (args: Value[], state: State) => Value;
}

interface Env {
  vars: Map<string, Value>;
  parent?: Env;
}

interface State {
  steps: number;
  maxSteps: number;
  depth: number;
  output: string[];
  outputChars: number;
}

const NIL: Nil = { nil: true };
const symbols = new Map<string, LispSymbol>();
const MAX_DEPTH = 200;
const MAX_OUTPUT_CHARS = 20_000;

function sym(name: string): LispSymbol {
  let s = symbols.get(name);
  if (!s) {
    s = { sym: name };
    symbols.set(name, s);
  }
  return s;
}

const isSymbol = (v: Value): v is LispSymbol => typeof v === "object" && v !== null && "sym" in v;
const isPair = (v: Value): v is Pair => typeof v === "object" && v !== null && "car" in v;
const isNil = (v: Value): v is Nil => v === NIL;
const isProcedure = (v: Value): v is Procedure => typeof v === "object" && v !== null && "name" in v;

class LispError extends Error {}

function fail(message: string): never {
  throw new LispError(message);
}

// ---- reader ----

function tokenize(source: string): string[] {
  const tokens: string[] = [];
  const re = /\s+|;[^\n]*|("(?:[^"\\]|\\.)*")|([()'])|([^\s()';"]+)|(")/gy;
  let m: RegExpExecArray | null = re.exec(source);
  while (m !== null) {
    if (m[4]) fail("unterminated string");
    const token = m[1] ?? m[2] ?? m[3];
    if (token !== undefined) tokens.push(token);
    m = re.lastIndex < source.length ? re.exec(source) : null;
  }
  return tokens;
}

function list(items: Value[], tail: Value = NIL): Value {
  let out = tail;
  for (let i = items.length - 1; i >= 0; i--) out = { car: items[i] as Value, cdr: out };
  return out;
}

function toArray(v: Value, what = "a list"): Value[] {
  const out: Value[] = [];
  let cur = v;
  while (isPair(cur)) {
    out.push(cur.car);
    cur = cur.cdr;
  }
  if (!isNil(cur)) fail(`expected ${what}`);
  return out;
}

function read(tokens: string[]): Value[] {
  let pos = 0;
  const readOne = (): Value => {
    const t = tokens[pos++];
    if (t === undefined) fail("unexpected end of program: a ( is not closed");
    if (t === "'") return list([sym("quote"), readOne()]);
    if (t === "(") {
      const items: Value[] = [];
      let tail: Value = NIL;
      while (tokens[pos] !== ")") {
        if (tokens[pos] === undefined) fail("unexpected end of program: a ( is not closed");
        if (tokens[pos] === ".") {
          pos++;
          tail = readOne();
          if (tokens[pos] !== ")") fail("expected ) after the dotted tail");
          break;
        }
        items.push(readOne());
      }
      pos++;
      return list(items, tail);
    }
    if (t === ")") fail("unexpected )");
    if (t.startsWith('"')) return JSON.parse(t.replace(/\\(?!["\\/bfnrtu])/g, "\\\\")) as string;
    if (t === "#t" || t === "true") return true;
    if (t === "#f" || t === "false") return false;
    if (t === "nil") return NIL;
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return Number(t);
    return sym(t);
  };
  const program: Value[] = [];
  while (pos < tokens.length) program.push(readOne());
  return program;
}

// ---- printer ----

function show(v: Value, display = false): string {
  if (typeof v === "number")
    return Number.isInteger(v) || !Number.isFinite(v)
      ? String(v)
      : String(Number.parseFloat(v.toPrecision(15)));
  if (typeof v === "string") return display ? v : JSON.stringify(v);
  if (v === true) return "#t";
  if (v === false) return "#f";
  if (v === null) return "null";
  if (isNil(v)) return "()";
  if (isSymbol(v)) return v.sym;
  if (isProcedure(v)) return `#<procedure ${v.name}>`;
  const parts: string[] = [];
  let cur: Value = v;
  while (isPair(cur)) {
    parts.push(show(cur.car, display));
    cur = cur.cdr;
    if (parts.length > 10_000) {
      parts.push("...");
      break;
    }
  }
  return `(${parts.join(" ")}${isNil(cur) || isPair(cur) ? "" : ` . ${show(cur, display)}`})`;
}

/** Converts a result to plain JSON for the caller: lists become arrays, symbols strings. */
function toJson(v: Value): unknown {
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean" || v === null) return v;
  if (isNil(v)) return [];
  if (isSymbol(v)) return v.sym;
  if (isProcedure(v)) return show(v);
  const items: unknown[] = [];
  let cur: Value = v;
  while (isPair(cur)) {
    items.push(toJson(cur.car));
    cur = cur.cdr;
  }
  return isNil(cur) ? items : show(v);
}

// ---- compiler: each expression becomes a closure once; calls in tail position return TailCall ----

type Code = (env: Env, state: State) => Value | TailCall;

class TailCall {
  constructor(
    readonly proc: Procedure,
    readonly args: Value[],
  ) {}
}

function lookup(env: Env, name: string): Value {
  for (let e: Env | undefined = env; e; e = e.parent) {
    const v = e.vars.get(name);
    if (v !== undefined || e.vars.has(name)) return v as Value;
  }
  return fail(`unbound variable: ${name}`);
}

function assign(env: Env, name: string, value: Value): void {
  for (let e: Env | undefined = env; e; e = e.parent) {
    if (e.vars.has(name)) {
      e.vars.set(name, value);
      return;
    }
  }
  fail(`set! of an undefined variable: ${name}`);
}

const truthy = (v: Value) => v !== false;

function bind(proc: Procedure, args: Value[]): Env {
  const params = proc.params ?? [];
  if (args.length < params.length || (proc.rest === undefined && args.length > params.length)) {
    fail(
      `${proc.name} takes ${proc.rest === undefined ? params.length : `at least ${params.length}`} argument(s), got ${args.length}`,
    );
  }
  const vars = new Map<string, Value>();
  for (let i = 0; i < params.length; i++) vars.set(params[i] as string, args[i] as Value);
  if (proc.rest !== undefined) vars.set(proc.rest, list(args.slice(params.length)));
  return proc.env ? { vars, parent: proc.env } : { vars };
}

/** Runs code to a value: follows tail calls in a loop, so tail recursion needs no stack. */
function force(code: Code, env: Env, state: State): Value {
  if (++state.depth > MAX_DEPTH)
    fail(`recursion deeper than ${MAX_DEPTH} (use tail calls or an accumulator)`);
  try {
    let r = code(env, state);
    while (r instanceof TailCall) r = enter(r.proc, r.args, state);
    return r;
  } finally {
    state.depth--;
  }
}

function enter(proc: Procedure, args: Value[], state: State): Value | TailCall {
  if (++state.steps > state.maxSteps) fail(`step budget of ${state.maxSteps} exhausted (an endless loop?)`);
  if (proc.builtin) return proc.builtin(args, state);
  return (proc.code as Code)(bind(proc, args), state);
}

function apply(proc: Value, args: Value[], state: State): Value {
  if (!isProcedure(proc)) fail(`${show(proc)} is not a procedure`);
  return force(() => enter(proc, args, state), { vars: new Map() }, state);
}

function compileBody(body: Value[], where: string): Code {
  if (body.length === 0) fail(`${where} has an empty body`);
  const codes = body.map(compile);
  if (codes.length === 1) return codes[0] as Code;
  const last = codes[codes.length - 1] as Code;
  const init = codes.slice(0, -1);
  return (env, state) => {
    for (const c of init) force(c, env, state);
    return last(env, state);
  };
}

function compileLambda(params: Value, body: Value[], name: string): (env: Env) => Procedure {
  const names: string[] = [];
  let cur = params;
  while (isPair(cur)) {
    if (!isSymbol(cur.car)) fail(`parameter names must be symbols in ${name}`);
    names.push(cur.car.sym);
    cur = cur.cdr;
  }
  const rest = isSymbol(cur) ? cur.sym : undefined;
  if (!rest && !isNil(cur)) fail(`bad parameter list in ${name}`);
  const code = compileBody(body, name);
  return (env) =>
    rest === undefined ? { name, params: names, code, env } : { name, params: names, rest, code, env };
}

function compile(expr: Value): Code {
  if (isSymbol(expr)) {
    const name = expr.sym;
    return (env) => lookup(env, name);
  }
  if (!isPair(expr)) return () => expr;
  const head = expr.car;
  const rest = toArray(expr.cdr, "a proper list");
  if (isSymbol(head)) {
    const special = compileSpecial(head.sym, rest);
    if (special) return special;
  }
  const fn = compile(head);
  const args = rest.map(compile);
  return (env, state) => {
    const proc = force(fn, env, state);
    const values: Value[] = [];
    for (const a of args) values.push(force(a, env, state));
    if (!isProcedure(proc)) fail(`${show(proc)} is not a procedure`);
    return new TailCall(proc, values);
  };
}

function compileSpecial(form: string, rest: Value[]): Code | undefined {
  switch (form) {
    case "quote": {
      const value = rest[0] as Value;
      return () => value;
    }
    case "if": {
      const test = compile(rest[0] as Value);
      const then = compile(rest[1] as Value);
      const otherwise = rest.length > 2 ? compile(rest[2] as Value) : () => null;
      return (env, state) => (truthy(force(test, env, state)) ? then(env, state) : otherwise(env, state));
    }
    case "define": {
      const target = rest[0] as Value;
      if (isPair(target)) {
        if (!isSymbol(target.car)) fail("define: the name must be a symbol");
        const name = target.car;
        const make = compileLambda(target.cdr, rest.slice(1), name.sym);
        return (env) => {
          env.vars.set(name.sym, make(env));
          return name;
        };
      }
      if (!isSymbol(target)) fail("define: the name must be a symbol");
      const value = compile(rest[1] as Value);
      return (env, state) => {
        env.vars.set(target.sym, force(value, env, state));
        return target;
      };
    }
    case "set!": {
      const target = rest[0] as Value;
      if (!isSymbol(target)) fail("set!: the name must be a symbol");
      const value = compile(rest[1] as Value);
      return (env, state) => {
        assign(env, target.sym, force(value, env, state));
        return null;
      };
    }
    case "lambda": {
      const make = compileLambda(rest[0] as Value, rest.slice(1), "lambda");
      return (env) => make(env);
    }
    case "begin":
      return rest.length === 0 ? () => null : compileBody(rest, "begin");
    case "let":
    case "let*":
    case "letrec": {
      if (isSymbol(rest[0] as Value)) {
        // Named let: (let loop ((i 0)) body) binds `loop` to a procedure and calls it.
        const name = (rest[0] as LispSymbol).sym;
        const bindings = toArray(rest[1] as Value).map((b) => toArray(b));
        const make = compileLambda(list(bindings.map((b) => b[0] as Value)), rest.slice(2), name);
        const inits = bindings.map((b) => compile(b[1] as Value));
        return (env, state) => {
          const loopEnv: Env = { vars: new Map(), parent: env };
          const proc = make(loopEnv);
          loopEnv.vars.set(name, proc);
          return new TailCall(
            proc,
            inits.map((c) => force(c, env, state)),
          );
        };
      }
      const bindings = toArray(rest[0] as Value).map((b) => {
        const [name, valueExpr] = toArray(b);
        if (!isSymbol(name as Value)) fail(`${form}: binding names must be symbols`);
        return { name: (name as LispSymbol).sym, code: compile(valueExpr as Value) };
      });
      const body = compileBody(rest.slice(1), form);
      return (env, state) => {
        const inner: Env = { vars: new Map(), parent: env };
        for (const b of bindings) inner.vars.set(b.name, force(b.code, form === "let" ? env : inner, state));
        return body(inner, state);
      };
    }
    case "cond": {
      const clauses = rest.map((clause) => {
        const [test, ...body] = toArray(clause);
        const isElse = isSymbol(test as Value) && (test as LispSymbol).sym === "else";
        return {
          test: isElse ? () => true : compile(test as Value),
          body: body.length ? compileBody(body, "cond") : undefined,
        };
      });
      return (env, state) => {
        for (const clause of clauses) {
          const t = force(clause.test, env, state);
          if (truthy(t)) return clause.body ? clause.body(env, state) : t;
        }
        return null;
      };
    }
    case "and":
    case "or": {
      const codes = rest.map(compile);
      const isAnd = form === "and";
      return (env, state) => {
        let value: Value = isAnd;
        for (const c of codes) {
          value = force(c, env, state);
          if (truthy(value) !== isAnd) return value;
        }
        return value;
      };
    }
  }
  return undefined;
}

// ---- builtins ----

function num(v: Value, who: string): number {
  if (typeof v !== "number") fail(`${who} expects numbers, got ${show(v)}`);
  return v;
}

function str(v: Value, who: string): string {
  if (typeof v !== "string") fail(`${who} expects a string, got ${show(v)}`);
  return v;
}

function equal(a: Value, b: Value): boolean {
  if (isPair(a) && isPair(b)) return equal(a.car, b.car) && equal(a.cdr, b.cdr);
  return a === b;
}

function globalEnv(): Env {
  const vars = new Map<string, Value>();
  const def = (name: string, fn: (args: Value[], state: State) => Value) =>
    vars.set(name, { name, builtin: fn });
  const numeric = (name: string, fn: (xs: number[]) => number) =>
    def(name, (a) => fn(a.map((x) => num(x, name))));
  const compare = (name: string, ok: (x: number, y: number) => boolean) =>
    def(name, (a) => {
      const xs = a.map((x) => num(x, name));
      for (let i = 1; i < xs.length; i++) if (!ok(xs[i - 1] as number, xs[i] as number)) return false;
      return true;
    });
  numeric("+", (xs) => xs.reduce((s, x) => s + x, 0));
  numeric("*", (xs) => xs.reduce((s, x) => s * x, 1));
  numeric("-", (xs) =>
    xs.length === 1 ? -(xs[0] as number) : xs.slice(1).reduce((s, x) => s - x, xs[0] ?? 0),
  );
  numeric("/", (xs) => {
    if (xs.slice(xs.length === 1 ? 0 : 1).some((x) => x === 0)) fail("division by zero");
    return xs.length === 1 ? 1 / (xs[0] as number) : xs.slice(1).reduce((s, x) => s / x, xs[0] ?? 1);
  });
  numeric("quotient", ([a = 0, b = 0]) => (b === 0 ? fail("division by zero") : Math.trunc(a / b)));
  numeric("remainder", ([a = 0, b = 0]) => (b === 0 ? fail("division by zero") : a % b));
  numeric("modulo", ([a = 0, b = 0]) => (b === 0 ? fail("division by zero") : ((a % b) + b) % b));
  numeric("abs", ([a = 0]) => Math.abs(a));
  numeric("min", (xs) => Math.min(...xs));
  numeric("max", (xs) => Math.max(...xs));
  numeric("sqrt", ([a = 0]) => Math.sqrt(a));
  numeric("expt", ([a = 0, b = 0]) => a ** b);
  numeric("exp", ([a = 0]) => Math.exp(a));
  numeric("log", ([a = 0]) => Math.log(a));
  numeric("floor", ([a = 0]) => Math.floor(a));
  numeric("ceiling", ([a = 0]) => Math.ceil(a));
  numeric("round", ([a = 0]) => Math.round(a));
  numeric("truncate", ([a = 0]) => Math.trunc(a));
  compare("=", (x, y) => x === y);
  compare("<", (x, y) => x < y);
  compare(">", (x, y) => x > y);
  compare("<=", (x, y) => x <= y);
  compare(">=", (x, y) => x >= y);
  def("not", ([a = false]) => a === false);
  def("eq?", ([a = null, b = null]) => a === b);
  def("equal?", ([a = null, b = null]) => equal(a, b));
  def("cons", ([a = null, b = NIL]) => ({ car: a, cdr: b }));
  def("car", ([p = NIL]) => (isPair(p) ? p.car : fail(`car of ${show(p)}`)));
  def("cdr", ([p = NIL]) => (isPair(p) ? p.cdr : fail(`cdr of ${show(p)}`)));
  def("list", (a) => list(a));
  def("length", ([l = NIL]) => toArray(l).length);
  def("append", (a) => {
    if (a.length === 0) return NIL;
    const last = a[a.length - 1] as Value;
    return list(
      a.slice(0, -1).flatMap((l) => toArray(l)),
      last,
    );
  });
  def("reverse", ([l = NIL]) => list(toArray(l).reverse()));
  def(
    "list-ref",
    ([l = NIL, i = 0]) => toArray(l)[num(i, "list-ref")] ?? fail("list-ref: index out of range"),
  );
  def("range", ([a = 0, b, step = 1]) => {
    const [from, to] = b === undefined ? [0, num(a, "range")] : [num(a, "range"), num(b, "range")];
    const s = num(step, "range");
    if (s === 0) fail("range: step must not be 0");
    const out: Value[] = [];
    for (let x = from; s > 0 ? x < to : x > to; x += s) {
      out.push(x);
      if (out.length > 1_000_000) fail("range: more than 1,000,000 items");
    }
    return list(out);
  });
  def("null?", ([a = null]) => isNil(a));
  def("pair?", ([a = null]) => isPair(a));
  def("list?", ([a = null]) => isNil(a) || isPair(a));
  def("number?", ([a = null]) => typeof a === "number");
  def("string?", ([a = null]) => typeof a === "string");
  def("symbol?", ([a = null]) => isSymbol(a));
  def("procedure?", ([a = null]) => isProcedure(a));
  def("zero?", ([a = 0]) => num(a, "zero?") === 0);
  def("even?", ([a = 0]) => num(a, "even?") % 2 === 0);
  def("odd?", ([a = 0]) => Math.abs(num(a, "odd?") % 2) === 1);
  def("map", ([f = null, ...ls], state) => {
    const arrays = ls.map((l) => toArray(l));
    const n = Math.min(...arrays.map((a) => a.length));
    return list(
      Array.from({ length: n }, (_, i) =>
        apply(
          f,
          arrays.map((a) => a[i] as Value),
          state,
        ),
      ),
    );
  });
  def("for-each", ([f = null, l = NIL], state) => {
    for (const x of toArray(l)) apply(f, [x], state);
    return null;
  });
  def("filter", ([f = null, l = NIL], state) => list(toArray(l).filter((x) => truthy(apply(f, [x], state)))));
  def("reduce", ([f = null, init = null, l = NIL], state) =>
    toArray(l).reduce((acc, x) => apply(f, [acc, x], state), init),
  );
  def("fold-left", ([f = null, init = null, l = NIL], state) =>
    toArray(l).reduce((acc, x) => apply(f, [acc, x], state), init),
  );
  def("sort", ([l = NIL, f = null], state) =>
    list(
      toArray(l).sort((x, y) =>
        f === null ? num(x, "sort") - num(y, "sort") : truthy(apply(f, [x, y], state)) ? -1 : 1,
      ),
    ),
  );
  def("apply", ([f = null, ...a], state) =>
    apply(f, [...a.slice(0, -1), ...toArray(a[a.length - 1] ?? NIL)], state),
  );
  def("number->string", ([a = 0]) => show(num(a, "number->string")));
  def("string->number", ([a = ""]) => {
    const n = Number(str(a, "string->number"));
    return Number.isNaN(n) ? false : n;
  });
  def("string-append", (a) => a.map((x) => str(x, "string-append")).join(""));
  def("string-length", ([a = ""]) => str(a, "string-length").length);
  def("substring", ([s = "", from = 0, to]) =>
    str(s, "substring").slice(num(from, "substring"), to === undefined ? undefined : num(to, "substring")),
  );
  def("string-upcase", ([s = ""]) => str(s, "string-upcase").toUpperCase());
  def("string-downcase", ([s = ""]) => str(s, "string-downcase").toLowerCase());
  def("string-split", ([s = "", sep = " "]) => list(str(s, "string-split").split(str(sep, "string-split"))));
  def("string-join", ([l = NIL, sep = " "]) =>
    toArray(l)
      .map((x) => str(x, "string-join"))
      .join(str(sep, "string-join")),
  );
  def("symbol->string", ([a = null]) => (isSymbol(a) ? a.sym : fail("symbol->string expects a symbol")));
  def("string->symbol", ([a = ""]) => sym(str(a, "string->symbol")));
  const emit = (text: string, state: State) => {
    state.outputChars += text.length;
    if (state.outputChars > MAX_OUTPUT_CHARS) fail(`output is longer than ${MAX_OUTPUT_CHARS} characters`);
    if (state.output.length === 0) state.output.push("");
    const lines = text.split("\n");
    state.output[state.output.length - 1] += lines[0] as string;
    for (const line of lines.slice(1)) state.output.push(line);
    return null;
  };
  def("display", ([a = null], state) => emit(show(a, true), state));
  def("print", (a, state) => emit(`${a.map((x) => show(x, true)).join(" ")}\n`, state));
  def("newline", (_a, state) => emit("\n", state));
  def("error", (a) => fail(a.map((x) => show(x, true)).join(" ")));
  return { vars };
}

export interface RunResult {
  /** The value of the last expression, as JSON (lists become arrays, symbols strings). */
  value: unknown;
  /** The same value printed as Lisp, e.g. "(1 2 3)". */
  printed: string;
  /** Lines written by display, print and newline. */
  output: string[];
  /** Evaluation steps used (the budget is max_steps). */
  steps: number;
}

/**
 * Run a program in a small Scheme-like Lisp and return the value of its last expression plus
 * anything it printed. Special forms: define, lambda, if, cond, let, let*, letrec, named let,
 * begin, set!, and, or, quote ('x). Builtins include arithmetic, comparisons, list operations
 * (cons car cdr list append reverse map filter reduce sort range length), strings and display /
 * print. Tail calls do not grow the stack; each run has a step budget.
 * @tool execute
 * @param program The program text, e.g. "(define (sq x) (* x x)) (map sq (range 1 6))"
 * @param max_steps Evaluation step budget (1..5000000)
 */
export function run(program: string, max_steps = 1_000_000): RunResult {
  if (program.length > 100_000) throw new Error("program is longer than 100000 characters");
  if (!Number.isInteger(max_steps) || max_steps < 1 || max_steps > 5_000_000)
    throw new Error("max_steps must be 1..5000000");
  const state: State = { steps: 0, maxSteps: max_steps, depth: 0, output: [], outputChars: 0 };
  const env: Env = { vars: new Map(), parent: globalEnv() };
  let value: Value = null;
  try {
    for (const expr of read(tokenize(program))) value = force(compile(expr), env, state);
  } catch (error) {
    if (error instanceof LispError) {
      const printed = state.output.length
        ? ` (output so far: ${JSON.stringify(state.output.join("\n").slice(-500))})`
        : "";
      throw new Error(`lisp: ${error.message}${printed}`);
    }
    if (error instanceof RangeError || (error instanceof Error && /stack|recursion/i.test(error.message))) {
      throw new Error("lisp: recursion too deep (use tail calls or an accumulator)");
    }
    throw error;
  }
  return { value: toJson(value), printed: show(value), output: state.output, steps: state.steps };
}
