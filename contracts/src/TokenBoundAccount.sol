// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccount} from "@account-abstraction/contracts/interfaces/IAccount.sol";
import {IEntryPoint} from "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import {UserOperation} from "@account-abstraction/contracts/interfaces/UserOperation.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC721Receiver} from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";
import {IERC1155Receiver} from "@openzeppelin/contracts/token/ERC1155/IERC1155Receiver.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @notice EIP-6551's account interface (interface id 0x6faff5f1).
interface IERC6551Account {
    receive() external payable;

    function token() external view returns (uint256 chainId, address tokenContract, uint256 tokenId);

    function state() external view returns (uint256);

    function isValidSigner(address signer, bytes calldata context) external view returns (bytes4 magicValue);
}

/// @notice EIP-6551's execution interface (interface id 0x51945447).
interface IERC6551Executable {
    function execute(address to, uint256 value, bytes calldata data, uint8 operation)
        external
        payable
        returns (bytes memory);
}

/**
 * @title TokenBoundAccount
 * @notice An EIP-6551 token-bound account that is also an ERC-4337 (EntryPoint v0.6) account. The ERC6551Registry
 * deploys it as an ERC-1167 proxy whose code ends with (salt, chainId, tokenContract, tokenId); whoever holds that
 * ERC-721 token on that chain controls the account, so moving the token moves control. There is no stored owner,
 * hence no ownership transfer, session keys or recovery.
 *
 * `execute(address,uint256,bytes)` and `executeBatch(address[],uint256[],bytes[])` have SmartAccount's selectors, so
 * the same callData drives both kinds of account.
 */
contract TokenBoundAccount is IAccount, IERC6551Account, IERC6551Executable, IERC1271, IERC165, IERC721Receiver, IERC1155Receiver, EIP712 {
    /// @notice EIP-712 type of the message wrapper `isValidSignature` checks (binds a hash to chain and account).
    bytes32 public constant ACCOUNT_MESSAGE_TYPEHASH = keccak256("AccountMessage(bytes32 hash)");

    uint256 internal constant SIG_VALIDATION_FAILED = 1;
    bytes4 internal constant ERC1271_INVALID = 0xffffffff;

    IEntryPoint private immutable _ENTRY_POINT;

    uint256 private _state;

    error NotAuthorized(address caller);
    error NotEntryPoint(address caller);
    error LengthMismatch();
    error UnsupportedOperation(uint8 operation);
    error OwnershipCycle();

    modifier onlyEntryPoint() {
        if (msg.sender != address(_ENTRY_POINT)) revert NotEntryPoint(msg.sender);
        _;
    }

    modifier onlyEntryPointOrHolder() {
        if (msg.sender != address(_ENTRY_POINT) && msg.sender != owner()) revert NotAuthorized(msg.sender);
        _;
    }

    constructor(IEntryPoint anEntryPoint) EIP712("TokenBoundAccount", "1") {
        _ENTRY_POINT = anEntryPoint;
    }

    receive() external payable {}

    // ---------------------------------------------------------------- views

    function entryPoint() public view returns (IEntryPoint) {
        return _ENTRY_POINT;
    }

    /// @notice The token that controls the account, read from the footer the registry appended to the proxy's code.
    function token() public view returns (uint256 chainId, address tokenContract, uint256 tokenId) {
        bytes memory footer = new bytes(0x60);
        assembly ("memory-safe") {
            extcodecopy(address(), add(footer, 0x20), 0x4d, 0x60)
        }
        return abi.decode(footer, (uint256, address, uint256));
    }

    /// @notice The token's current holder; nobody (zero) when the token lives on another chain or does not exist.
    function owner() public view returns (address) {
        (uint256 chainId, address tokenContract, uint256 tokenId) = token();
        if (chainId != block.chainid || tokenContract.code.length == 0) return address(0);
        try IERC721(tokenContract).ownerOf(tokenId) returns (address holder) {
            return holder;
        } catch {
            return address(0);
        }
    }

    /// @notice Changes with every call the account makes (EIP-6551 `state`).
    function state() external view returns (uint256) {
        return _state;
    }

    function isValidSigner(address signer, bytes calldata) external view returns (bytes4) {
        return _isHolder(signer) ? IERC6551Account.isValidSigner.selector : bytes4(0);
    }

    /// @notice The account's nonce for key 0 at the EntryPoint.
    function getNonce() external view returns (uint256) {
        return _ENTRY_POINT.getNonce(address(this), 0);
    }

    // ---------------------------------------------------------------- ERC-4337

    /// @inheritdoc IAccount
    /// @dev Valid when the holder signed toEthSignedMessageHash(userOpHash) (personal_sign of the hash).
    function validateUserOp(UserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        override
        onlyEntryPoint
        returns (uint256 validationData)
    {
        (address signer, ECDSA.RecoverError error,) =
            ECDSA.tryRecoverCalldata(MessageHashUtils.toEthSignedMessageHash(userOpHash), userOp.signature);
        validationData = error == ECDSA.RecoverError.NoError && _isHolder(signer) ? 0 : SIG_VALIDATION_FAILED;
        if (missingAccountFunds != 0) {
            // The EntryPoint checks the deposit itself; a failed transfer surfaces as AA21.
            (bool success,) = payable(msg.sender).call{value: missingAccountFunds}("");
            (success);
        }
    }

    // ---------------------------------------------------------------- execution

    function execute(address target, uint256 value, bytes calldata data) external onlyEntryPointOrHolder {
        _call(target, value, data);
    }

    function executeBatch(address[] calldata targets, uint256[] calldata values, bytes[] calldata datas)
        external
        onlyEntryPointOrHolder
    {
        if (targets.length != values.length || targets.length != datas.length) revert LengthMismatch();
        for (uint256 i = 0; i < targets.length; i++) {
            _call(targets[i], values[i], datas[i]);
        }
    }

    /// @inheritdoc IERC6551Executable
    /// @dev The holder's direct entry point; only calls (operation 0), never delegatecall or create.
    function execute(address to, uint256 value, bytes calldata data, uint8 operation)
        external
        payable
        returns (bytes memory)
    {
        if (!_isHolder(msg.sender)) revert NotAuthorized(msg.sender);
        if (operation != 0) revert UnsupportedOperation(operation);
        return _call(to, value, data);
    }

    function _call(address target, uint256 value, bytes memory data) internal returns (bytes memory result) {
        ++_state;
        bool success;
        (success, result) = target.call{value: value}(data);
        if (!success) {
            assembly ("memory-safe") {
                revert(add(result, 32), mload(result))
            }
        }
    }

    function _isHolder(address signer) internal view returns (bool) {
        return signer != address(0) && signer == owner();
    }

    // ---------------------------------------------------------------- signatures

    /// @inheritdoc IERC1271
    /// @dev The holder signs the EIP-712 message AccountMessage(hash) in the domain {TokenBoundAccount, 1, chainId,
    /// this account}; a holder that is itself a contract answers through its own EIP-1271.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        address holder = owner();
        if (holder == address(0)) return ERC1271_INVALID;
        bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(ACCOUNT_MESSAGE_TYPEHASH, hash)));
        return SignatureChecker.isValidSignatureNow(holder, digest, signature)
            ? IERC1271.isValidSignature.selector
            : ERC1271_INVALID;
    }

    // ---------------------------------------------------------------- receiving tokens

    /// @dev Refuses its own token: an account that holds the token controlling it can never be used again.
    function onERC721Received(address, address, uint256 receivedId, bytes calldata) external view returns (bytes4) {
        (uint256 chainId, address tokenContract, uint256 tokenId) = token();
        if (chainId == block.chainid && msg.sender == tokenContract && receivedId == tokenId) revert OwnershipCycle();
        return IERC721Receiver.onERC721Received.selector;
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return IERC1155Receiver.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        pure
        returns (bytes4)
    {
        return IERC1155Receiver.onERC1155BatchReceived.selector;
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == type(IERC165).interfaceId || interfaceId == type(IERC6551Account).interfaceId
            || interfaceId == type(IERC6551Executable).interfaceId || interfaceId == type(IERC1271).interfaceId
            || interfaceId == type(IERC721Receiver).interfaceId || interfaceId == type(IERC1155Receiver).interfaceId;
    }
}
