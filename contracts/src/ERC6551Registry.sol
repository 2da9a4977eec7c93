// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Create2} from "@openzeppelin/contracts/utils/Create2.sol";

/// @notice The registry interface of EIP-6551 (token-bound accounts).
interface IERC6551Registry {
    event ERC6551AccountCreated(
        address account,
        address indexed implementation,
        bytes32 salt,
        uint256 chainId,
        address indexed tokenContract,
        uint256 indexed tokenId
    );

    error AccountCreationFailed();

    function createAccount(address implementation, bytes32 salt, uint256 chainId, address tokenContract, uint256 tokenId)
        external
        returns (address account);

    function account(address implementation, bytes32 salt, uint256 chainId, address tokenContract, uint256 tokenId)
        external
        view
        returns (address account);
}

/**
 * @title ERC6551Registry
 * @notice Deploys token-bound accounts as EIP-6551 specifies: CREATE2 (with `salt`) of an ERC-1167 proxy to
 * `implementation` whose runtime code ends with the footer abi.encode(salt, chainId, tokenContract, tokenId), so the
 * account reads its token from its own code. Anyone may call it; an account that exists is returned as it is.
 */
contract ERC6551Registry is IERC6551Registry {
    function createAccount(address implementation, bytes32 salt, uint256 chainId, address tokenContract, uint256 tokenId)
        external
        returns (address)
    {
        bytes memory code = _creationCode(implementation, salt, chainId, tokenContract, tokenId);
        address predicted = Create2.computeAddress(salt, keccak256(code));
        // Idempotent, so a userOperation's initCode never fails because someone deployed the account first.
        if (predicted.code.length != 0) return predicted;
        emit ERC6551AccountCreated(predicted, implementation, salt, chainId, tokenContract, tokenId);
        address created;
        assembly ("memory-safe") {
            created := create2(0, add(code, 0x20), mload(code), salt)
        }
        if (created == address(0)) revert AccountCreationFailed();
        return created;
    }

    function account(address implementation, bytes32 salt, uint256 chainId, address tokenContract, uint256 tokenId)
        external
        view
        returns (address)
    {
        return Create2.computeAddress(salt, keccak256(_creationCode(implementation, salt, chainId, tokenContract, tokenId)));
    }

    /// @dev Creation prefix (returns the 0xad bytes after it) ++ ERC-1167 proxy (0x2d bytes) ++ footer (0x80 bytes).
    function _creationCode(address implementation, bytes32 salt, uint256 chainId, address tokenContract, uint256 tokenId)
        internal
        pure
        returns (bytes memory)
    {
        return abi.encodePacked(
            hex"3d60ad80600a3d3981f3363d3d373d3d3d363d73",
            implementation,
            hex"5af43d82803e903d91602b57fd5bf3",
            abi.encode(salt, chainId, tokenContract, tokenId)
        );
    }
}
