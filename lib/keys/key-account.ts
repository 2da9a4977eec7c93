import { getAddress, type Address, type Hex } from "viem";
import { sign, signAuthorization, signMessage, signTransaction, signTypedData, toAccount, type LocalAccount } from "viem/accounts";

/** An account that signs with its key locally, hashes and EIP-7702 authorizations included (as viem's privateKeyToAccount). */
export type KeyAccount = LocalAccount & Required<Pick<LocalAccount, "sign" | "signAuthorization">>;

/**
 * The signer of a stored key whose address is already known and authenticated: the key was decrypted with AES-GCM
 * additional data naming that address (a row's ciphertext cannot be swapped into another row), so deriving the public
 * key again, as viem's privateKeyToAccount does, would only repeat a check the decryption made: a scalar
 * multiplication as costly as the signature itself, on every intent a custodial account sends. Signs as
 * privateKeyToAccount's account does.
 */
export function keyAccount(privateKey: Hex, address: Address): KeyAccount {
  const account = toAccount({
    address: getAddress(address),
    sign: ({ hash }) => sign({ hash, privateKey, to: "hex" }),
    signAuthorization: (authorization) => signAuthorization({ ...authorization, privateKey }),
    signMessage: ({ message }) => signMessage({ message, privateKey }),
    signTransaction: (transaction, { serializer } = {}) => signTransaction({ privateKey, transaction, serializer }),
    signTypedData: (typedData) => signTypedData({ ...typedData, privateKey }),
  });
  return account as KeyAccount;
}
