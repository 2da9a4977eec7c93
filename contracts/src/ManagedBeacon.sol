// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {UpgradeableBeacon} from "@openzeppelin/contracts/proxy/beacon/UpgradeableBeacon.sol";

/**
 * @title ManagedBeacon
 * @notice One project's beacon: every ManagedV5 account of the project delegates to `implementation()`, so one
 * `upgradeTo` by the owner (the installation's beacon admin) upgrades all of them in one transaction. OpenZeppelin's
 * UpgradeableBeacon under our name, so the build emits the creation code the service hashes to predict beacon
 * addresses.
 */
contract ManagedBeacon is UpgradeableBeacon {
    constructor(address implementation, address admin) UpgradeableBeacon(implementation, admin) {}
}
