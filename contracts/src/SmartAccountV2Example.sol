// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IEntryPoint} from "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import {SmartAccount} from "./SmartAccount.sol";

/**
 * @title SmartAccountV2Example
 * @notice An example upgrade of SmartAccount, never deployed by the service: the managed-account tests (and an
 * operator trying `accounts upgrade-managed`) point a project's beacon at it. It keeps SmartAccount's storage
 * (one ERC-7201 namespace) and adds `version()`, so a caller can tell upgraded accounts apart.
 */
contract SmartAccountV2Example is SmartAccount {
    constructor(IEntryPoint anEntryPoint) SmartAccount(anEntryPoint) {}

    function version() external pure returns (uint256) {
        return 2;
    }
}
