// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {BeaconProxy} from "@openzeppelin/contracts/proxy/beacon/BeaconProxy.sol";

/**
 * @title ManagedAccountProxy
 * @notice The proxy of a ManagedV5 account: OpenZeppelin's BeaconProxy with empty init data, so its init code (and
 * the account address) depends only on the project's beacon; ManagedAccountFactory initializes it in the same call.
 * Its ERC-1967 implementation slot stays empty, so SmartAccount's UUPS `upgradeToAndCall` refuses to run behind it:
 * only the beacon upgrades a managed account.
 */
contract ManagedAccountProxy is BeaconProxy {
    constructor(address beacon) BeaconProxy(beacon, "") {}
}
