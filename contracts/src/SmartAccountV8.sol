// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IEntryPoint} from "@account-abstraction/contracts-v08/interfaces/IEntryPoint.sol";
import {PackedUserOperation} from "@account-abstraction/contracts-v08/interfaces/PackedUserOperation.sol";
import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts/proxy/utils/UUPSUpgradeable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712Upgradeable} from "@openzeppelin/contracts-upgradeable/utils/cryptography/EIP712Upgradeable.sol";
import {AccountCoreV8} from "./AccountCoreV8.sol";

/**
 * @title SmartAccountV8
 * @notice ERC-4337 (EntryPoint v0.8) smart account behind an ERC1967 proxy (UUPS): SmartAccount's properties (single
 * ECDSA owner, two-step ownership transfer, scoped session keys, guardians and social recovery, EIP-1271 with the
 * AccountMessage wrapper) on the packed userOp, with v0.8's standard execute/executeBatch(Call[]). Ownership and
 * recovery restate SmartAccount.sol (which stays as is: its bytecode fixes existing v0.6 accounts' addresses).
 *
 * "Authorized" means: the owner, the account itself (a self-call through `execute`), or the EntryPoint. The
 * EntryPoint only calls the account with the callData of a userOp whose validation passed; a session key can only
 * validate `execute`/`executeBatch` calls that never target the account itself, and a guardian can only validate
 * `startRecovery`/`completeRecovery`, so an EntryPoint call to an authorized function carries the owner's signature.
 *
 * Owner state lives in the ERC-7201 namespace smartwallet.storage.SmartAccountV8, session keys in AccountCoreV8's.
 */
contract SmartAccountV8 is AccountCoreV8, Initializable, UUPSUpgradeable, EIP712Upgradeable {
    /// @notice How long a started recovery must wait before it can complete (the owner can cancel meanwhile).
    uint256 public constant RECOVERY_PERIOD = 2 days;
    uint256 public constant MAX_GUARDIANS = 16;

    /// @notice EIP-712 type of the message wrapper `isValidSignature` checks (binds a hash to chain and account).
    bytes32 public constant ACCOUNT_MESSAGE_TYPEHASH = keccak256("AccountMessage(bytes32 hash)");
    /// @notice EIP-712 type guardians sign to complete a recovery.
    bytes32 public constant RECOVER_TYPEHASH = keccak256("Recover(address newOwner,uint64 executeAfter,uint256 nonce)");

    struct Recovery {
        address newOwner;
        uint64 executeAfter;
        uint32 guardiansRequired;
    }

    /// @custom:storage-location erc7201:smartwallet.storage.SmartAccountV8
    struct AccountStorage {
        address owner;
        address pendingOwner;
        address[] guardians;
        mapping(address guardian => uint256 position) guardianPosition; // index in `guardians` + 1
        Recovery recovery;
        uint256 recoveryNonce;
    }

    // keccak256(abi.encode(uint256(keccak256("smartwallet.storage.SmartAccountV8")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_LOCATION = 0xfcbd041a7ec4b78431e81f10baf76c8199822d81f1f877f59d60ca4fa03b4200;

    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);
    event OwnershipTransferCanceled(address indexed owner, address indexed pendingOwner);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event GuardianAdded(address indexed guardian);
    event GuardianRemoved(address indexed guardian);
    event RecoveryStarted(address indexed newOwner, uint64 executeAfter, uint32 guardiansRequired);
    event RecoveryCompleted(address indexed previousOwner, address indexed newOwner);
    event RecoveryCanceled(address indexed newOwner);

    error NotPendingOwner(address caller);
    error NoPendingOwnershipTransfer();
    error InvalidOwner(address owner);
    error InvalidGuardian(address guardian);
    error AlreadyGuardian(address guardian);
    error NotGuardian(address guardian);
    error TooManyGuardians(uint256 max);
    error NoGuardians();
    error RecoveryAlreadyActive();
    error NoActiveRecovery();
    error RecoveryNotReady(uint64 executeAfter);
    error NotEnoughGuardianSignatures(uint256 provided, uint256 required);
    error InvalidGuardianSignature(uint256 index);
    error GuardianSignaturesNotSorted(uint256 index);

    constructor(IEntryPoint anEntryPoint) AccountCoreV8(anEntryPoint) {
        _disableInitializers();
    }

    /// @notice Sets the first owner; the factory calls it in the same call that deploys the proxy.
    function initialize(address anOwner) external initializer {
        _initialize(anOwner);
    }

    /// @notice Sets the first owner and a first guardian in one call, so the account is recoverable from its
    /// deployment on, before its owner signs anything (the factory's createAccountWithGuardian).
    function initializeWithGuardian(address anOwner, address guardian) external initializer {
        _initialize(anOwner);
        _addGuardian(_storage(), guardian);
    }

    function _initialize(address anOwner) internal {
        if (anOwner == address(0)) revert InvalidOwner(anOwner);
        _storage().owner = anOwner;
        emit OwnershipTransferred(address(0), anOwner);
    }

    // ---------------------------------------------------------------- views

    function owner() public view returns (address) {
        return _storage().owner;
    }

    function pendingOwner() external view returns (address) {
        return _storage().pendingOwner;
    }

    function _owner() internal view override returns (address) {
        return _storage().owner;
    }

    // ---------------------------------------------------------------- ERC-4337

    /// @dev Guardians may only drive recovery, and only with a paymaster paying, so a guardian can never spend the
    /// account's own funds on gas.
    function _validateOtherSigner(address signer, PackedUserOperation calldata userOp)
        internal
        view
        override
        returns (uint256)
    {
        if (_storage().guardianPosition[signer] != 0 && _paymasterPays(userOp) && _isRecoveryCall(userOp.callData)) {
            return SIG_VALIDATION_SUCCESS;
        }
        return SIG_VALIDATION_FAILED;
    }

    function _isRecoveryCall(bytes calldata callData) internal pure returns (bool) {
        if (callData.length < 4) return false;
        bytes4 selector = bytes4(callData[:4]);
        return selector == SmartAccountV8.startRecovery.selector || selector == SmartAccountV8.completeRecovery.selector;
    }

    /// @dev execute/executeBatch: the EntryPoint (a validated op) or the owner directly, as SmartAccount.
    function _requireForExecute() internal view override {
        if (msg.sender != address(entryPoint()) && msg.sender != _storage().owner) revert NotAuthorized(msg.sender);
    }

    // ---------------------------------------------------------------- ownership

    function transferOwnership(address newOwner) external onlyAuthorized {
        AccountStorage storage $ = _storage();
        if (newOwner == address(0) || newOwner == $.owner || $.guardianPosition[newOwner] != 0) {
            revert InvalidOwner(newOwner);
        }
        $.pendingOwner = newOwner;
        emit OwnershipTransferStarted($.owner, newOwner);
    }

    /// @notice The pending owner takes over (a direct call from the new owner).
    function acceptOwnership() external {
        AccountStorage storage $ = _storage();
        if (msg.sender != $.pendingOwner) revert NotPendingOwner(msg.sender);
        _setOwner($, msg.sender);
    }

    function cancelOwnershipTransfer() external onlyAuthorized {
        AccountStorage storage $ = _storage();
        address pending = $.pendingOwner;
        if (pending == address(0)) revert NoPendingOwnershipTransfer();
        $.pendingOwner = address(0);
        emit OwnershipTransferCanceled($.owner, pending);
    }

    /// @dev Also clears any pending transfer, cancels a pending recovery (it was against the previous owner) and
    /// retires every session key the previous owner registered.
    function _setOwner(AccountStorage storage $, address newOwner) internal {
        address previous = $.owner;
        $.owner = newOwner;
        $.pendingOwner = address(0);
        _retireSessionKeys();
        emit OwnershipTransferred(previous, newOwner);
        if ($.recovery.newOwner != address(0)) _cancelRecovery($);
    }

    // ---------------------------------------------------------------- guardians

    function addGuardian(address guardian) external onlyAuthorized {
        _addGuardian(_storage(), guardian);
    }

    function _addGuardian(AccountStorage storage $, address guardian) internal {
        if (
            guardian == address(0) || guardian == address(this) || guardian == $.owner || guardian == $.pendingOwner
                || guardian == $.recovery.newOwner
        ) revert InvalidGuardian(guardian);
        if ($.guardianPosition[guardian] != 0) revert AlreadyGuardian(guardian);
        if ($.guardians.length >= MAX_GUARDIANS) revert TooManyGuardians(MAX_GUARDIANS);
        $.guardians.push(guardian);
        $.guardianPosition[guardian] = $.guardians.length;
        emit GuardianAdded(guardian);
    }

    function removeGuardian(address guardian) external onlyAuthorized {
        AccountStorage storage $ = _storage();
        uint256 position = $.guardianPosition[guardian];
        if (position == 0) revert NotGuardian(guardian);
        uint256 last = $.guardians.length;
        if (position != last) {
            address moved = $.guardians[last - 1];
            $.guardians[position - 1] = moved;
            $.guardianPosition[moved] = position;
        }
        $.guardians.pop();
        delete $.guardianPosition[guardian];
        emit GuardianRemoved(guardian);
    }

    function isGuardian(address account) public view returns (bool) {
        return _storage().guardianPosition[account] != 0;
    }

    function getGuardians() external view returns (address[] memory) {
        return _storage().guardians;
    }

    // ---------------------------------------------------------------- recovery

    /// @notice A guardian (directly, or through a guardian-signed userOp) or an authorized caller proposes a new
    /// owner. It takes effect after RECOVERY_PERIOD with signatures of a strict majority of the guardians, counted
    /// both now and at completion. Any owner change before then cancels it.
    function startRecovery(address newOwner) external {
        AccountStorage storage $ = _storage();
        if ($.guardianPosition[msg.sender] == 0) _checkAuthorized();
        if ($.recovery.newOwner != address(0)) revert RecoveryAlreadyActive();
        if (
            newOwner == address(0) || newOwner == address(this) || newOwner == $.owner
                || $.guardianPosition[newOwner] != 0
        ) {
            revert InvalidOwner(newOwner);
        }
        uint256 guardianCount = $.guardians.length;
        if (guardianCount == 0) revert NoGuardians();
        uint64 executeAfter = uint64(block.timestamp + RECOVERY_PERIOD);
        uint32 required = _majority(guardianCount);
        $.recovery = Recovery(newOwner, executeAfter, required);
        emit RecoveryStarted(newOwner, executeAfter, required);
    }

    /// @notice Anyone may complete a due recovery with guardians' EIP-712 signatures of `recoveryHash()`, ordered by
    /// strictly increasing signer address.
    function completeRecovery(bytes[] calldata signatures) external {
        AccountStorage storage $ = _storage();
        Recovery memory recovery = $.recovery;
        if (recovery.newOwner == address(0)) revert NoActiveRecovery();
        if (block.timestamp < recovery.executeAfter) revert RecoveryNotReady(recovery.executeAfter);
        uint256 required = _required($, recovery);
        if (signatures.length < required) revert NotEnoughGuardianSignatures(signatures.length, required);
        bytes32 digest = _recoveryDigest(recovery, $.recoveryNonce);
        address previousSigner = address(0);
        for (uint256 i = 0; i < signatures.length; i++) {
            (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(digest, signatures[i]);
            if (error != ECDSA.RecoverError.NoError || $.guardianPosition[signer] == 0) {
                revert InvalidGuardianSignature(i);
            }
            if (signer <= previousSigner) revert GuardianSignaturesNotSorted(i);
            previousSigner = signer;
        }
        address previousOwner = $.owner;
        delete $.recovery;
        $.recoveryNonce += 1;
        _setOwner($, recovery.newOwner);
        emit RecoveryCompleted(previousOwner, recovery.newOwner);
    }

    function cancelRecovery() external onlyAuthorized {
        AccountStorage storage $ = _storage();
        if ($.recovery.newOwner == address(0)) revert NoActiveRecovery();
        _cancelRecovery($);
    }

    /// @dev The nonce moves on, so signatures collected for the canceled recovery never count again.
    function _cancelRecovery(AccountStorage storage $) internal {
        address newOwner = $.recovery.newOwner;
        delete $.recovery;
        $.recoveryNonce += 1;
        emit RecoveryCanceled(newOwner);
    }

    /// @notice The pending recovery; `guardiansRequired` is the number of signatures completion needs right now.
    function getRecovery() external view returns (address newOwner, uint64 executeAfter, uint32 guardiansRequired) {
        AccountStorage storage $ = _storage();
        Recovery memory recovery = $.recovery;
        if (recovery.newOwner == address(0)) return (address(0), 0, 0);
        return (recovery.newOwner, recovery.executeAfter, _required($, recovery));
    }

    /// @dev More than half: with two guardians one alone never takes the account over.
    function _majority(uint256 guardianCount) internal pure returns (uint32) {
        return uint32(guardianCount / 2 + 1);
    }

    /// @dev A strict majority both of the guardians at the start and of those now.
    function _required(AccountStorage storage $, Recovery memory recovery) internal view returns (uint32) {
        uint32 current = _majority($.guardians.length);
        return current > recovery.guardiansRequired ? current : recovery.guardiansRequired;
    }

    /// @notice Counts completed and canceled recoveries; part of the digest so old signatures never replay.
    function recoveryNonce() external view returns (uint256) {
        return _storage().recoveryNonce;
    }

    /// @notice The EIP-712 digest guardians sign for the active recovery.
    function recoveryHash() external view returns (bytes32) {
        AccountStorage storage $ = _storage();
        Recovery memory recovery = $.recovery;
        if (recovery.newOwner == address(0)) revert NoActiveRecovery();
        return _recoveryDigest(recovery, $.recoveryNonce);
    }

    function _recoveryDigest(Recovery memory recovery, uint256 nonce) internal view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(RECOVER_TYPEHASH, recovery.newOwner, recovery.executeAfter, nonce)));
    }

    // ---------------------------------------------------------------- ERC-1271

    /// @notice Valid when the owner signed the EIP-712 `AccountMessage(hash)` for this account and chain (the
    /// same domain name and version as SmartAccount: the account address tells them apart).
    function isValidSignature(bytes32 hash, bytes calldata signature) external view override returns (bytes4) {
        bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(ACCOUNT_MESSAGE_TYPEHASH, hash)));
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(digest, signature);
        if (error == ECDSA.RecoverError.NoError && signer == _storage().owner) return ERC1271_MAGIC_VALUE;
        return ERC1271_INVALID;
    }

    function _EIP712Name() internal pure override returns (string memory) {
        return "SmartAccount";
    }

    function _EIP712Version() internal pure override returns (string memory) {
        return "1";
    }

    // ---------------------------------------------------------------- misc

    function _authorizeUpgrade(address) internal view override onlyAuthorized {}

    function _checkAuthorized() internal view override {
        if (msg.sender != _storage().owner && msg.sender != address(this) && msg.sender != address(entryPoint())) {
            revert NotAuthorized(msg.sender);
        }
    }

    function _storage() private pure returns (AccountStorage storage $) {
        assembly {
            $.slot := STORAGE_LOCATION
        }
    }
}
