// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";

/**
 * @title AccountProxy
 * @notice The ERC1967 proxy AccountFactory deploys for each SmartAccount. Unlike OpenZeppelin 5's ERC1967Proxy it
 * accepts empty init data, so its init code (and the account address) does not depend on the owner; the factory
 * calls `initialize(owner)` in the same transaction, so the proxy is never observable uninitialized.
 */
contract AccountProxy is ERC1967Proxy {
    constructor(address implementation, bytes memory data) payable ERC1967Proxy(implementation, data) {}

    function _unsafeAllowUninitialized() internal pure override returns (bool) {
        return true;
    }
}
