import { describe, expect, it } from "vitest";
import { chunksOf } from "./chunks";

describe("chunksOf", () => {
  it("cuts rows in order into pieces of at most the size, the last one shorter", () => {
    expect(chunksOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunksOf([1, 2, 3, 4], 2)).toEqual([[1, 2], [3, 4]]);
    expect(chunksOf([1], 200)).toEqual([[1]]);
    expect(chunksOf([], 3)).toEqual([]);
  });

  it("refuses a size that would loop or drop rows", () => {
    expect(() => chunksOf([1], 0)).toThrow(RangeError);
    expect(() => chunksOf([1], 1.5)).toThrow(RangeError);
  });
});
