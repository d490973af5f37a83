/**
 * Exact arithmetic for agents: evaluates expressions with a small parser (never `eval`) and
 * summarizes lists of numbers.
 */

type Token =
  | { kind: "number"; value: number; at: number }
  | { kind: "name"; value: string; at: number }
  | { kind: "op"; value: string; at: number }
  | { kind: "end"; at: number };

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

const FUNCTIONS: Record<string, { min: number; max: number; fn: (...xs: number[]) => number }> = {
  sqrt: { min: 1, max: 1, fn: (x) => checkDomain(x >= 0, "sqrt of a negative number", Math.sqrt(x)) },
  cbrt: { min: 1, max: 1, fn: Math.cbrt },
  abs: { min: 1, max: 1, fn: Math.abs },
  floor: { min: 1, max: 1, fn: Math.floor },
  ceil: { min: 1, max: 1, fn: Math.ceil },
  trunc: { min: 1, max: 1, fn: Math.trunc },
  round: { min: 1, max: 2, fn: (x, digits = 0) => roundTo(x, digits) },
  sign: { min: 1, max: 1, fn: Math.sign },
  exp: { min: 1, max: 1, fn: Math.exp },
  ln: { min: 1, max: 1, fn: (x) => checkDomain(x > 0, "ln of a number <= 0", Math.log(x)) },
  log10: { min: 1, max: 1, fn: (x) => checkDomain(x > 0, "log10 of a number <= 0", Math.log10(x)) },
  log2: { min: 1, max: 1, fn: (x) => checkDomain(x > 0, "log2 of a number <= 0", Math.log2(x)) },
  log: {
    min: 1,
    max: 2,
    fn: (x, base = 10) =>
      checkDomain(x > 0 && base > 0 && base !== 1, "log of a number <= 0", Math.log(x) / Math.log(base)),
  },
  sin: { min: 1, max: 1, fn: Math.sin },
  cos: { min: 1, max: 1, fn: Math.cos },
  tan: { min: 1, max: 1, fn: Math.tan },
  asin: { min: 1, max: 1, fn: Math.asin },
  acos: { min: 1, max: 1, fn: Math.acos },
  atan: { min: 1, max: 1, fn: Math.atan },
  atan2: { min: 2, max: 2, fn: Math.atan2 },
  sinh: { min: 1, max: 1, fn: Math.sinh },
  cosh: { min: 1, max: 1, fn: Math.cosh },
  tanh: { min: 1, max: 1, fn: Math.tanh },
  hypot: { min: 1, max: 64, fn: Math.hypot },
  min: { min: 1, max: 64, fn: Math.min },
  max: { min: 1, max: 64, fn: Math.max },
  deg: { min: 1, max: 1, fn: (x) => (x * 180) / Math.PI },
  rad: { min: 1, max: 1, fn: (x) => (x * Math.PI) / 180 },
  gcd: { min: 2, max: 2, fn: (a, b) => gcd(a, b) },
  lcm: { min: 2, max: 2, fn: (a, b) => (a === 0 || b === 0 ? 0 : Math.abs(a * b) / gcd(a, b)) },
};

function checkDomain(ok: boolean, message: string, value: number): number {
  if (!ok) throw new Error(message);
  return value;
}

function roundTo(x: number, digits: number): number {
  if (!Number.isInteger(digits) || digits < 0 || digits > 15) throw new Error("round: digits must be 0..15");
  const f = 10 ** digits;
  return Math.round((x + Number.EPSILON * Math.sign(x)) * f) / f;
}

function gcd(a: number, b: number): number {
  if (!Number.isInteger(a) || !Number.isInteger(b)) throw new Error("gcd/lcm take whole numbers");
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y) [x, y] = [y, x % y];
  return x;
}

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new Error("factorial (!) takes a whole number >= 0");
  if (n > 170) throw new Error("factorial (!) overflows above 170");
  let out = 1;
  for (let i = 2; i <= n; i++) out *= i;
  return out;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (/[0-9.]/.test(ch)) {
      const m = /^(\d+(_\d+)*(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
      if (!m) throw new Error(`bad number at position ${i + 1}`);
      tokens.push({ kind: "number", value: Number(m[0].replace(/_/g, "")), at: i });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i)) as RegExpExecArray;
      tokens.push({ kind: "name", value: m[0], at: i });
      i += m[0].length;
    } else if (text.startsWith("**", i)) {
      tokens.push({ kind: "op", value: "^", at: i });
      i += 2;
    } else if ("+-*/%^(),!×÷−".includes(ch)) {
      const value = ch === "×" ? "*" : ch === "÷" ? "/" : ch === "−" ? "-" : ch;
      tokens.push({ kind: "op", value, at: i });
      i++;
    } else {
      throw new Error(`unexpected character "${ch}" at position ${i + 1}`);
    }
  }
  tokens.push({ kind: "end", at: text.length });
  return tokens;
}

/** Recursive descent: sum > product > unary > power > postfix > primary. */
function parseAndEvaluate(text: string, variables: Record<string, number>): number {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = (): Token => tokens[pos] as Token;
  const isOp = (value: string): boolean => {
    const t = peek();
    return t.kind === "op" && t.value === value;
  };
  const expect = (value: string): void => {
    if (!isOp(value)) throw new Error(`expected "${value}" at position ${peek().at + 1}`);
    pos++;
  };
  const tokenText = (t: Token): string => (t.kind === "end" ? "end of expression" : `"${t.value}"`);

  function sum(): number {
    let value = product();
    while (isOp("+") || isOp("-")) {
      const op = (tokens[pos++] as { value: string }).value;
      const right = product();
      value = op === "+" ? value + right : value - right;
    }
    return value;
  }
  function product(): number {
    let value = unary();
    while (isOp("*") || isOp("/") || isOp("%")) {
      const op = (tokens[pos++] as { value: string }).value;
      const right = unary();
      if ((op === "/" || op === "%") && right === 0) throw new Error("division by zero");
      value = op === "*" ? value * right : op === "/" ? value / right : value % right;
    }
    return value;
  }
  function unary(): number {
    if (isOp("-")) {
      pos++;
      return -unary();
    }
    if (isOp("+")) {
      pos++;
      return unary();
    }
    return power();
  }
  function power(): number {
    const base = postfix();
    if (isOp("^")) {
      pos++;
      return base ** unary();
    }
    return base;
  }
  function postfix(): number {
    let value = primary();
    while (isOp("!")) {
      pos++;
      value = factorial(value);
    }
    return value;
  }
  function primary(): number {
    const t = peek();
    if (t.kind === "number") {
      pos++;
      return t.value;
    }
    if (t.kind === "op" && t.value === "(") {
      pos++;
      const value = sum();
      expect(")");
      return value;
    }
    if (t.kind === "name") {
      pos++;
      if (isOp("(")) {
        const fn = FUNCTIONS[t.value.toLowerCase()];
        if (!fn)
          throw new Error(`unknown function "${t.value}" (known: ${Object.keys(FUNCTIONS).join(", ")})`);
        pos++;
        const args: number[] = [];
        if (!isOp(")")) {
          args.push(sum());
          while (isOp(",")) {
            pos++;
            args.push(sum());
          }
        }
        expect(")");
        if (args.length < fn.min || args.length > fn.max) {
          const want = fn.min === fn.max ? `${fn.min}` : `${fn.min} to ${fn.max}`;
          throw new Error(`${t.value} takes ${want} argument(s), got ${args.length}`);
        }
        return fn.fn(...args);
      }
      if (Object.hasOwn(variables, t.value)) return variables[t.value] as number;
      const constant = CONSTANTS[t.value.toLowerCase()];
      if (constant !== undefined) return constant;
      throw new Error(`unknown name "${t.value}" at position ${t.at + 1}; pass it in variables`);
    }
    throw new Error(`unexpected ${tokenText(t)} at position ${t.at + 1}`);
  }

  const value = sum();
  if (peek().kind !== "end") throw new Error(`unexpected ${tokenText(peek())} at position ${peek().at + 1}`);
  return value;
}

/**
 * Evaluate an arithmetic expression exactly as written, without guessing. Supports + - * / %,
 * ^ (or **) for powers, ! for factorial, parentheses, the constants pi, e and tau, and functions
 * such as sqrt, abs, round(x, digits), floor, ceil, ln, log10, log(x, base), exp, sin, cos, tan
 * (radians), deg, rad, hypot, min, max, gcd and lcm. Returns the value, or an error naming the
 * position of the mistake.
 * @tool read
 * @param expression The expression, e.g. "2 * (3 + 4)^2 / sqrt(16)"
 * @param variables Values for names used in the expression, e.g. { "x": 3 }
 * @param precision Round the result to this many decimal places (0..15)
 */
export function evaluate(
  expression: string,
  variables: Record<string, number> = {},
  precision?: number,
): { expression: string; value: number } {
  if (expression.length > 2000) throw new Error("expression is longer than 2000 characters");
  for (const [name, value] of Object.entries(variables)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new Error(`variable name "${name}" is not a plain name`);
    if (typeof value !== "number" || !Number.isFinite(value))
      throw new Error(`variable "${name}" must be a finite number`);
  }
  let value = parseAndEvaluate(expression, variables);
  if (Number.isNaN(value)) throw new Error("the result is not a number (for example asin(2))");
  if (!Number.isFinite(value)) throw new Error("the result overflows to infinity");
  if (precision !== undefined) value = roundTo(value, precision);
  return { expression, value: Object.is(value, -0) ? 0 : value };
}

export interface Statistics {
  count: number;
  sum: number;
  mean: number;
  median: number;
  min: number;
  max: number;
  /** Population standard deviation. */
  stddev: number;
  /** Sample standard deviation (n - 1); null for a single value. */
  sample_stddev: number | null;
}

/**
 * Summary statistics of a list of numbers: count, sum, mean, median, min, max and standard
 * deviation (population and sample). Use it instead of adding up long lists by hand.
 * @tool read
 * @param values The numbers, at least one
 */
export function statistics(values: number[]): Statistics {
  if (values.length === 0) throw new Error("values must hold at least one number");
  if (values.some((v) => typeof v !== "number" || !Number.isFinite(v)))
    throw new Error("values must be finite numbers");
  const sorted = [...values].sort((a, b) => a - b);
  const count = sorted.length;
  // Kahan summation keeps long lists of decimals accurate.
  let sum = 0;
  let carry = 0;
  for (const v of sorted) {
    const y = v - carry;
    const t = sum + y;
    carry = t - sum - y;
    sum = t;
  }
  const mean = sum / count;
  const mid = Math.floor(count / 2);
  const median =
    count % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const squares = sorted.reduce((acc, v) => acc + (v - mean) ** 2, 0);
  return {
    count,
    sum,
    mean,
    median,
    min: sorted[0] as number,
    max: sorted[count - 1] as number,
    stddev: Math.sqrt(squares / count),
    sample_stddev: count > 1 ? Math.sqrt(squares / (count - 1)) : null,
  };
}
