#!/usr/bin/env node
// Compile the devnet workload contracts and write artifacts.json.
//
// Usage, from the repository root (node >= 20):
//   npm ci    (installs the solc pinned in package-lock.json)
//   node src/chainframe/devnet/contracts/build.mjs
//
// solc (solc-js, the npm package) and its dependency js-sha3 are resolved
// from <cwd>/node_modules. Set SOLC_NODE_MODULES=/some/dir/node_modules to
// resolve them from elsewhere (e.g. when solc was installed outside the repo).
//
// Every *.sol file in this folder is compiled together via standard JSON
// (optimizer on, 200 runs), once per EVM version a devnet node runs: cancun
// (anvil, Hardhat) into artifacts.json, shanghai (Ganache 7.9, which has no
// MCOPY or transient storage) into artifacts-shanghai.json. Any error-severity
// diagnostic exits non-zero. Output is deterministic: sorted keys, 2-space indent,
// trailing newline, so re-running on unchanged sources gives no git diff.

import { createRequire } from "node:module";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SOLC_VERSION = "0.8.28";
const here = path.dirname(fileURLToPath(import.meta.url));

function fail(msg) {
  process.stderr.write(`build.mjs: ${msg}\n`);
  process.exit(1);
}

// createRequire needs a file path; the file itself need not exist.
const base = process.env.SOLC_NODE_MODULES
  ? path.join(path.resolve(process.env.SOLC_NODE_MODULES), "..", "noop.js")
  : path.join(process.cwd(), "noop.js");
const requireFromBase = createRequire(base);

let solc;
try {
  solc = requireFromBase("solc");
} catch (err) {
  fail(
    `cannot load solc from ${path.dirname(base)}/node_modules (${err.code ?? err.message}).\n` +
      `Run \`npm ci\` in the repository root first ` +
      `(or set SOLC_NODE_MODULES to a node_modules folder that has it).`,
  );
}
// js-sha3 is a dependency of solc; resolve it next to solc so it is found
// whether or not npm hoisted it.
let keccak256;
try {
  const requireFromSolc = createRequire(requireFromBase.resolve("solc"));
  ({ keccak256 } = requireFromSolc("js-sha3"));
} catch (err) {
  fail(`cannot load js-sha3 (a dependency of solc): ${err.message}`);
}

const compiler = solc.version();
if (!compiler.startsWith(`${SOLC_VERSION}+`)) {
  fail(`expected solc ${SOLC_VERSION}, found ${compiler}; run \`npm install --no-save solc@${SOLC_VERSION}\``);
}

// --- compile -------------------------------------------------------------
const files = readdirSync(here).filter((f) => f.endsWith(".sol")).sort();
if (files.length === 0) fail(`no .sol files in ${here}`);

function build(evmVersion) {
const input = {
  language: "Solidity",
  // Source keys are bare file names so the embedded metadata hash does not
  // depend on where the repository is checked out.
  sources: Object.fromEntries(files.map((f) => [f, { content: readFileSync(path.join(here, f), "utf8") }])),
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion,
    outputSelection: {
      "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.methodIdentifiers"] },
    },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
const diagnostics = output.errors ?? [];
for (const d of diagnostics) process.stderr.write(`${d.formattedMessage ?? d.message}\n`);
const errors = diagnostics.filter((d) => d.severity === "error");
if (errors.length > 0) fail(`${errors.length} compiler error(s)`);

// --- assemble artifacts --------------------------------------------------
// Canonical ABI type: tuples are spelled out as "(t1,t2)" plus any array suffix.
function canonicalType(param) {
  if (param.type.startsWith("tuple")) {
    return `(${param.components.map(canonicalType).join(",")})${param.type.slice("tuple".length)}`;
  }
  return param.type;
}

const contracts = {};
for (const file of Object.keys(output.contracts ?? {}).sort()) {
  for (const [name, c] of Object.entries(output.contracts[file])) {
    // Interfaces and abstract contracts have no bytecode: nothing to deploy.
    if (!c.evm.bytecode.object) continue;
    if (contracts[name]) fail(`contract name ${name} defined twice`);
    const events = {};
    for (const item of c.abi) {
      if (item.type !== "event") continue;
      const sig = `${item.name}(${item.inputs.map(canonicalType).join(",")})`;
      events[sig] = `0x${keccak256(sig)}`;
    }
    contracts[name] = {
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      methods: c.evm.methodIdentifiers,
      events,
    };
  }
}
return contracts;
}

// JSON.stringify with object keys sorted at every level (array order kept).
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
  }
  return value;
}

for (const [evmVersion, file] of [["cancun", "artifacts.json"], ["shanghai", "artifacts-shanghai.json"]]) {
  const contracts = build(evmVersion);
  const outPath = path.join(here, file);
  writeFileSync(outPath, `${JSON.stringify(sortKeys({ compiler, contracts }), null, 2)}\n`);
  process.stdout.write(`wrote ${path.relative(process.cwd(), outPath)}: ${Object.keys(contracts).sort().join(", ")} (solc ${compiler}, ${evmVersion})\n`);
}
