// Differential test of ksched's CEL subset against @bufbuild/cel (a CEL
// implementation for ECMAScript that passes the CEL conformance tests).
//
//   node cel_differential.mjs CLI NPM_PREFIX [COUNT] [SEED]
//
// Generates COUNT random, well-typed expressions inside the subset over
// random devices (attributes are dynamically typed, so many of them fail at
// evaluation), evaluates each with the real CEL and with CLI
// (cel_eval_cli), and fails on the first differences, printing them.
// quantity() and semver() are Kubernetes libraries the JS implementation
// lacks: the unit test covers them. Outer attribute maps answer unknown
// domains with {} upstream: the JS device holds an empty map for every
// domain the generator names (and no expression asks `in` or size() of the
// outer map, where the two would then differ).
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import path from "node:path";
import fs from "node:fs";

const [cli, prefix, countArg, seedArg] = process.argv.slice(2);
if (!cli || !prefix) {
  console.error("usage: cel_differential.mjs CLI NPM_PREFIX [COUNT] [SEED]");
  process.exit(2);
}
const COUNT = Number(countArg || 3000);
let seed = Number(seedArg || 20261127) >>> 0;

const pkg = path.join(prefix, "node_modules", "@bufbuild", "cel", "dist", "esm");
if (!fs.existsSync(path.join(pkg, "index.js"))) {
  console.log(`@bufbuild/cel is not installed under ${prefix}: skipped`);
  process.exit(77);
}
const { run } = await import(pathToFileURL(path.join(pkg, "index.js")).href);
const { strings } = await import(pathToFileURL(path.join(pkg, "ext", "index.js")).href);

// ---- a small deterministic PRNG (mulberry32) ----
function rnd() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const chance = (p) => rnd() < p;

// ---- devices ----
const DOMAINS = ["gpu.example.com", "nic.example.org"];
const IDS = ["model", "cores", "mig", "family", "index", "name"];
const WORDS = ["A100", "a100-80gb", "H100", "x", "", "Tesla T4", "é", "abc", "ABC", "a.b", "zz9"];

function randomDevice() {
  const attrs = [];
  for (const d of DOMAINS) {
    for (const id of IDS) {
      if (chance(0.35)) continue;
      const t = pick(["i", "i", "b", "s", "s"]);
      let v;
      if (t === "i") v = pick([0, 1, -1, 7, 108, 9223372036854775807n, -9223372036854775808n, 42]);
      else if (t === "b") v = chance(0.5);
      else v = pick(WORDS);
      attrs.push({ d, id, t, v });
    }
  }
  return { driver: pick(["gpu.example.com", "nic.example.org", ""]), attrs, multi: chance(0.5) };
}

function deviceForJs(dev) {
  // upstream answers a lookup of an unknown domain with an empty map
  const attributes = new Map(DOMAINS.map((d) => [d, new Map()]));
  for (const a of dev.attrs) {
    if (!attributes.has(a.d)) attributes.set(a.d, new Map());
    attributes.get(a.d).set(a.id, a.t === "i" ? BigInt(a.v) : a.v);
  }
  return new Map([
    ["driver", dev.driver],
    ["attributes", attributes],
    ["capacity", new Map()],
    ["allowMultipleAllocations", dev.multi],
  ]);
}

function deviceForCli(dev) {
  const lines = ["R", `D\t${dev.driver}`, `M\t${dev.multi ? 1 : 0}`];
  for (const a of dev.attrs) lines.push(`A\t${a.d}\t${a.id}\t${a.t}\t${String(a.v)}`);
  return lines;
}

// ---- expressions: gen(type, depth) for the static types of the subset ----
const q = (s) => {
  // a CEL string literal: double or single quotes, raw or with escapes
  if (chance(0.1) && !s.includes("'") && !s.includes("\\")) return `r'${s}'`;
  let out = "";
  for (const ch of s) {
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (ch === "é" && chance(0.5)) out += "\\u00e9";
    else if (ch === "a" && chance(0.2)) out += "\\x61";
    else out += ch;
  }
  return `"${out}"`;
};

function attrRef(dev) {
  const known = dev.attrs.length && chance(0.85);
  const a = known ? pick(dev.attrs) : { d: pick(DOMAINS), id: pick(IDS) };
  const d = known ? a.d : pick(dev.attrs.length ? dev.attrs.map((x) => x.d) : DOMAINS);
  const id = chance(0.85) ? a.id : pick(IDS);
  return chance(0.5) ? `device.attributes[${q(d)}][${q(id)}]` : `device.attributes[${q(d)}].${id}`;
}

const SMALL_INTS = ["0", "1", "2", "3", "-1", "7", "10", "100", "9223372036854775807",
  "-9223372036854775808", "4611686018427387904", "0x10"];
const PATTERNS = ["^A1", "00$", "^[a-z]+$", "^[A-Z0-9]+$", "a|b", "^(ab|cd)*$", "\\d+", "^\\w*$",
  "^.$", "x?", "^a.c$", "[^a-z]", "^(?i)abc$", "^a{1,2}b", "\\s", "[[:upper:]]", "^$", "é", "\\.",
  "^[a-c]{2,}$", "t4$", "(?:a|b)+", "\\bT4"];

// random regular expressions inside the supported RE2 subset
const RE_ATOMS = ["a", "b", "A", "1", ".", "\\d", "\\w", "\\s", "\\D", "[a-c]", "[^a]", "[[:alpha:]]",
  "[0-9A-F]", "\\.", "é", "-", " ", "[.]", "\\x41", "[\\d.]"];
// ksched refuses non-ASCII literals under (?i) (RE2 folds them by Unicode)
function asciiUnderFold(p) {
  return p.includes("(?i)") ? p.replace(/é/g, "e") : p;
}

function randomPattern(depth) {
  let out = chance(0.3) ? "^" : "";
  const n = 1 + ri(4);
  for (let i = 0; i < n; i++) {
    let atom;
    if (depth > 0 && chance(0.25)) {
      const alts = [randomPattern(depth - 1)];
      while (chance(0.4)) alts.push(randomPattern(depth - 1));
      atom = `(${chance(0.5) ? "?:" : ""}${alts.join("|")})`;
    } else {
      atom = pick(RE_ATOMS);
    }
    const rep = pick(["", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "+?", "??"]);
    out += atom + rep;
  }
  if (chance(0.3)) out += "$";
  if (chance(0.1)) out = "(?i)" + out;
  return out;
}

function gen(t, depth, dev, strict = false) {
  const leaf = depth <= 0 || chance(0.25);
  switch (t) {
    case "bool": {
      if (leaf) return pick(["true", "false", "device.allowMultipleAllocations",
        `has(device.attributes[${q(pick(dev.attrs.length ? dev.attrs.map((a) => a.d) : DOMAINS))}].${pick(IDS)})`]);
      switch (ri(17)) {
        case 0: return `!${paren(gen("bool", depth - 1, dev))}`;
        case 1: return `${paren(gen("bool", depth - 1, dev))} && ${paren(gen("bool", depth - 1, dev))}`;
        case 2: return `${paren(gen("bool", depth - 1, dev))} || ${paren(gen("bool", depth - 1, dev))}`;
        case 3: return `${paren(gen("bool", depth - 1, dev))} ? ${paren(gen("bool", depth - 1, dev))} : ${paren(gen("bool", depth - 1, dev))}`;
        case 4: {
          const ty = pick(["int", "uint", "double", "string", "bool", "list", "map"]);
          return `${paren(gen(ty, depth - 1, dev))} ${pick(["==", "!="])} ${paren(gen(ty, depth - 1, dev))}`;
        }
        case 5: {
          const a = pick(["int", "uint", "double"]), b = pick(["int", "uint", "double"]);
          return `${paren(gen(a, depth - 1, dev))} ${pick(["<", "<=", ">", ">="])} ${paren(gen(b, depth - 1, dev))}`;
        }
        case 6: return `${paren(gen("string", depth - 1, dev))} ${pick(["<", "<=", ">", ">="])} ${paren(gen("string", depth - 1, dev))}`;
        case 7: return `${paren(gen("string", depth - 1, dev))}.${pick(["startsWith", "endsWith", "contains"])}(${gen("string", depth - 1, dev)})`;
        case 8: return `${paren(gen("string", depth - 1, dev))}.matches(${q(chance(0.5) ? pick(PATTERNS) : asciiUnderFold(randomPattern(3)))})`;
        case 9: {
          // cel-go (Kubernetes plans with OptOptimize) answers `x in []` false
          // without evaluating x; the JS evaluator evaluates x first
          let l = gen("list", depth - 1, dev);
          if (l === "[]") l = "[1]";
          return `${paren(gen("int", depth - 1, dev))} in ${paren(l)}`;
        }
        case 10: return `${paren(gen("string", depth - 1, dev))} in ${paren(gen("map", depth - 1, dev))}`;
        case 11: {
          // a dynamically typed attribute against a literal of some type
          const ty = pick(["int", "string", "bool", "double"]);
          const op = ty === "bool" ? pick(["==", "!="]) : pick(["==", "!=", "<", ">=", ">"]);
          return `${attrRef(dev)} ${op} ${gen(ty, 0, dev)}`;
        }
        case 12: return `${attrRef(dev)}${pick([".startsWith(\"A\")", ".matches(\"^[a-z]\")", "", " && true", " || false"])}`;
        case 15: {
          // comprehensions over a list of ints or a map's keys
          const m = pick(["all", "exists", "exists_one"]);
          if (chance(0.3)) {
            const mp = chance(0.5) ? paren(gen("map", depth - 1, dev))
              : `device.attributes[${q(pick(DOMAINS))}]`;
            return `${mp}.${m}(k, ${pick(["k.startsWith(\"m\")", "k == \"a\"", "k.size() > 3", "k in [\"b\", \"model\"]"])})`;
          }
          const pred = `x ${pick(["<", ">", "==", "!=", ">="])} ${paren(gen("int", depth - 1, dev))}`;
          return `${paren(gen("list", depth - 1, dev))}.${m}(x, ${chance(0.2) ? `1 / x > 0 || ${pred}` : pred})`;
        }
        case 16: {
          const l = paren(gen("list", depth - 1, dev));
          const r = paren(gen("list", depth - 1, dev));
          switch (ri(3)) {
            case 0: return `${l}.map(x, x ${pick(["*", "+", "-", "/"])} ${gen("int", 0, dev, true)}) == ${r}`;
            case 1: return `${l}.filter(x, x ${pick(["<", ">", "=="])} ${gen("int", 0, dev, true)}) == ${r}`;
            default: return `size(${l}.map(x, x > ${gen("int", 0, dev, true)}, x * 2)) ${pick(["==", ">", "<"])} ${ri(4)}`;
          }
        }
        case 13: return `18446744073709551615u ${pick(["+", "-", "*"])} ${gen("uint", 0, dev)} ${pick(["==", "<", ">="])} ${gen("uint", 0, dev)}`;
        default: return `${q(pick(IDS))} in device.attributes[${q(pick(DOMAINS.filter((d) => dev.attrs.some((a) => a.d === d)).concat(["gpu.example.com"])))}]`;
      }
    }
    case "int":
      if (leaf) return !strict && chance(0.15) ? attrRef(dev) : pick(SMALL_INTS);
      switch (ri(8)) {
        case 0: case 1: {
          const op = pick(["+", "-", "*", "/", "%"]);
          // @bufbuild/cel 0.6.1 answers -9223372036854775808 % -1 with 0 where
          // cel-go reports an overflow: % only takes non-negative literals
          const rhs = op === "%" ? pick(["0", "1", "2", "3", "7", "100", "4611686018427387904"])
            : paren(gen("int", depth - 1, dev, strict));
          return `${paren(gen("int", depth - 1, dev, strict))} ${op} ${rhs}`;
        }
        case 2: return neg(gen("int", depth - 1, dev, strict));
        case 3: return `size(${gen(pick(["string", "list", "map"]), depth - 1, dev)})`;
        case 4: return `${paren(gen("bool", depth - 1, dev))} ? ${paren(gen("int", depth - 1, dev, strict))} : ${paren(gen("int", depth - 1, dev, strict))}`;
        // list indexes are statically int: @bufbuild/cel 0.6.1 reads a bool
        // index as 0 or 1 where cel-go answers "no such overload"
        case 5: return `${paren(gen("list", depth - 1, dev))}[${gen("int", depth - 1, dev, true)}]`;
        case 6: return `${paren(gen("map", depth - 1, dev))}[${gen("string", depth - 1, dev)}]`;
        default: return `${paren(gen("string", depth - 1, dev))}.size()`;
      }
    case "uint":
      // @bufbuild/cel 0.6.1 reports "int overflow" for uint / and % results
      // above 2^63 (cel-go does not): the maximum only meets + - *
      if (leaf) return pick(["0u", "1u", "2u", "7u", "0x10u"]);
      if (chance(0.5)) return `${paren(gen("uint", depth - 1, dev))} ${pick(["/", "%"])} ${paren(gen("uint", depth - 1, dev))}`;
      return `${paren(gen("uint", depth - 1, dev))} ${pick(["+", "-", "*"])} ${paren(gen("uint", depth - 1, dev))}`;
    case "double":
      if (leaf) return pick(["0.0", "1.5", "-2.5", "1e3", ".5", "3.0", "1e308", "2.0"]);
      switch (ri(3)) {
        case 0: return `${paren(gen("double", depth - 1, dev))} ${pick(["+", "-", "*"])} ${paren(gen("double", depth - 1, dev))}`;
        case 1: return neg(gen("double", depth - 1, dev));
        default: return `${paren(gen("bool", depth - 1, dev))} ? ${paren(gen("double", depth - 1, dev))} : ${paren(gen("double", depth - 1, dev))}`;
      }
    case "string":
      if (leaf) return chance(0.2) ? "device.driver" : chance(0.15) ? attrRef(dev) : q(pick(WORDS));
      switch (ri(4)) {
        case 0: return `${paren(gen("string", depth - 1, dev))} + ${paren(gen("string", depth - 1, dev))}`;
        case 1: return `${paren(gen("string", depth - 1, dev))}.${pick(["lowerAscii", "upperAscii"])}()`;
        case 2: return `${paren(gen("bool", depth - 1, dev))} ? ${paren(gen("string", depth - 1, dev))} : ${paren(gen("string", depth - 1, dev))}`;
        default: return q(pick(WORDS));
      }
    case "bool_leaf":
      return pick(["true", "false"]);
    case "list": {
      if (!leaf && chance(0.3)) return `${paren(gen("list", depth - 1, dev))} + ${paren(gen("list", depth - 1, dev))}`;
      const n = ri(4);
      const items = [];
      for (let i = 0; i < n; i++) items.push(gen("int", depth - 1, dev, true));
      return `[${items.join(", ")}]`;
    }
    case "map": {
      const n = ri(3);
      const keys = ["a", "b", "c", "A100"].sort(() => rnd() - 0.5).slice(0, n);
      return `{${keys.map((k) => `${q(k)}: ${gen("int", depth - 1, dev, true)}`).join(", ")}}`;
    }
  }
  throw new Error("unknown type " + t);
}

// @bufbuild/cel 0.6.1 drops a double negation even across parentheses
// (-(-(x)) is x there; cel-go negates twice, so -(-(-9223372036854775808))
// overflows): never negate a negation.
function neg(s) {
  return s.startsWith("-") ? s : `-${paren(s)}`;
}

function paren(s) {
  return /^[\w."'\[\]]+$/.test(s) && !s.startsWith("-") ? s : `(${s})`;
}

// ---- run both ----
function jsEval(expr, dev) {
  try {
    const v = run(expr, { device: deviceForJs(dev) }, { funcs: strings });
    if (v === true) return "true";
    if (v === false) return "false";
    return "error"; // not a bool
  } catch (e) {
    return "error";
  }
}

const cases = [];
const input = [];
for (let i = 0; i < COUNT; i++) {
  const dev = i % 20 === 0 || cases.length === 0 ? randomDevice() : cases[cases.length - 1].dev;
  const expr = gen("bool", 1 + ri(4), dev);
  if (expr.includes("\n")) continue;
  cases.push({ dev, expr, js: jsEval(expr, dev) });
  input.push(...deviceForCli(dev), `E ${expr}`);
}

// a second phase for the regular expression engine: random patterns over
// random short strings, without a device
const RE_CHARS = ["a", "b", "A", "1", "2", ".", " ", "é", "-", "x", "F", "\n", "\u212A"];
for (let i = 0; i < COUNT; i++) {
  const p = asciiUnderFold(randomPattern(2));
  let str = "";
  for (let k = ri(8); k > 0; k--) str += pick(RE_CHARS);
  const dev = { driver: "", attrs: [], multi: false };
  const expr = `${JSON.stringify(str)}.matches(${JSON.stringify(p)})`;
  cases.push({ dev, expr, js: jsEval(expr, dev), regex: true });
  input.push(...deviceForCli(dev), `E ${expr}`);
}

const res = spawnSync(cli, [], { input: input.join("\n") + "\n", encoding: "utf8", maxBuffer: 1 << 28 });
if (res.status !== 0) {
  console.error(`cel_eval_cli failed (status ${res.status}): ${res.stderr}`);
  process.exit(1);
}
const out = res.stdout.split("\n");
const diffs = [];
const tally = { true: 0, false: 0, error: 0 };
const retally = { true: 0, false: 0, error: 0 };
for (let i = 0; i < cases.length; i++) {
  const line = out[i] || "";
  const mine = line.startsWith("true") ? "true" : line.startsWith("false") ? "false" : "error";
  (cases[i].regex ? retally : tally)[cases[i].js]++;
  // a refusal at compile time is a difference: every generated expression is well typed
  if (mine !== cases[i].js || line.startsWith("compile-error")) diffs.push({ ...cases[i], line });
}
console.log(`${COUNT} expressions: CEL gave ${tally.true} true, ${tally.false} false, ` +
  `${tally.error} errors; ${COUNT} regular expressions: ${retally.true} match, ` +
  `${retally.false} do not, ${retally.error} errors; ${diffs.length} differences`);
for (const d of diffs.slice(0, 15)) {
  console.log(`\nexpression: ${d.expr}`);
  console.log(`device: driver=${JSON.stringify(d.dev.driver)} multi=${d.dev.multi} attrs=` +
    d.dev.attrs.map((a) => `${a.d}/${a.id}=${a.t}:${String(a.v)}`).join(" "));
  console.log(`@bufbuild/cel: ${d.js}   ksched: ${d.line}`);
}
process.exit(diffs.length ? 1 : 0);
