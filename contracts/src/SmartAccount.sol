// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccount} from "@account-abstraction/contracts/interfaces/IAccount.sol";
import {IEntryPoint} from "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import {UserOperation} from "@account-abstraction/contracts/interfaces/UserOperation.sol";
import {_packValidationData} from "@account-abstraction/contracts/core/Helpers.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts/proxy/utils/UUPSUpgradeable.sol";
import {IERC721Receiver} from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";
import {ERC721Holder} from "@openzeppelin/contracts/token/ERC721/utils/ERC721Holder.sol";
import {ERC1155Holder} from "@openzeppelin/contracts/token/ERC1155/utils/ERC1155Holder.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {EIP712Upgradeable} from "@openzeppelin/contracts-upgradeable/utils/cryptography/EIP712Upgradeable.sol";

/**
 * @title SmartAccount
 * @notice ERC-4337 (EntryPoint v0.6) smart account behind an ERC1967 proxy (UUPS), with a single ECDSA owner,
 * two-step ownership transfer, scoped session keys and guardian-based social recovery.
 *
 * "Authorized" means: the owner, the account itself (a self-call through `execute`), or the EntryPoint. The
 * EntryPoint only calls the account with the callData of a userOp whose validation passed; a session key can only
 * validate `execute`/`executeBatch` calls that never target the account itself, and a guardian can only validate
 * `startRecovery`/`completeRecovery`, so an EntryPoint call to an authorized function carries the owner's signature.
 *
 * All state lives in one ERC-7201 namespace, so upgrades never collide with inherited storage.
 */
contract SmartAccount is
    IAccount,
    IERC1271,
    Initializable,
    UUPSUpgradeable,
    EIP712Upgradeable,
    ERC721Holder,
    ERC1155Holder
{
    /// @notice How long a started recovery must wait before it can complete (the owner can cancel meanwhile).
    uint256 public constant RECOVERY_PERIOD = 2 days;
    uint256 public constant MAX_GUARDIANS = 16;
    uint256 public constant MAX_SESSION_KEY_TARGETS = 10;

    /// @notice EIP-712 type of the message wrapper `isValidSignature` checks (binds a hash to chain and account).
    bytes32 public constant ACCOUNT_MESSAGE_TYPEHASH = keccak256("AccountMessage(bytes32 hash)");
    /// @notice EIP-712 type guardians sign to complete a recovery.
    bytes32 public constant RECOVER_TYPEHASH = keccak256("Recover(address newOwner,uint64 executeAfter,uint256 nonce)");

    uint256 internal constant SIG_VALIDATION_FAILED = 1;
    bytes4 internal constant ERC1271_MAGIC_VALUE = 0x1626ba7e;
    bytes4 internal constant ERC1271_INVALID = 0xffffffff;

    IEntryPoint private immutable _ENTRY_POINT;

    struct SessionKey {
        uint48 validAfter;
        uint48 validUntil;
        uint48 limit;
        uint48 used;
        // A key only counts while its epoch is the account's: every owner change bumps the epoch.
        uint32 epoch;
        bool active;
        address[] whitelist;
        // Appended (upgrade-safe: new slot at the struct's end). The most wei one op signed by the key may make the
        // account pay in fees when no paymaster pays; 0: only ops a paymaster pays for. Keys registered before this
        // field existed read 0.
        uint128 maxFeePerOp;
    }

    struct Recovery {
        address newOwner;
        uint64 executeAfter;
        uint32 guardiansRequired;
    }

    /// @custom:storage-location erc7201:smartwallet.storage.SmartAccount
    struct AccountStorage {
        address owner;
        address pendingOwner;
        uint32 sessionKeyEpoch;
        mapping(address key => SessionKey) sessionKeys;
        address[] guardians;
        mapping(address guardian => uint256 position) guardianPosition; // index in `guardians` + 1
        Recovery recovery;
        uint256 recoveryNonce;
    }

    // keccak256(abi.encode(uint256(keccak256("smartwallet.storage.SmartAccount")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_LOCATION = 0xcedfc6c6609eff5f46924b3d6d5dbedd8d0964621ec3fbdef29d07ed0e361000;

    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);
    event OwnershipTransferCanceled(address indexed owner, address indexed pendingOwner);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event SessionKeyRegistered(
        address indexed key,
        uint48 validAfter,
        uint48 validUntil,
        uint48 limit,
        address[] whitelist,
        uint128 maxFeePerOp
    );
    event SessionKeyRevoked(address indexed key);
    event GuardianAdded(address indexed guardian);
    event GuardianRemoved(address indexed guardian);
    event RecoveryStarted(address indexed newOwner, uint64 executeAfter, uint32 guardiansRequired);
    event RecoveryCompleted(address indexed previousOwner, address indexed newOwner);
    event RecoveryCanceled(address indexed newOwner);

    error NotAuthorized(address caller);
    error NotEntryPoint(address caller);
    error NotPendingOwner(address caller);
    error NoPendingOwnershipTransfer();
    error InvalidOwner(address owner);
    error LengthMismatch();
    error InvalidSessionKey(address key);
    error InvalidSessionWindow(uint48 validAfter, uint48 validUntil);
    error InvalidSessionLimit();
    error TooManyWhitelistedTargets(uint256 count, uint256 max);
    error InvalidWhitelistedTarget(address target);
    error SessionKeyNotActive(address key);
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

    modifier onlyEntryPoint() {
        if (msg.sender != address(_ENTRY_POINT)) revert NotEntryPoint(msg.sender);
        _;
    }

    modifier onlyEntryPointOrOwner() {
        if (msg.sender != address(_ENTRY_POINT) && msg.sender != _storage().owner) revert NotAuthorized(msg.sender);
        _;
    }

    modifier onlyAuthorized() {
        _checkAuthorized();
        _;
    }

    constructor(IEntryPoint anEntryPoint) {
        _ENTRY_POINT = anEntryPoint;
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

    receive() external payable {}

    // ---------------------------------------------------------------- views

    function entryPoint() public view returns (IEntryPoint) {
        return _ENTRY_POINT;
    }

    function owner() public view returns (address) {
        return _storage().owner;
    }

    function pendingOwner() external view returns (address) {
        return _storage().pendingOwner;
    }

    /// @notice The account's nonce for key 0 at the EntryPoint.
    function getNonce() external view returns (uint256) {
        return _ENTRY_POINT.getNonce(address(this), 0);
    }

    // ---------------------------------------------------------------- ERC-4337

    /// @inheritdoc IAccount
    function validateUserOp(UserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        override
        onlyEntryPoint
        returns (uint256 validationData)
    {
        validationData = _validateSignature(userOp, userOpHash);
        if (missingAccountFunds != 0) {
            // The EntryPoint checks the deposit itself; a failed transfer surfaces as AA21.
            (bool success,) = payable(msg.sender).call{value: missingAccountFunds}("");
            (success);
        }
    }

    function _validateSignature(UserOperation calldata userOp, bytes32 userOpHash) internal returns (uint256) {
        (address signer, ECDSA.RecoverError error,) =
            ECDSA.tryRecoverCalldata(MessageHashUtils.toEthSignedMessageHash(userOpHash), userOp.signature);
        if (error != ECDSA.RecoverError.NoError) return SIG_VALIDATION_FAILED;

        AccountStorage storage $ = _storage();
        if (signer == $.owner) return 0;

        SessionKey storage key = $.sessionKeys[signer];
        if (
            _isActive($, key) && key.used < key.limit && _sessionKeyMayCall(key, userOp.callData)
                && _sessionKeyMayCost(key, userOp)
        ) {
            key.used += 1;
            return _packValidationData(false, key.validUntil, key.validAfter);
        }

        // Guardians may only drive recovery, and only with a paymaster paying, so a guardian can never spend the
        // account's own funds on gas.
        if ($.guardianPosition[signer] != 0 && _paymasterPays(userOp) && _isRecoveryCall(userOp.callData)) {
            return 0;
        }
        return SIG_VALIDATION_FAILED;
    }

    /// @dev Whatever a paymaster pays costs the account nothing. Without one the account pays at most the v0.6
    /// prefund, (callGasLimit + verificationGasLimit + preVerificationGas) × maxFeePerGas, tip included (the priority
    /// fee a self-bundling key holder collects never exceeds maxFeePerGas): that must be within the key's cap.
    /// The EntryPoint bounds each field by 2^120 before it calls the account, so the product cannot overflow.
    function _sessionKeyMayCost(SessionKey storage key, UserOperation calldata userOp) internal view returns (bool) {
        if (_paymasterPays(userOp)) return true;
        uint256 cost = (userOp.callGasLimit + userOp.verificationGasLimit + userOp.preVerificationGas) * userOp.maxFeePerGas;
        return cost <= key.maxFeePerOp;
    }

    /// @dev As the v0.6 EntryPoint reads it: paymasterAndData naming the zero address (or empty) is no paymaster, and
    /// then the account pays.
    function _paymasterPays(UserOperation calldata userOp) internal pure returns (bool) {
        return userOp.paymasterAndData.length >= 20 && address(bytes20(userOp.paymasterAndData[:20])) != address(0);
    }

    function _sessionKeyMayCall(SessionKey storage key, bytes calldata callData) internal view returns (bool) {
        if (callData.length < 4) return false;
        bytes4 selector = bytes4(callData[:4]);
        if (selector == SmartAccount.execute.selector) {
            if (callData.length < 36) return false;
            uint256 word = uint256(bytes32(callData[4:36]));
            if (word > type(uint160).max) return false;
            return _sessionKeyMayTarget(key, address(uint160(word)));
        }
        if (selector == SmartAccount.executeBatch.selector) {
            // executeBatch's decoder reads the same first head word, so these are exactly the called targets.
            address[] memory targets = abi.decode(callData[4:], (address[]));
            for (uint256 i = 0; i < targets.length; i++) {
                if (!_sessionKeyMayTarget(key, targets[i])) return false;
            }
            return true;
        }
        return false;
    }

    function _sessionKeyMayTarget(SessionKey storage key, address target) internal view returns (bool) {
        if (target == address(this)) return false;
        uint256 count = key.whitelist.length;
        if (count == 0) return true;
        for (uint256 i = 0; i < count; i++) {
            if (key.whitelist[i] == target) return true;
        }
        return false;
    }

    function _isRecoveryCall(bytes calldata callData) internal pure returns (bool) {
        if (callData.length < 4) return false;
        bytes4 selector = bytes4(callData[:4]);
        return selector == SmartAccount.startRecovery.selector || selector == SmartAccount.completeRecovery.selector;
    }

    // ---------------------------------------------------------------- execution

    function execute(address target, uint256 value, bytes calldata data) external onlyEntryPointOrOwner {
        _call(target, value, data);
    }

    function executeBatch(address[] calldata targets, uint256[] calldata values, bytes[] calldata datas)
        external
        onlyEntryPointOrOwner
    {
        if (targets.length != values.length || targets.length != datas.length) revert LengthMismatch();
        for (uint256 i = 0; i < targets.length; i++) {
            _call(targets[i], values[i], datas[i]);
        }
    }

    function _call(address target, uint256 value, bytes memory data) internal {
        (bool success, bytes memory result) = target.call{value: value}(data);
        if (!success) {
            assembly ("memory-safe") {
                revert(add(result, 32), mload(result))
            }
        }
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
        $.sessionKeyEpoch += 1;
        emit OwnershipTransferred(previous, newOwner);
        if ($.recovery.newOwner != address(0)) _cancelRecovery($);
    }

    // ---------------------------------------------------------------- session keys

    /// @notice Registers (or replaces) a session key that may sign up to `limit` userOps calling `execute` or
    /// `executeBatch` on the whitelisted targets (any target but the account itself when the list is empty),
    /// valid from `validAfter` to `validUntil` (the EntryPoint enforces the window). An op the account pays for
    /// itself (no paymaster) may cost it at most `maxFeePerOp` wei; 0 means paymaster-paid ops only. So the key can
    /// make the account pay at most `limit` × `maxFeePerOp` in fees.
    function registerSessionKey(
        address key,
        uint48 validAfter,
        uint48 validUntil,
        uint48 limit,
        address[] calldata whitelist,
        uint128 maxFeePerOp
    ) external onlyAuthorized {
        AccountStorage storage $ = _storage();
        if (key == address(0) || key == $.owner) revert InvalidSessionKey(key);
        if (validUntil <= validAfter) revert InvalidSessionWindow(validAfter, validUntil);
        if (limit == 0) revert InvalidSessionLimit();
        if (whitelist.length > MAX_SESSION_KEY_TARGETS) {
            revert TooManyWhitelistedTargets(whitelist.length, MAX_SESSION_KEY_TARGETS);
        }
        for (uint256 i = 0; i < whitelist.length; i++) {
            if (whitelist[i] == address(0) || whitelist[i] == address(this)) revert InvalidWhitelistedTarget(whitelist[i]);
        }
        SessionKey storage s = $.sessionKeys[key];
        s.validAfter = validAfter;
        s.validUntil = validUntil;
        s.limit = limit;
        s.used = 0;
        s.epoch = $.sessionKeyEpoch;
        s.active = true;
        s.whitelist = whitelist;
        s.maxFeePerOp = maxFeePerOp;
        emit SessionKeyRegistered(key, validAfter, validUntil, limit, whitelist, maxFeePerOp);
    }

    function revokeSessionKey(address key) external onlyAuthorized {
        AccountStorage storage $ = _storage();
        SessionKey storage s = $.sessionKeys[key];
        if (!_isActive($, s)) revert SessionKeyNotActive(key);
        s.active = false;
        emit SessionKeyRevoked(key);
    }

    function getSessionKey(address key)
        external
        view
        returns (
            uint48 validAfter,
            uint48 validUntil,
            uint48 limit,
            uint48 used,
            bool active,
            address[] memory whitelist,
            uint128 maxFeePerOp
        )
    {
        AccountStorage storage $ = _storage();
        SessionKey storage s = $.sessionKeys[key];
        return (s.validAfter, s.validUntil, s.limit, s.used, _isActive($, s), s.whitelist, s.maxFeePerOp);
    }

    function _isActive(AccountStorage storage $, SessionKey storage s) internal view returns (bool) {
        return s.active && s.epoch == $.sessionKeyEpoch;
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

    /// @dev A strict majority both of the guardians at the start and of those now: guardians added meanwhile must not
    /// leave the few who started it enough to take over.
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

    /// @notice Valid when the owner signed the EIP-712 `AccountMessage(hash)` for this account and chain.
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

    // ---------------------------------------------------------------- deposit

    /// @notice The account's deposit at the EntryPoint.
    function getDeposit() external view returns (uint256) {
        return _ENTRY_POINT.balanceOf(address(this));
    }

    function addDeposit() external payable {
        _ENTRY_POINT.depositTo{value: msg.value}(address(this));
    }

    function withdrawDepositTo(address payable withdrawAddress, uint256 amount) external onlyAuthorized {
        _ENTRY_POINT.withdrawTo(withdrawAddress, amount);
    }

    // ---------------------------------------------------------------- misc

    function supportsInterface(bytes4 interfaceId) public view virtual override returns (bool) {
        return interfaceId == type(IERC721Receiver).interfaceId || interfaceId == type(IERC1271).interfaceId
            || super.supportsInterface(interfaceId);
    }

    function _authorizeUpgrade(address) internal view override onlyAuthorized {}

    function _checkAuthorized() internal view {
        if (msg.sender != _storage().owner && msg.sender != address(this) && msg.sender != address(_ENTRY_POINT)) {
            revert NotAuthorized(msg.sender);
        }
    }

    function _storage() private pure returns (AccountStorage storage $) {
        assembly {
            $.slot := STORAGE_LOCATION
        }
    }
}
