import {
  concat,
  encodeAbiParameters,
  encodeDeployData,
  getContractAddress,
  keccak256,
  zeroHash,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import {
  accountFactoryAbi,
  accountFactoryBytecode,
  accountFactoryV8Abi,
  accountFactoryV8Bytecode,
  delegatedAccountV8Abi,
  delegatedAccountV8Bytecode,
  entryPointBytecode,
  entryPointV08Bytecode,
  simple7702AccountBytecode,
  erc6551RegistryBytecode,
  managedAccountFactoryAbi,
  managedAccountFactoryBytecode,
  smartAccountAbi,
  smartAccountBytecode,
  smartAccountV8Abi,
  smartAccountV8Bytecode,
  tokenBoundAccountAbi,
  tokenBoundAccountBytecode,
  verifyingPaymasterAbi,
  verifyingPaymasterBytecode,
  verifyingPaymasterV8Abi,
  verifyingPaymasterV8Bytecode,
} from "@/contracts/artifacts";

/** Arachnid's deterministic deployment proxy: calldata = salt (32 bytes) ++ init code; present on most chains and on anvil. */
export const CREATE2_DEPLOYER: Address = "0x4e59b44847b379578588920cA78FbF26c0B4956C";

/** The canonical ERC-4337 EntryPoint v0.6.0 (what the 0.6.0 artifact yields through CREATE2_DEPLOYER with salt 0). */
export const ENTRY_POINT_V06: Address = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";

/** The canonical EntryPoint v0.8.0 (the 0.8.0 artifact through CREATE2_DEPLOYER with ENTRY_POINT_V08_SALT). */
export const ENTRY_POINT_V08: Address = "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108";
const ENTRY_POINT_V08_SALT: Hex = "0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9";

/** The reference Simple7702Account of the 0.8.0 release at its canonical address (salt 0), what viem's toSimple7702SmartAccount delegates to. */
export const SIMPLE_7702_ACCOUNT: Address = "0xe6Cae83BdE06E4c305530e199D7217f42808555B";

/** The CREATE2 salt of our own contracts. */
export const DEPLOY_SALT: Hex = zeroHash;

const ENTRY_POINT_SALT: Hex = zeroHash;

export interface Deployment {
  entryPoint: Address;
  /** The canonical EntryPoint v0.8 (ENTRY_POINT_V08). */
  entryPointV08: Address;
  /** The reference Simple7702Account (SIMPLE_7702_ACCOUNT), an EIP-7702 delegation target on EntryPoint v0.8. */
  simple7702Account: Address;
  /** SmartAccount implementation behind every account proxy; its address depends only on the EntryPoint. */
  accountImplementation: Address;
  /** AccountFactory; its address depends only on the implementation, so it is the same for every installation. */
  accountFactory: Address;
  /** VerifyingPaymaster; its address depends on this installation's paymaster owner and signer. */
  paymaster: Address;
  /** ManagedAccountFactory (ManagedV5 accounts and each project's beacon); its address depends on this installation's beacon admin. */
  managedAccountFactory: Address;
  /** ERC6551Registry (EIP-6551): deploys token-bound accounts; no constructor arguments, so the same everywhere. */
  tokenBoundRegistry: Address;
  /** TokenBoundAccount implementation of ERC6551V1 accounts; its address depends only on the EntryPoint. */
  tokenBoundAccountImplementation: Address;
  /** SmartAccountV8 implementation behind every Upgradeable_v08 account proxy (EntryPoint v0.8); depends only on that EntryPoint. */
  accountImplementationV08: Address;
  /** AccountFactoryV8 (Upgradeable_v08 accounts); depends only on its implementation, so the same for every installation. */
  accountFactoryV08: Address;
  /** VerifyingPaymasterV8 (EntryPoint v0.8); like `paymaster`, its address depends on this installation's paymaster owner and signer. */
  paymasterV08: Address;
  /** DelegatedAccountV8, the EIP-7702 delegation target of Delegated_v08 accounts; depends only on the EntryPoint v0.8. */
  delegatedAccountV08: Address;
}

export interface PaymasterKeys {
  paymasterOwner: Address;
  paymasterSigner: Address;
}

/** This installation's service keys that are part of contract addresses. */
export interface InstallationKeys extends PaymasterKeys {
  /** Owner of every project's ManagedV5 beacon. */
  beaconAdmin: Address;
}

interface Piece {
  name: keyof Deployment;
  salt: Hex;
  initCode: Hex;
  address: Address;
}

/**
 * The CREATE2 salt both account factories (AccountFactory, ManagedAccountFactory) give an account:
 * keccak256(abi.encode(owner, salt)), or (owner, guardian, salt) for one deployed with a guardian.
 */
export function accountCreate2Salt(owner: Address, salt: Hex, guardian: Address | null): Hex {
  return keccak256(
    guardian
      ? encodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "bytes32" }], [owner, guardian, salt])
      : encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [owner, salt]),
  );
}

const create2Address = (salt: Hex, initCode: Hex) =>
  getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt, bytecode: initCode });

function piece(name: keyof Deployment, salt: Hex, initCode: Hex): Piece {
  return { name, salt, initCode, address: create2Address(salt, initCode) };
}

let shared: [Piece, Piece, Piece] | undefined;

/** EntryPoint, implementation and factory: the same for every installation, so computed once. */
function sharedPieces(): [Piece, Piece, Piece] {
  if (shared) return shared;
  const entryPoint = piece("entryPoint", ENTRY_POINT_SALT, entryPointBytecode);
  if (entryPoint.address !== ENTRY_POINT_V06) {
    throw new Error(`The EntryPoint artifact yields ${entryPoint.address}, not the canonical ${ENTRY_POINT_V06}`);
  }
  const implementation = piece(
    "accountImplementation",
    DEPLOY_SALT,
    encodeDeployData({ abi: smartAccountAbi, bytecode: smartAccountBytecode, args: [entryPoint.address] }),
  );
  const factory = piece(
    "accountFactory",
    DEPLOY_SALT,
    encodeDeployData({ abi: accountFactoryAbi, bytecode: accountFactoryBytecode, args: [implementation.address] }),
  );
  shared = [entryPoint, implementation, factory];
  return shared;
}

let canonicalV08: Piece[] | undefined;

/** EntryPoint v0.8 and the reference 7702 account, each checked against its canonical address. */
function v08Pieces(): Piece[] {
  if (canonicalV08) return canonicalV08;
  const entryPoint = piece("entryPointV08", ENTRY_POINT_V08_SALT, entryPointV08Bytecode);
  const simple7702 = piece("simple7702Account", zeroHash, simple7702AccountBytecode);
  for (const [p, canonical] of [[entryPoint, ENTRY_POINT_V08], [simple7702, SIMPLE_7702_ACCOUNT]] as const) {
    if (p.address !== canonical) throw new Error(`The ${p.name} artifact yields ${p.address}, not the canonical ${canonical}`);
  }
  canonicalV08 = [entryPoint, simple7702];
  return canonicalV08;
}

/** What to deploy, in dependency order. */
function plan({ paymasterOwner, paymasterSigner, beaconAdmin }: InstallationKeys): Piece[] {
  const [entryPoint, implementation, factory] = sharedPieces();
  const paymaster = piece(
    "paymaster",
    DEPLOY_SALT,
    encodeDeployData({
      abi: verifyingPaymasterAbi,
      bytecode: verifyingPaymasterBytecode,
      args: [entryPoint.address, paymasterOwner, paymasterSigner],
    }),
  );
  const managedFactory = piece(
    "managedAccountFactory",
    DEPLOY_SALT,
    encodeDeployData({
      abi: managedAccountFactoryAbi,
      bytecode: managedAccountFactoryBytecode,
      args: [implementation.address, beaconAdmin],
    }),
  );
  return [
    entryPoint,
    implementation,
    factory,
    paymaster,
    managedFactory,
    ...tokenBoundPieces(entryPoint.address),
    ...v08Pieces(),
    ...ourV08Pieces({ paymasterOwner, paymasterSigner }),
  ];
}

let sharedV08: { implementation: Piece; factory: Piece; delegated: Piece } | undefined;

/** Our EntryPoint v0.8 contracts: account implementation and factory, paymaster, 7702 delegation target. */
function ourV08Pieces({ paymasterOwner, paymasterSigner }: PaymasterKeys): Piece[] {
  if (!sharedV08) {
    // Installation-independent, so hashed once.
    const implementation = piece(
      "accountImplementationV08",
      DEPLOY_SALT,
      encodeDeployData({ abi: smartAccountV8Abi, bytecode: smartAccountV8Bytecode, args: [ENTRY_POINT_V08] }),
    );
    const factory = piece(
      "accountFactoryV08",
      DEPLOY_SALT,
      encodeDeployData({ abi: accountFactoryV8Abi, bytecode: accountFactoryV8Bytecode, args: [implementation.address] }),
    );
    const delegated = piece(
      "delegatedAccountV08",
      DEPLOY_SALT,
      encodeDeployData({ abi: delegatedAccountV8Abi, bytecode: delegatedAccountV8Bytecode, args: [ENTRY_POINT_V08] }),
    );
    sharedV08 = { implementation, factory, delegated };
  }
  const paymaster = piece(
    "paymasterV08",
    DEPLOY_SALT,
    encodeDeployData({
      abi: verifyingPaymasterV8Abi,
      bytecode: verifyingPaymasterV8Bytecode,
      args: [ENTRY_POINT_V08, paymasterOwner, paymasterSigner],
    }),
  );
  return [sharedV08.implementation, sharedV08.factory, paymaster, sharedV08.delegated];
}

/** The ERC-6551 registry and our token-bound account implementation (ERC6551V1 accounts). */
function tokenBoundPieces(entryPoint: Address): Piece[] {
  return [
    piece("tokenBoundRegistry", DEPLOY_SALT, erc6551RegistryBytecode),
    piece(
      "tokenBoundAccountImplementation",
      DEPLOY_SALT,
      encodeDeployData({ abi: tokenBoundAccountAbi, bytecode: tokenBoundAccountBytecode, args: [entryPoint] }),
    ),
  ];
}

/** Where our contracts live on any chain (checksummed), deployed or not. */
export function deploymentAddresses(keys: InstallationKeys): Deployment {
  return Object.fromEntries(plan(keys).map((p) => [p.name, p.address])) as unknown as Deployment;
}

async function hasCode(client: PublicClient, address: Address) {
  const code = await client.getCode({ address });
  return code !== undefined && code !== "0x";
}

/**
 * Deploys whatever is missing (EntryPoints v0.6 and v0.8, account implementations, factories, paymasters, 7702 target) through the CREATE2
 * deployer, one transaction at a time, each awaited. Idempotent: a second call deploys nothing, and a piece someone
 * else deployed meanwhile counts as present. `deployed` names what this call deployed.
 */
export async function ensureDeployment(
  publicClient: PublicClient,
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  keys: InstallationKeys,
): Promise<Deployment & { deployed: string[] }> {
  const pieces = plan(keys);
  const deployed: string[] = [];
  let deployerChecked = false;
  for (const { name, salt, initCode, address } of pieces) {
    if (await hasCode(publicClient, address)) continue;
    if (!deployerChecked) {
      if (!(await hasCode(publicClient, CREATE2_DEPLOYER))) {
        const chainId = await publicClient.getChainId();
        throw new Error(
          `Chain ${chainId} has no CREATE2 deployer at ${CREATE2_DEPLOYER}; deploy it first (https://github.com/Arachnid/deterministic-deployment-proxy).`,
        );
      }
      deployerChecked = true;
    }
    try {
      const hash = await walletClient.sendTransaction({
        account: walletClient.account,
        chain: walletClient.chain,
        to: CREATE2_DEPLOYER,
        data: concat([salt, initCode]),
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`Deploying ${name} reverted (transaction ${hash})`);
    } catch (err) {
      // A concurrent ensureDeployment may have won the race; the CREATE2 address is the same either way.
      if (await hasCode(publicClient, address)) continue;
      throw err;
    }
    if (!(await hasCode(publicClient, address))) throw new Error(`Deploying ${name} left no code at ${address}`);
    deployed.push(name);
  }
  return { ...deploymentAddresses(keys), deployed };
}
