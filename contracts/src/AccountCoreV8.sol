// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {BaseAccount} from "@account-abstraction/contracts-v08/core/BaseAccount.sol";
import {_packValidationData} from "@account-abstraction/contracts-v08/core/Helpers.sol";
import {UserOperationLib} from "@account-abstraction/contracts-v08/core/UserOperationLib.sol";
import {IAccount} from "@account-abstraction/contracts-v08/interfaces/IAccount.sol";
import {IEntryPoint} from "@account-abstraction/contracts-v08/interfaces/IEntryPoint.sol";
import {PackedUserOperation} from "@account-abstraction/contracts-v08/interfaces/PackedUserOperation.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {IERC721Receiver} from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";
import {ERC721Holder} from "@openzeppelin/contracts/token/ERC721/utils/ERC721Holder.sol";
import {ERC1155Holder} from "@openzeppelin/contracts/token/ERC1155/utils/ERC1155Holder.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/**
 * @title AccountCoreV8
 * @notice What SmartAccountV8 and DelegatedAccountV8 share on EntryPoint v0.8: the v0.8 BaseAccount's
 * validateUserOp / execute(address,uint256,bytes) / executeBatch(Call[]), userOps signed as a raw ECDSA signature of
 * the userOpHash (already an EIP-712 digest in v0.8, as Simple7702Account signs), scoped session keys, the EntryPoint
 * deposit and the token receiver hooks. The session-key rules are SmartAccount's (v0.6), restated for the packed
 * userOp; the v0.6 contract is left untouched because its bytecode fixes existing accounts' addresses.
 *
 * Session keys live in their own ERC-7201 namespace, so an EOA delegating here (EIP-7702) keeps them apart from
 * whatever another delegate wrote.
 */
abstract contract AccountCoreV8 is BaseAccount, IERC1271, ERC721Holder, ERC1155Holder {
    using UserOperationLib for PackedUserOperation;

    uint256 public constant MAX_SESSION_KEY_TARGETS = 10;

    uint256 internal constant SIG_VALIDATION_FAILED = 1;
    uint256 internal constant SIG_VALIDATION_SUCCESS = 0;
    bytes4 internal constant ERC1271_MAGIC_VALUE = 0x1626ba7e;
    bytes4 internal constant ERC1271_INVALID = 0xffffffff;

    IEntryPoint private immutable _ENTRY_POINT;

    struct SessionKey {
        uint48 validAfter;
        uint48 validUntil;
        uint48 limit;
        uint48 used;
        // A key only counts while its epoch is the account's: owner changes and revokeAllSessionKeys bump the epoch.
        uint32 epoch;
        bool active;
        address[] whitelist;
        // The most wei one op signed by the key may make the account pay in fees when no paymaster pays; 0: only
        // ops a paymaster pays for.
        uint128 maxFeePerOp;
    }

    /// @custom:storage-location erc7201:smartwallet.storage.SessionKeysV8
    struct SessionKeyStorage {
        uint32 epoch;
        mapping(address key => SessionKey) keys;
    }

    // keccak256(abi.encode(uint256(keccak256("smartwallet.storage.SessionKeysV8")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant SESSION_KEYS_LOCATION = 0x791d28580172dbb773ab2f9dfcf763a16f74d518586e852428137d65eb4b7e00;

    event SessionKeyRegistered(
        address indexed key,
        uint48 validAfter,
        uint48 validUntil,
        uint48 limit,
        address[] whitelist,
        uint128 maxFeePerOp
    );
    event SessionKeyRevoked(address indexed key);
    event AllSessionKeysRevoked(uint32 epoch);

    error NotAuthorized(address caller);
    error NotEntryPoint(address caller);
    error InvalidSessionKey(address key);
    error InvalidSessionWindow(uint48 validAfter, uint48 validUntil);
    error InvalidSessionLimit();
    error TooManyWhitelistedTargets(uint256 count, uint256 max);
    error InvalidWhitelistedTarget(address target);
    error SessionKeyNotActive(address key);

    modifier onlyAuthorized() {
        _checkAuthorized();
        _;
    }

    constructor(IEntryPoint anEntryPoint) {
        _ENTRY_POINT = anEntryPoint;
    }

    receive() external payable {}

    function entryPoint() public view override returns (IEntryPoint) {
        return _ENTRY_POINT;
    }

    /// @dev The key that signs everything (SmartAccountV8: its owner; DelegatedAccountV8: the EOA itself).
    function _owner() internal view virtual returns (address);

    /// @dev Who may manage the account (session keys, deposit withdrawals, ...).
    function _checkAuthorized() internal view virtual;

    /// @dev A signer that is neither the owner nor a usable session key (SmartAccountV8: guardians).
    function _validateOtherSigner(address, PackedUserOperation calldata) internal view virtual returns (uint256) {
        return SIG_VALIDATION_FAILED;
    }

    function _requireFromEntryPoint() internal view override {
        if (msg.sender != address(_ENTRY_POINT)) revert NotEntryPoint(msg.sender);
    }

    // ---------------------------------------------------------------- ERC-4337

    /// @dev v0.8's userOpHash is the EIP-712 digest of the packed op in the EntryPoint's domain: signed as is.
    function _validateSignature(PackedUserOperation calldata userOp, bytes32 userOpHash)
        internal
        override
        returns (uint256)
    {
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(userOpHash, userOp.signature);
        if (error != ECDSA.RecoverError.NoError) return SIG_VALIDATION_FAILED;
        if (signer == _owner()) return SIG_VALIDATION_SUCCESS;

        SessionKeyStorage storage $ = _sessionKeys();
        SessionKey storage key = $.keys[signer];
        if (
            _isActive($, key) && key.used < key.limit && _sessionKeyMayCall(key, userOp.callData)
                && _sessionKeyMayCost(key, userOp)
        ) {
            key.used += 1;
            return _packValidationData(false, key.validUntil, key.validAfter);
        }
        return _validateOtherSigner(signer, userOp);
    }

    /// @dev Whatever a paymaster pays costs the account nothing. Without one the account pays at most v0.8's prefund,
    /// (verificationGasLimit + callGasLimit + paymasterVerificationGasLimit + paymasterPostOpGasLimit +
    /// preVerificationGas) × maxFeePerGas (the paymaster limits are 0 then): that must be within the key's cap. The
    /// EntryPoint bounds each field by 2^120 before it calls the account, so nothing overflows.
    function _sessionKeyMayCost(SessionKey storage key, PackedUserOperation calldata userOp)
        internal
        view
        returns (bool)
    {
        if (_paymasterPays(userOp)) return true;
        return _requiredPrefund(userOp) <= key.maxFeePerOp;
    }

    function _requiredPrefund(PackedUserOperation calldata userOp) internal pure returns (uint256) {
        uint256 gas = userOp.unpackVerificationGasLimit() + userOp.unpackCallGasLimit() + userOp.preVerificationGas;
        if (userOp.paymasterAndData.length >= UserOperationLib.PAYMASTER_DATA_OFFSET) {
            gas += userOp.unpackPaymasterVerificationGasLimit() + userOp.unpackPostOpGasLimit();
        }
        return gas * userOp.unpackMaxFeePerGas();
    }

    /// @dev As the v0.8 EntryPoint reads it: any paymasterAndData names a paymaster (shorter than 52 bytes or naming
    /// the zero address, it rejects the op, AA93/AA98); empty, the account pays.
    function _paymasterPays(PackedUserOperation calldata userOp) internal pure returns (bool) {
        return userOp.paymasterAndData.length >= UserOperationLib.PAYMASTER_DATA_OFFSET
            && address(bytes20(userOp.paymasterAndData[:20])) != address(0);
    }

    function _sessionKeyMayCall(SessionKey storage key, bytes calldata callData) internal view returns (bool) {
        if (callData.length < 4) return false;
        bytes4 selector = bytes4(callData[:4]);
        if (selector == BaseAccount.execute.selector) {
            if (callData.length < 36) return false;
            uint256 word = uint256(bytes32(callData[4:36]));
            if (word > type(uint160).max) return false;
            return _sessionKeyMayTarget(key, address(uint160(word)));
        }
        if (selector == BaseAccount.executeBatch.selector) {
            // The same type executeBatch decodes, so these are exactly the called targets.
            Call[] memory calls = abi.decode(callData[4:], (Call[]));
            for (uint256 i = 0; i < calls.length; i++) {
                if (!_sessionKeyMayTarget(key, calls[i].target)) return false;
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

    // ---------------------------------------------------------------- session keys

    /// @notice Registers (or replaces) a session key that may sign up to `limit` userOps calling `execute` or
    /// `executeBatch` on the whitelisted targets (any target but the account itself when the list is empty),
    /// valid from `validAfter` to `validUntil` (the EntryPoint enforces the window). An op the account pays for
    /// itself (no paymaster) may cost it at most `maxFeePerOp` wei; 0 means paymaster-paid ops only.
    function registerSessionKey(
        address key,
        uint48 validAfter,
        uint48 validUntil,
        uint48 limit,
        address[] calldata whitelist,
        uint128 maxFeePerOp
    ) external onlyAuthorized {
        if (key == address(0) || key == _owner() || key == address(this)) revert InvalidSessionKey(key);
        if (validUntil <= validAfter) revert InvalidSessionWindow(validAfter, validUntil);
        if (limit == 0) revert InvalidSessionLimit();
        if (whitelist.length > MAX_SESSION_KEY_TARGETS) {
            revert TooManyWhitelistedTargets(whitelist.length, MAX_SESSION_KEY_TARGETS);
        }
        for (uint256 i = 0; i < whitelist.length; i++) {
            if (whitelist[i] == address(0) || whitelist[i] == address(this)) revert InvalidWhitelistedTarget(whitelist[i]);
        }
        SessionKeyStorage storage $ = _sessionKeys();
        SessionKey storage s = $.keys[key];
        s.validAfter = validAfter;
        s.validUntil = validUntil;
        s.limit = limit;
        s.used = 0;
        s.epoch = $.epoch;
        s.active = true;
        s.whitelist = whitelist;
        s.maxFeePerOp = maxFeePerOp;
        emit SessionKeyRegistered(key, validAfter, validUntil, limit, whitelist, maxFeePerOp);
    }

    function revokeSessionKey(address key) external onlyAuthorized {
        SessionKeyStorage storage $ = _sessionKeys();
        SessionKey storage s = $.keys[key];
        if (!_isActive($, s)) revert SessionKeyNotActive(key);
        s.active = false;
        emit SessionKeyRevoked(key);
    }

    /// @notice Retires every session key at once (what an owner change does).
    function revokeAllSessionKeys() external onlyAuthorized {
        _retireSessionKeys();
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
        SessionKeyStorage storage $ = _sessionKeys();
        SessionKey storage s = $.keys[key];
        return (s.validAfter, s.validUntil, s.limit, s.used, _isActive($, s), s.whitelist, s.maxFeePerOp);
    }

    function _retireSessionKeys() internal {
        SessionKeyStorage storage $ = _sessionKeys();
        $.epoch += 1;
        emit AllSessionKeysRevoked($.epoch);
    }

    function _isActive(SessionKeyStorage storage $, SessionKey storage s) internal view returns (bool) {
        return s.active && s.epoch == $.epoch;
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
        return interfaceId == type(IAccount).interfaceId || interfaceId == type(IERC721Receiver).interfaceId
            || interfaceId == type(IERC1271).interfaceId || super.supportsInterface(interfaceId);
    }

    function _sessionKeys() private pure returns (SessionKeyStorage storage $) {
        assembly {
            $.slot := SESSION_KEYS_LOCATION
        }
    }
}
