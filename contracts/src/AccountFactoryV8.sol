// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Create2} from "@openzeppelin/contracts/utils/Create2.sol";
import {AccountProxy} from "./AccountProxy.sol";
import {SmartAccountV8} from "./SmartAccountV8.sol";

/**
 * @title AccountFactoryV8
 * @notice AccountFactory for SmartAccountV8 (EntryPoint v0.8): the same CREATE2 scheme (init code
 * AccountProxy(accountImplementation, ""), salt keccak256(abi.encode(owner, salt)) or (owner, guardian, salt)), and
 * the same initialization in the deploying call, so nobody can deploy an address first with another owner or
 * guardian.
 *
 * Unlike v0.8's SimpleAccountFactory it does not require the EntryPoint's senderCreator as caller: ERC-6492
 * verifiers call the factory directly to check an undeployed account's signature. Deploying an account early can
 * only make a pending op carrying its initCode fail (AA10), to be rebuilt without it; the account is the same.
 */
contract AccountFactoryV8 {
    address public immutable accountImplementation;
    bytes32 private immutable _PROXY_INIT_CODE_HASH;

    event AccountCreated(address indexed account, address indexed owner, bytes32 salt);

    constructor(address anAccountImplementation) {
        accountImplementation = anAccountImplementation;
        _PROXY_INIT_CODE_HASH =
            keccak256(bytes.concat(type(AccountProxy).creationCode, abi.encode(anAccountImplementation, bytes(""))));
    }

    /// @notice Deploys and initializes the account, or returns its address when it already exists (EntryPoint
    /// initCode semantics).
    function createAccount(address owner, bytes32 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length != 0) return account;
        new AccountProxy{salt: keccak256(abi.encode(owner, salt))}(accountImplementation, "");
        SmartAccountV8(payable(account)).initialize(owner);
        emit AccountCreated(account, owner, salt);
    }

    /// @notice Like createAccount, with `guardian` made the account's first guardian at deployment.
    function createAccountWithGuardian(address owner, address guardian, bytes32 salt)
        external
        returns (address account)
    {
        account = getAddressWithGuardian(owner, guardian, salt);
        if (account.code.length != 0) return account;
        new AccountProxy{salt: keccak256(abi.encode(owner, guardian, salt))}(accountImplementation, "");
        SmartAccountV8(payable(account)).initializeWithGuardian(owner, guardian);
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
