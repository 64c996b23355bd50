import fs from 'node:fs';
import path from 'node:path';

/** The test token: OpenZeppelin's ERC20 with chosen decimals, the whole supply minted to `holder`. */
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
contract TestToken is ERC20 {
    uint8 private immutable _decimals;
    constructor(string memory name_, string memory symbol_, uint8 decimals_, address holder, uint256 supply) ERC20(name_, symbol_) {
        _decimals = decimals_;
        _mint(holder, supply);
    }
    function decimals() public view override returns (uint8) { return _decimals; }
}
`;

export interface CompiledContract {
  abi: unknown[];
  bytecode: string;
}

/**
 * Compiles the test ERC-20 with solc from npm against the installed @openzeppelin/contracts (no
 * download). The result is cached in `cacheDir` because compiling takes seconds.
 */
export function compileTestToken(cacheDir?: string): CompiledContract {
  const cacheFile = cacheDir ? path.join(cacheDir, 'TestToken.json') : undefined;
  if (cacheFile && fs.existsSync(cacheFile)) return JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as CompiledContract;
  const compiled = compileSolidity(SOURCE, ['TestToken']).TestToken;
  if (cacheFile) {
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
    fs.writeFileSync(cacheFile, JSON.stringify(compiled));
  }
  return compiled;
}

/**
 * The named contracts of one Solidity source, compiled with solc from npm; imports of
 * @openzeppelin/contracts resolve to the installed package.
 */
export function compileSolidity(source: string, names: string[]): Record<string, CompiledContract> {
  // solc's Emscripten build, when first loaded, makes every unhandled rejection and uncaught exception of the
  // process a throw of its own; the process that compiles here (npm start's gateway) keeps its own handling.
  const before = { rejection: process.listeners('unhandledRejection'), exception: process.listeners('uncaughtException') };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string, opts: { import: (p: string) => { contents?: string; error?: string } }): string };
  for (const l of process.listeners('unhandledRejection')) if (!before.rejection.includes(l)) process.off('unhandledRejection', l);
  for (const l of process.listeners('uncaughtException')) if (!before.exception.includes(l)) process.off('uncaughtException', l);
  const ozRoot = path.dirname(require.resolve('@openzeppelin/contracts/package.json'));
  const input = {
    language: 'Solidity',
    sources: { 'Source.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const findImports = (p: string) => {
    const prefix = '@openzeppelin/contracts/';
    if (!p.startsWith(prefix)) return { error: `not found: ${p}` };
    const file = path.join(ozRoot, p.slice(prefix.length));
    return fs.existsSync(file) ? { contents: fs.readFileSync(file, 'utf8') } : { error: `not found: ${p}` };
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const compiled: Record<string, CompiledContract> = {};
  for (const name of names) {
    const c = out.contracts['Source.sol'][name];
    compiled[name] = { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
  }
  return compiled;
}
