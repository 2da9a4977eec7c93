// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Chainlink's AggregatorV3Interface (what a price feed's proxy answers).
interface AggregatorV3Interface {
    function decimals() external view returns (uint8);

    function description() external view returns (string memory);

    function version() external view returns (uint256);

    function getRoundData(uint80 roundId)
        external
        view
        returns (uint80 roundId_, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/// @notice A Chainlink-style price feed anyone can set, for development chains and tests (the service's USD prices
/// read it like a real feed: `latestRoundData` and `decimals`). Each `setAnswer` records a new round stamped with
/// the block's timestamp, so a feed nobody updates goes stale like a real one. Never point a live chain at it.
contract TestPriceFeed is AggregatorV3Interface {
    struct Round {
        int256 answer;
        uint256 updatedAt;
    }

    uint8 public immutable override decimals;
    string public override description;
    uint256 public constant override version = 4;

    uint80 public latestRound;
    mapping(uint80 => Round) private rounds;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    error NoDataPresent();

    /// @param decimals_ digits of the answer (Chainlink's USD feeds use 8)
    /// @param initialAnswer recorded as round 1 at deployment
    constructor(uint8 decimals_, string memory description_, int256 initialAnswer) {
        decimals = decimals_;
        description = description_;
        _record(initialAnswer);
    }

    /// @notice Records `answer` as a new round at this block's timestamp. Anyone may call it: test feeds only.
    function setAnswer(int256 answer) external {
        _record(answer);
    }

    function getRoundData(uint80 roundId)
        external
        view
        override
        returns (uint80, int256, uint256, uint256, uint80)
    {
        Round memory round = rounds[roundId];
        if (round.updatedAt == 0) revert NoDataPresent();
        return (roundId, round.answer, round.updatedAt, round.updatedAt, roundId);
    }

    function latestRoundData() external view override returns (uint80, int256, uint256, uint256, uint80) {
        Round memory round = rounds[latestRound];
        return (latestRound, round.answer, round.updatedAt, round.updatedAt, latestRound);
    }

    function _record(int256 answer) private {
        uint80 roundId = latestRound + 1;
        latestRound = roundId;
        rounds[roundId] = Round(answer, block.timestamp);
        emit AnswerUpdated(answer, roundId, block.timestamp);
    }
}
