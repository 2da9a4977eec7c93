// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Create2} from "@openzeppelin/contracts/utils/Create2.sol";
import {AccountProxy} from "./AccountProxy.sol";
import {SmartAccount} from "./SmartAccount.sol";

/**
 * @title AccountFactory
 * @notice Deploys SmartAccount proxies with CREATE2 (init code AccountProxy(accountImplementation, "")) and
 * initializes them in the same call, so nobody can deploy an address first with another owner. An account's
 * address depends only on this factory, the owner, the salt and, for an account deployed with a guardian, that
 * guardian: the same on every chain where the factory sits at the same address. The guardian is part of the
 * address so that nobody can deploy it first with a guardian of their choosing.
 */
contract AccountFactory {
    address public immutable accountImplementation;
    bytes32 private immutable _PROXY_INIT_CODE_HASH;

    event AccountCreated(address indexed account, address indexed owner, bytes32 salt);

    constructor(address anAccountImplementation) {
        accountImplementation = anAccountImplementation;
        _PROXY_INIT_CODE_HASH =
            keccak256(bytes.concat(type(AccountProxy).creationCode, abi.encode(anAccountImplementation, bytes(""))));
    }

    /// @notice Deploys and initializes the account, or returns its address when it already exists (EntryPoint v0.6
    /// initCode semantics).
    function createAccount(address owner, bytes32 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length != 0) return account;
        new AccountProxy{salt: keccak256(abi.encode(owner, salt))}(accountImplementation, "");
        SmartAccount(payable(account)).initialize(owner);
        emit AccountCreated(account, owner, salt);
    }

    /// @notice Like createAccount, with `guardian` made the account's first guardian at deployment: initCode alone
    /// deploys a recoverable account, without the owner's signature.
    function createAccountWithGuardian(address owner, address guardian, bytes32 salt)
        external
        returns (address account)
    {
        account = getAddressWithGuardian(owner, guardian, salt);
        if (account.code.length != 0) return account;
        new AccountProxy{salt: keccak256(abi.encode(owner, guardian, salt))}(accountImplementation, "");
        SmartAccount(payable(account)).initializeWithGuardian(owner, guardian);
        emit AccountCreated(account, owner, salt);
    }

    /// @notice The counterfactual address of `owner`'s account for `salt`.
    function getAddress(address owner, bytes32 salt) public view returns (address) {
        return Create2.computeAddress(keccak256(abi.encode(owner, salt)), _PROXY_INIT_CODE_HASH);
    }

    /// @notice The counterfactual address of `owner`'s account for `salt`, deployed with `guardian`.
    function getAddressWithGuardian(address owner, address guardian, bytes32 salt) public view returns (address) {
        return Create2.computeAddress(keccak256(abi.encode(owner, guardian, salt)), _PROXY_INIT_CODE_HASH);
    }
}
