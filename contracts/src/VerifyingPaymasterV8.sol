// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Eip7702Support} from "@account-abstraction/contracts-v08/core/Eip7702Support.sol";
import {_packValidationData} from "@account-abstraction/contracts-v08/core/Helpers.sol";
import {UserOperationLib} from "@account-abstraction/contracts-v08/core/UserOperationLib.sol";
import {IEntryPoint} from "@account-abstraction/contracts-v08/interfaces/IEntryPoint.sol";
import {IPaymaster} from "@account-abstraction/contracts-v08/interfaces/IPaymaster.sol";
import {PackedUserOperation} from "@account-abstraction/contracts-v08/interfaces/PackedUserOperation.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/**
 * @title VerifyingPaymasterV8
 * @notice Sponsors userOps (EntryPoint v0.8) that an off-chain service approved by signing `getHash`: VerifyingPaymaster
 * (v0.6) on the packed userOp. Not BasePaymaster: its constructor makes the deployer (the CREATE2 deployer here) the
 * owner.
 *
 * paymasterAndData = paymaster (20 bytes) ++ paymasterVerificationGasLimit (16) ++ paymasterPostOpGasLimit (16)
 *                    ++ abi.encode(uint48 validUntil, uint48 validAfter) (64)
 *                    ++ signature (65) over toEthSignedMessageHash(getHash(userOp, validUntil, validAfter)).
 *
 * There is no per-sender counter: the hash covers the account nonce, which the EntryPoint never lets repeat.
 */
contract VerifyingPaymasterV8 is IPaymaster, Ownable {
    using UserOperationLib for PackedUserOperation;

    uint256 private constant VALID_TIMESTAMP_OFFSET = UserOperationLib.PAYMASTER_DATA_OFFSET; // 52
    uint256 private constant SIGNATURE_OFFSET = VALID_TIMESTAMP_OFFSET + 64; // 116
    uint256 private constant PAYMASTER_AND_DATA_LENGTH = SIGNATURE_OFFSET + 65; // 181

    IEntryPoint public immutable entryPoint;
    address public verifyingSigner;

    event VerifyingSignerChanged(address indexed previousSigner, address indexed newSigner);

    error NotEntryPoint(address caller);
    error InvalidVerifyingSigner();
    /// @notice paymasterAndData is not paymaster ++ 2 gas limits ++ abi.encode(uint48,uint48) ++ 65-byte signature.
    error InvalidPaymasterAndData(uint256 length);

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

    /// @notice What the verifying signer signs (as an EIP-191 personal message) to sponsor `userOp`: every packed
    /// field but paymasterAndData's own data and the signatures, with the paymaster's two gas limits as the one word
    /// paymasterAndData[20:52] (verification limit in the high 128 bits), the chain and this paymaster. The initCode
    /// is hashed as the EntryPoint's userOpHash does: for an EIP-7702 op (initCode starting with the 20-byte 0x7702
    /// marker) keccak256(delegate ++ initCode[20:]), the sender's current delegate, so the approval only holds for
    /// the delegation it was given for (and getHash reverts for a sender not delegated yet).
    function getHash(PackedUserOperation calldata userOp, uint48 validUntil, uint48 validAfter)
        public
        view
        returns (bytes32)
    {
        bytes32 initCodeHash = Eip7702Support._getEip7702InitCodeHashOverride(userOp);
        if (initCodeHash == 0) initCodeHash = keccak256(userOp.initCode);
        // Two flat encodings of static words concatenate to the single abi.encode of all of them (stack depth).
        bytes memory head = abi.encode(
            userOp.sender,
            userOp.nonce,
            initCodeHash,
            keccak256(userOp.callData),
            userOp.accountGasLimits,
            uint256(bytes32(userOp.paymasterAndData[UserOperationLib.PAYMASTER_VALIDATION_GAS_OFFSET:VALID_TIMESTAMP_OFFSET]))
        );
        bytes memory tail = abi.encode(
            userOp.preVerificationGas, userOp.gasFees, block.chainid, address(this), validUntil, validAfter
        );
        return keccak256(bytes.concat(head, tail));
    }

    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public
        pure
        returns (uint48 validUntil, uint48 validAfter, bytes calldata signature)
    {
        if (paymasterAndData.length != PAYMASTER_AND_DATA_LENGTH) revert InvalidPaymasterAndData(paymasterAndData.length);
        (validUntil, validAfter) =
            abi.decode(paymasterAndData[VALID_TIMESTAMP_OFFSET:SIGNATURE_OFFSET], (uint48, uint48));
        signature = paymasterAndData[SIGNATURE_OFFSET:];
    }

    /// @inheritdoc IPaymaster
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32, uint256)
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
    function postOp(PostOpMode, bytes calldata, uint256, uint256) external view override onlyEntryPoint {}

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
