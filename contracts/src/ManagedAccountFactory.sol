// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Create2} from "@openzeppelin/contracts/utils/Create2.sol";
import {ManagedAccountProxy} from "./ManagedAccountProxy.sol";
import {ManagedBeacon} from "./ManagedBeacon.sol";
import {SmartAccount} from "./SmartAccount.sol";

/**
 * @title ManagedAccountFactory
 * @notice Deploys ManagedV5 accounts: SmartAccounts behind a BeaconProxy pointing at their project's beacon, so the
 * beacon admin upgrades every account of a project at once. Each project has one ManagedBeacon, deployed here with
 * CREATE2 (salt = the project's `beaconKey`) with this factory's implementation and admin, on first use: an
 * account's initCode alone deploys beacon and account. Accounts use CREATE2 with salt `keccak256(abi.encode(owner,
 * salt))` (or `(owner, guardian, salt)`) and are initialized in the same call, as AccountFactory's are, so nobody
 * can deploy an address first with another owner or guardian. Addresses depend on this factory (its implementation
 * and admin), the beacon key, the owner, the salt and the guardian: the same on every chain.
 */
contract ManagedAccountFactory {
    address public immutable accountImplementation;
    /// @notice Owner of every beacon this factory deploys: the only address that can upgrade managed accounts.
    address public immutable beaconAdmin;
    bytes32 private immutable _BEACON_INIT_CODE_HASH;

    event BeaconCreated(bytes32 indexed beaconKey, address beacon);
    event AccountCreated(address indexed account, address indexed owner, bytes32 indexed beaconKey, bytes32 salt);

    constructor(address anAccountImplementation, address aBeaconAdmin) {
        accountImplementation = anAccountImplementation;
        beaconAdmin = aBeaconAdmin;
        _BEACON_INIT_CODE_HASH =
            keccak256(bytes.concat(type(ManagedBeacon).creationCode, abi.encode(anAccountImplementation, aBeaconAdmin)));
    }

    /// @notice Deploys the beacon of `beaconKey` unless it exists; anyone may, since its owner and first
    /// implementation are fixed by this factory.
    function deployBeacon(bytes32 beaconKey) public returns (address beacon) {
        beacon = beaconOf(beaconKey);
        if (beacon.code.length != 0) return beacon;
        new ManagedBeacon{salt: beaconKey}(accountImplementation, beaconAdmin);
        emit BeaconCreated(beaconKey, beacon);
    }

    /// @notice Deploys (beacon first when missing) and initializes the account, or returns its address when it
    /// already exists (EntryPoint v0.6 initCode semantics).
    function createAccount(bytes32 beaconKey, address owner, bytes32 salt) external returns (address account) {
        account = getAddress(beaconKey, owner, salt);
        if (account.code.length != 0) return account;
        address beacon = deployBeacon(beaconKey);
        new ManagedAccountProxy{salt: keccak256(abi.encode(owner, salt))}(beacon);
        SmartAccount(payable(account)).initialize(owner);
        emit AccountCreated(account, owner, beaconKey, salt);
    }

    /// @notice Like createAccount, with `guardian` made the account's first guardian at deployment.
    function createAccountWithGuardian(bytes32 beaconKey, address owner, address guardian, bytes32 salt)
        external
        returns (address account)
    {
        account = getAddressWithGuardian(beaconKey, owner, guardian, salt);
        if (account.code.length != 0) return account;
        address beacon = deployBeacon(beaconKey);
        new ManagedAccountProxy{salt: keccak256(abi.encode(owner, guardian, salt))}(beacon);
        SmartAccount(payable(account)).initializeWithGuardian(owner, guardian);
        emit AccountCreated(account, owner, beaconKey, salt);
    }

    /// @notice Where the beacon of `beaconKey` is (or will be).
    function beaconOf(bytes32 beaconKey) public view returns (address) {
        return Create2.computeAddress(beaconKey, _BEACON_INIT_CODE_HASH);
    }

    /// @notice The counterfactual address of `owner`'s managed account for `salt` in the project of `beaconKey`.
    function getAddress(bytes32 beaconKey, address owner, bytes32 salt) public view returns (address) {
        return Create2.computeAddress(keccak256(abi.encode(owner, salt)), _proxyInitCodeHash(beaconKey));
    }

    /// @notice The counterfactual address of `owner`'s managed account for `salt`, deployed with `guardian`.
    function getAddressWithGuardian(bytes32 beaconKey, address owner, address guardian, bytes32 salt)
        public
        view
        returns (address)
    {
        return Create2.computeAddress(keccak256(abi.encode(owner, guardian, salt)), _proxyInitCodeHash(beaconKey));
    }

    function _proxyInitCodeHash(bytes32 beaconKey) internal view returns (bytes32) {
        return keccak256(bytes.concat(type(ManagedAccountProxy).creationCode, abi.encode(beaconOf(beaconKey))));
    }
}
