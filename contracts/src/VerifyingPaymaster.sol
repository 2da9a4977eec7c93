// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IEntryPoint} from "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import {IPaymaster} from "@account-abstraction/contracts/interfaces/IPaymaster.sol";
import {UserOperation} from "@account-abstraction/contracts/interfaces/UserOperation.sol";
import {_packValidationData} from "@account-abstraction/contracts/core/Helpers.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/**
 * @title VerifyingPaymaster
 * @notice Sponsors userOps (EntryPoint v0.6) that an off-chain service approved by signing `getHash`.
 *
 * paymasterAndData = paymaster (20 bytes) ++ abi.encode(uint48 validUntil, uint48 validAfter) (64 bytes)
 *                    ++ signature (65 bytes) over toEthSignedMessageHash(getHash(userOp, validUntil, validAfter)).
 *
 * There is no per-sender counter: the hash covers the account nonce, which the EntryPoint never lets repeat, so a
 * sender may have many sponsored ops pending at once.
 */
contract VerifyingPaymaster is IPaymaster, Ownable {
    uint256 private constant VALID_TIMESTAMP_OFFSET = 20;
    uint256 private constant SIGNATURE_OFFSET = 84;
    uint256 private constant PAYMASTER_AND_DATA_LENGTH = 149;

    IEntryPoint public immutable entryPoint;
    address public verifyingSigner;

    event VerifyingSignerChanged(address indexed previousSigner, address indexed newSigner);

    error NotEntryPoint(address caller);
    error InvalidVerifyingSigner();

    modifier onlyEntryPoint() {
        if (msg.sender != address(entryPoint)) revert NotEntryPoint(msg.sender);
        _;
    }

    constructor(IEntryPoint anEntryPoint, address anOwner, address aVerifyingSigner) Ownable(anOwner) {
        if (aVerifyingSigner == address(0)) revert InvalidVerifyingSigner();
        entryPoint = anEntryPoint;
        verifyingSigner = aVerifyingSigner;
        emit VerifyingSignerChanged(address(0), aVerifyingSigner);
    }

    function setVerifyingSigner(address newSigner) external onlyOwner {
        if (newSigner == address(0)) revert InvalidVerifyingSigner();
        emit VerifyingSignerChanged(verifyingSigner, newSigner);
        verifyingSigner = newSigner;
    }

    /// @notice What the verifying signer signs (as an EIP-191 personal message) to sponsor `userOp`.
    function getHash(UserOperation calldata userOp, uint48 validUntil, uint48 validAfter)
        public
        view
        returns (bytes32)
    {
        // Two flat encodings of static words concatenate to the single abi.encode of all of them (stack depth).
        bytes memory head = abi.encode(
            userOp.sender,
            userOp.nonce,
            keccak256(userOp.initCode),
            keccak256(userOp.callData),
            userOp.callGasLimit,
            userOp.verificationGasLimit,
            userOp.preVerificationGas
        );
        bytes memory tail = abi.encode(
            userOp.maxFeePerGas, userOp.maxPriorityFeePerGas, block.chainid, address(this), validUntil, validAfter
        );
        return keccak256(bytes.concat(head, tail));
    }

    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public
        pure
        returns (uint48 validUntil, uint48 validAfter, bytes calldata signature)
    {
        // A string reason, not a custom error: EntryPoint v0.6 only relays Error(string) ("AA33 reverted: ...").
        require(
            paymasterAndData.length == PAYMASTER_AND_DATA_LENGTH,
            "VerifyingPaymaster: paymasterAndData must be address ++ abi.encode(uint48,uint48) ++ 65-byte signature"
        );
        (validUntil, validAfter) =
            abi.decode(paymasterAndData[VALID_TIMESTAMP_OFFSET:SIGNATURE_OFFSET], (uint48, uint48));
        signature = paymasterAndData[SIGNATURE_OFFSET:];
    }

    /// @inheritdoc IPaymaster
    function validatePaymasterUserOp(UserOperation calldata userOp, bytes32, uint256)
        external
        view
        override
        onlyEntryPoint
        returns (bytes memory context, uint256 validationData)
    {
        (uint48 validUntil, uint48 validAfter, bytes calldata signature) =
            parsePaymasterAndData(userOp.paymasterAndData);
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(getHash(userOp, validUntil, validAfter));
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(digest, signature);
        bool failed = error != ECDSA.RecoverError.NoError || signer != verifyingSigner;
        return ("", _packValidationData(failed, validUntil, validAfter));
    }

    /// @inheritdoc IPaymaster
    /// @dev Never called: validation returns an empty context.
    function postOp(PostOpMode, bytes calldata, uint256) external view override onlyEntryPoint {}

    // ---------------------------------------------------------------- deposit and stake

    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function withdrawTo(address payable withdrawAddress, uint256 amount) external onlyOwner {
        entryPoint.withdrawTo(withdrawAddress, amount);
    }

    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable withdrawAddress) external onlyOwner {
        entryPoint.withdrawStake(withdrawAddress);
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }
}
