import { afterEach, describe, expect, it, vi } from "vitest";
import { envFamily, envFlag, envNumber, envRaw, envText, listenHost, listensOnLoopbackOnly, type SettingName } from "./config";

/** Names lib/settings.ts does not declare, for these tests alone (the readers' type takes declared names). */
const undeclared = (name: string) => name as SettingName;

afterEach(() => vi.unstubAllEnvs());

describe("envNumber", () => {
  const read = (value: string | undefined, rule?: Parameters<typeof envNumber>[2]) => {
    if (value === undefined) delete process.env.TEST_SETTING;
    else vi.stubEnv("TEST_SETTING", value);
    return envNumber(undeclared("TEST_SETTING"), 7, rule);
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
    expect(envNumber(undeclared("TEST_SETTING_UNSET"), undefined, { above: 0 })).toBeUndefined();
  });
});

describe("envFlag", () => {
  it("reads yes and no in their usual spellings; unset, blank or anything else is undefined (the caller's default)", () => {
    for (const value of ["true", "TRUE", " 1 ", "yes", "on"]) {
      vi.stubEnv("TEST_FLAG", value);
      expect(envFlag(undeclared("TEST_FLAG")), value).toBe(true);
    }
    for (const value of ["false", "0", "No", "off"]) {
      vi.stubEnv("TEST_FLAG", value);
      expect(envFlag(undeclared("TEST_FLAG")), value).toBe(false);
    }
    for (const value of ["", "  ", "maybe", "2"]) {
      vi.stubEnv("TEST_FLAG", value);
      expect(envFlag(undeclared("TEST_FLAG")), value).toBeUndefined();
    }
    expect(envFlag(undeclared("TEST_FLAG_UNSET"))).toBeUndefined();
  });
});

describe("envText, envRaw and envFamily", () => {
  it("envText trims and reads blank as unset; envRaw reads the value as set", () => {
    vi.stubEnv("TEST_TEXT", "  a b ");
    expect(envText(undeclared("TEST_TEXT"))).toBe("a b");
    expect(envRaw(undeclared("TEST_TEXT"))).toBe("  a b ");
    vi.stubEnv("TEST_TEXT", "   ");
    expect(envText(undeclared("TEST_TEXT"))).toBeUndefined();
    expect(envRaw(undeclared("TEST_TEXT"))).toBe("   ");
    expect(envText(undeclared("TEST_TEXT_UNSET"))).toBeUndefined();
  });

  it("envFamily lists the set variables whose names match, with their values", () => {
    vi.stubEnv("TEST_FAMILY_1_URL", "one");
    vi.stubEnv("TEST_FAMILY_22_URL", "two");
    vi.stubEnv("TEST_FAMILY_X_URL", "not a member");
    expect(envFamily(/^TEST_FAMILY_\d+_URL$/).sort()).toEqual([
      ["TEST_FAMILY_1_URL", "one"],
      ["TEST_FAMILY_22_URL", "two"],
    ]);
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
