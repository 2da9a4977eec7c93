import { afterEach, describe, expect, it, vi } from "vitest";
import { envNumber } from "./config";

afterEach(() => vi.unstubAllEnvs());

describe("envNumber", () => {
  const read = (value: string | undefined, rule?: Parameters<typeof envNumber>[2]) => {
    if (value === undefined) delete process.env.TEST_SETTING;
    else vi.stubEnv("TEST_SETTING", value);
    return envNumber("TEST_SETTING", 7, rule);
  };

  it("reads a number, and an unset, empty, blank or non-numeric setting as the fallback", () => {
    expect(read("12")).toBe(12);
    expect(read("0")).toBe(0);
    expect(read("-1.5")).toBe(-1.5);
    for (const value of [undefined, "", "  ", "ten", "Infinity", "NaN"]) expect(read(value), String(value)).toBe(7);
  });

  it("applies the rule: a value outside it reads as the fallback", () => {
    expect(read("-1", { min: 0 })).toBe(7);
    expect(read("0", { min: 0 })).toBe(0);
    expect(read("0", { above: 0 })).toBe(7);
    expect(read("0.5", { above: 0 })).toBe(0.5);
    expect(read("2.5", { integer: true })).toBe(7);
    expect(read("3", { min: 0, integer: true })).toBe(3);
    expect(envNumber("TEST_SETTING_UNSET", undefined, { above: 0 })).toBeUndefined();
  });
});
