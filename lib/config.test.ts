import { afterEach, describe, expect, it, vi } from "vitest";
import { envFlag, envNumber, listenHost, listensOnLoopbackOnly } from "./config";

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

describe("envFlag", () => {
  it("reads yes and no in their usual spellings; unset, blank or anything else is undefined (the caller's default)", () => {
    for (const value of ["true", "TRUE", " 1 ", "yes", "on"]) {
      vi.stubEnv("TEST_FLAG", value);
      expect(envFlag("TEST_FLAG"), value).toBe(true);
    }
    for (const value of ["false", "0", "No", "off"]) {
      vi.stubEnv("TEST_FLAG", value);
      expect(envFlag("TEST_FLAG"), value).toBe(false);
    }
    for (const value of ["", "  ", "maybe", "2"]) {
      vi.stubEnv("TEST_FLAG", value);
      expect(envFlag("TEST_FLAG"), value).toBeUndefined();
    }
    expect(envFlag("TEST_FLAG_UNSET")).toBeUndefined();
  });
});

describe("HOST", () => {
  it("defaults to 127.0.0.1 (npm start's and npm run dev's); loopback alone is a 127/8 address, ::1 or localhost", () => {
    vi.stubEnv("HOST", " ");
    expect(listenHost()).toBe("127.0.0.1");
    expect(listensOnLoopbackOnly()).toBe(true);
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"]) {
      vi.stubEnv("HOST", host);
      expect(listensOnLoopbackOnly(), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "::", "[::]", "10.0.0.5", "192.168.1.2", "fe80::1", "wallet.example.com", "localhost.example.com"]) {
      vi.stubEnv("HOST", host);
      expect(listensOnLoopbackOnly(), host).toBe(false);
    }
  });
});
