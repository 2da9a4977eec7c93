#!/usr/bin/env node
// Compiles contracts/src with solcjs into contracts/artifacts (plus the EntryPoint v0.6 artifact and a typed
// index.ts). `--check` compiles in memory and fails when a committed artifact differs.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SRC_DIR = "contracts/src";
const ARTIFACTS_DIR = path.join(ROOT, "contracts/artifacts");
const SOLC_VERSION = "0.8.28";
const CONTRACTS = ["SmartAccount", "AccountProxy", "AccountFactory", "VerifyingPaymaster", "TestToken", "ManagedBeacon", "ManagedAccountProxy", "ManagedAccountFactory", "SmartAccountV2Example", "ERC6551Registry", "TokenBoundAccount", "TestNFT", "TestMultiToken", "TestPriceFeed", "SmartAccountV8", "AccountFactoryV8", "DelegatedAccountV8", "VerifyingPaymasterV8"];
const ENTRY_POINT_ARTIFACT = "@account-abstraction/contracts/artifacts/EntryPoint.json";
// contracts-v08 is @account-abstraction/contracts@0.8.0 under an npm alias, beside 0.6.0 (package.json).
const PACKAGES = ["@openzeppelin/contracts/", "@openzeppelin/contracts-upgradeable/", "@account-abstraction/contracts/", "@account-abstraction/contracts-v08/"];
// Taken as published (their bytecode is what yields the canonical addresses), not compiled here.
const AA_V08_ARTIFACTS = { EntryPointV08: "EntryPoint", Simple7702Account: "Simple7702Account" };

// Part of every artifact; changing anything here changes the bytecode and so the deployed addresses.
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  // No metadata hash in the bytecode: comments or paths must not move the CREATE2 addresses.
  metadata: { bytecodeHash: "none" },
};

function fail(message) {
  console.error(`contracts/build.mjs: ${message}`);
  process.exit(1);
}

function readSource(sourceUnit) {
  if (PACKAGES.some((prefix) => sourceUnit.startsWith(prefix))) {
    return fs.readFileSync(path.join(ROOT, "node_modules", sourceUnit), "utf8");
  }
  if (sourceUnit.startsWith(`${SRC_DIR}/`)) return fs.readFileSync(path.join(ROOT, sourceUnit), "utf8");
  throw new Error(`import outside ${SRC_DIR} and ${PACKAGES.join(", ")}`);
}

function compile() {
  const version = solc.version();
  if (!version.startsWith(`${SOLC_VERSION}+`)) fail(`solc ${SOLC_VERSION} required, found ${version}`);

  const files = fs
    .readdirSync(path.join(ROOT, SRC_DIR))
    .filter((f) => f.endsWith(".sol"))
    .sort();
  const sources = Object.fromEntries(files.map((f) => [`${SRC_DIR}/${f}`, { content: readSource(`${SRC_DIR}/${f}`) }]));
  const input = {
    language: "Solidity",
    sources,
    settings: {
      ...SETTINGS,
      outputSelection: Object.fromEntries(
        CONTRACTS.map((name) => [`${SRC_DIR}/${name}.sol`, { [name]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] }]),
      ),
    },
  };
  const findImports = (sourceUnit) => {
    try {
      return { contents: readSource(sourceUnit) };
    } catch (err) {
      return { error: `${sourceUnit}: ${err.message}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));

  const diagnostics = output.errors ?? [];
  const errors = diagnostics.filter((d) => d.severity === "error");
  for (const warning of diagnostics.filter((d) => d.severity !== "error" && d.sourceLocation?.file?.startsWith(SRC_DIR))) {
    console.warn(warning.formattedMessage);
  }
  if (errors.length) fail(`compilation failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);

  const artifacts = {};
  for (const name of CONTRACTS) {
    const contract = output.contracts[`${SRC_DIR}/${name}.sol`]?.[name];
    if (!contract) fail(`no output for ${name}`);
    artifacts[name] = {
      contractName: name,
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      compiler: { version, settings: SETTINGS },
    };
  }

  const aa = JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules", ENTRY_POINT_ARTIFACT), "utf8"));
  const aaVersion = JSON.parse(
    fs.readFileSync(path.join(ROOT, "node_modules/@account-abstraction/contracts/package.json"), "utf8"),
  ).version;
  if (aaVersion !== "0.6.0") fail(`@account-abstraction/contracts 0.6.0 required, found ${aaVersion}`);
  artifacts.EntryPoint = {
    contractName: "EntryPoint",
    abi: aa.abi,
    bytecode: aa.bytecode,
    deployedBytecode: aa.deployedBytecode,
    source: `@account-abstraction/contracts@${aaVersion} artifacts/EntryPoint.json`,
  };
  const v08Dir = path.join(ROOT, "node_modules/@account-abstraction/contracts-v08");
  const v08Version = JSON.parse(fs.readFileSync(path.join(v08Dir, "package.json"), "utf8")).version;
  if (v08Version !== "0.8.0") fail(`@account-abstraction/contracts-v08 must be 0.8.0, found ${v08Version}`);
  for (const [name, published] of Object.entries(AA_V08_ARTIFACTS)) {
    const artifact = JSON.parse(fs.readFileSync(path.join(v08Dir, "artifacts", `${published}.json`), "utf8"));
    artifacts[name] = {
      contractName: name,
      abi: artifact.abi,
      bytecode: artifact.bytecode,
      deployedBytecode: artifact.deployedBytecode,
      source: `@account-abstraction/contracts@${v08Version} artifacts/${published}.json`,
    };
  }
  return artifacts;
}

const EXPORTS = [
  ["EntryPoint", "entryPoint"],
  ["EntryPointV08", "entryPointV08"],
  ["Simple7702Account", "simple7702Account"],
  ["SmartAccount", "smartAccount"],
  ["AccountFactory", "accountFactory"],
  ["VerifyingPaymaster", "verifyingPaymaster"],
  ["TestToken", "testToken"],
  ["ManagedBeacon", "managedBeacon"],
  ["ManagedAccountProxy", "managedAccountProxy"],
  ["ManagedAccountFactory", "managedAccountFactory"],
  ["SmartAccountV2Example", "smartAccountV2Example"],
  ["ERC6551Registry", "erc6551Registry"],
  ["TokenBoundAccount", "tokenBoundAccount"],
  ["TestNFT", "testNft"],
  ["TestMultiToken", "testMultiToken"],
  ["TestPriceFeed", "testPriceFeed"],
  ["SmartAccountV8", "smartAccountV8"],
  ["AccountFactoryV8", "accountFactoryV8"],
  ["DelegatedAccountV8", "delegatedAccountV8"],
  ["VerifyingPaymasterV8", "verifyingPaymasterV8"],
];

function indexTs(artifacts) {
  const lines = ["// generated by contracts/build.mjs — do not edit", ""];
  for (const [name, prefix] of EXPORTS) {
    const { abi, bytecode } = artifacts[name];
    lines.push(`export const ${prefix}Abi = ${JSON.stringify(abi, null, 2)} as const;`, "");
    lines.push(`export const ${prefix}Bytecode: \`0x\${string}\` =\n  "${bytecode}";`, "");
  }
  lines.push(
    "/** Creation code of the ERC1967 proxy (AccountProxy) the factory deploys: constructor(address implementation, bytes data). */",
    `export const erc1967ProxyBytecode: \`0x\${string}\` =\n  "${artifacts.AccountProxy.bytecode}";`,
    "",
  );
  return lines.join("\n");
}

function render(artifacts) {
  const files = { "index.ts": indexTs(artifacts) };
  for (const [name, artifact] of Object.entries(artifacts)) files[`${name}.json`] = `${JSON.stringify(artifact, null, 2)}\n`;
  return files;
}

const check = process.argv.includes("--check");
const files = render(compile());

if (check) {
  const stale = Object.entries(files)
    .filter(([file, content]) => {
      const target = path.join(ARTIFACTS_DIR, file);
      return !fs.existsSync(target) || fs.readFileSync(target, "utf8") !== content;
    })
    .map(([file]) => `contracts/artifacts/${file}`);
  if (fs.existsSync(ARTIFACTS_DIR)) {
    for (const file of fs.readdirSync(ARTIFACTS_DIR)) if (!(file in files)) stale.push(`contracts/artifacts/${file} (not generated)`);
  }
  if (stale.length) fail(`artifacts out of date: ${stale.join(", ")}\nRun \`npm run contracts:build\` and commit the result.`);
  console.log(`contracts/artifacts up to date (${Object.keys(files).length} files)`);
} else {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(ARTIFACTS_DIR, file), content);
  console.log(`wrote ${Object.keys(files).map((f) => `contracts/artifacts/${f}`).join(", ")}`);
}
