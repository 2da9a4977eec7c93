// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IEntryPoint} from "@account-abstraction/contracts-v08/interfaces/IEntryPoint.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {AccountCoreV8} from "./AccountCoreV8.sol";

/**
 * @title DelegatedAccountV8
 * @notice The EIP-7702 delegation target of "Delegated_v08" accounts: an EOA whose code delegates here becomes an
 * ERC-4337 (EntryPoint v0.8) account. The EOA's own key is the owner (address(this)) and always rules: no
 * initializer, proxy, upgrade, ownership transfer or guardians. It adds scoped session keys (kept in the EOA's storage
 * under AccountCoreV8's ERC-7201 namespace) to what Simple7702Account offers, with the same ABI for execute /
 * executeBatch(Call[]) and the same signatures (a raw ECDSA signature of the v0.8 userOpHash by the EOA; EIP-1271: of
 * the hash itself), so viem's toSimple7702SmartAccount({ implementation }) drives it as is.
 *
 * No constructor-set storage: an EOA delegating here never ran the constructor. The EntryPoint is an immutable
 * (part of the code, so also the EOA's).
 */
contract DelegatedAccountV8 is AccountCoreV8 {
    constructor(IEntryPoint anEntryPoint) AccountCoreV8(anEntryPoint) {}

    /// @notice The EOA itself, whose key signs everything.
    function owner() external view returns (address) {
        return address(this);
    }

    function _owner() internal view override returns (address) {
        return address(this);
    }

    /// @dev The EOA (a transaction to itself, or a self-call through execute) or the EntryPoint (a validated op).
    function _checkAuthorized() internal view override {
        if (msg.sender != address(this) && msg.sender != address(entryPoint())) revert NotAuthorized(msg.sender);
    }

    function _requireForExecute() internal view override {
        _checkAuthorized();
    }

    /// @notice Valid when the EOA's key signed `hash` itself: what an EOA's signature means anyway, so delegating
    /// changes nothing for verifiers (session keys never sign messages).
    function isValidSignature(bytes32 hash, bytes calldata signature) external view override returns (bytes4) {
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(hash, signature);
        if (error == ECDSA.RecoverError.NoError && signer == address(this)) return ERC1271_MAGIC_VALUE;
        return ERC1271_INVALID;
    }

    /// @dev Accepts any call, as the EOA did before delegating (Simple7702Account does the same).
    fallback() external payable {}
}
