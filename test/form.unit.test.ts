import qs from "qs";
import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { parseForm } from "@/lib/http/body";
import { countParams, parseBracketParams } from "@/lib/http/form";

const parse = (query: string) => parseBracketParams(new URLSearchParams(query));

/** Asserts that parsing `query` is refused as a client error, and returns the message. */
function refused(query: string): string {
  try {
    parse(query);
  } catch (err) {
    expect(err, query).toBeInstanceOf(ApiError);
    expect((err as ApiError).status, query).toBe(400);
    expect((err as ApiError).type, query).toBe("invalid_request_error");
    return (err as ApiError).message;
  }
  throw new Error(`'${query}' was accepted`);
}

describe("parseBracketParams", () => {
  it("keeps plain keys as strings, decoded", () => {
    expect(parse("")).toEqual({});
    expect(parse("name=Alice&chainId=31337")).toEqual({ name: "Alice", chainId: "31337" });
    expect(parse("name=Jos%C3%A9+M&note=a%26b%3Dc")).toEqual({ name: "José M", note: "a&b=c" });
    expect(parse("%61%5Bb%5D=1")).toEqual({ a: { b: "1" } }); // encoded brackets are brackets
  });

  it("always answers an object at the top level, as a JSON body must be", () => {
    const parsed = parse("0=a&1=b");
    expect(Array.isArray(parsed)).toBe(false);
    expect(parsed).toEqual({ 0: "a", 1: "b" });
    expect(Array.isArray(parse("=x"))).toBe(false);
  });

  it("nests objects", () => {
    expect(parse("domain[name]=App&domain[version]=1&domain[chainId]=5")).toEqual({ domain: { name: "App", version: "1", chainId: "5" } });
    expect(parse("a[b][c]=1&a[b][d]=2&a[e]=3")).toEqual({ a: { b: { c: "1", d: "2" }, e: "3" } });
  });

  it("makes arrays from indices, in index order whatever the order sent", () => {
    expect(parse("a[0]=x&a[1]=y&a[2]=z")).toEqual({ a: ["x", "y", "z"] });
    expect(parse("a[2]=z&a[0]=x&a[1]=y")).toEqual({ a: ["x", "y", "z"] });
    expect(parse("a[10]=k&a[9]=j&a[2]=c")).toEqual({ a: ["c", "j", "k"] }); // numeric, not lexical, and compacted
    expect(parse("a[1][name]=second&a[0][name]=first")).toEqual({ a: [{ name: "first" }, { name: "second" }] });
  });

  it("appends with empty brackets", () => {
    expect(parse("a[]=x&a[]=y")).toEqual({ a: ["x", "y"] });
    expect(parse("expand[]=accounts")).toEqual({ expand: ["accounts"] });
    expect(parse("a[b][]=1&a[b][]=2&a[c]=3")).toEqual({ a: { b: ["1", "2"], c: "3" } });
  });

  it("appends after the highest index given, never over one", () => {
    expect(parse("a[1]=x&a[]=y")).toEqual({ a: ["x", "y"] });
    expect(parse("a[2]=z&a[]=y")).toEqual({ a: ["z", "y"] });
    expect(parse("expand[1]=a&expand=b")).toEqual({ expand: ["a", "b"] });
    expect(parse("expand[]=a&expand=b&expand[]=c")).toEqual({ expand: ["a", "b", "c"] });
  });

  it("turns a repeated plain key into a list", () => {
    expect(parse("expand=a&expand=b")).toEqual({ expand: ["a", "b"] });
    expect(parse("expand=a&expand=b&expand=c")).toEqual({ expand: ["a", "b", "c"] });
    expect(parse("expand=a&other=1&expand=b")).toEqual({ expand: ["a", "b"], other: "1" });
  });

  it("nests deeply, as transaction intents send their interactions", () => {
    expect(
      parse(
        "chainId=31337&interactions[0][contract]=con_1&interactions[0][functionName]=mint" +
          "&interactions[0][functionArgs][0]=0xabc&interactions[0][functionArgs][1]=x&interactions[1][value]=10",
      ),
    ).toEqual({
      chainId: "31337",
      interactions: [{ contract: "con_1", functionName: "mint", functionArgs: ["0xabc", "x"] }, { value: "10" }],
    });
    expect(parse("interactions[0][functionArgs][1]=x")).toEqual({ interactions: [{ functionArgs: ["x"] }] });
    expect(parse("a[b][c][d][e][f][g][h][i][j]=deep")).toEqual({ a: { b: { c: { d: { e: { f: { g: { h: { i: { j: "deep" } } } } } } } } } });
    expect(parse("a[0][0][0]=x&a[0][0][1]=y&a[1][0][0]=z")).toEqual({ a: [[["x", "y"]], [["z"]]] });
  });

  it("keeps empty values as empty strings", () => {
    expect(parse("metadata[k]=")).toEqual({ metadata: { k: "" } });
    expect(parse("metadata=")).toEqual({ metadata: "" });
    expect(parse("metadata[k]&name")).toEqual({ metadata: { k: "" }, name: "" });
    expect(parse("a[]=&a[]=")).toEqual({ a: ["", ""] });
  });

  it("keeps keys that only look like indices, or not quite, as object keys", () => {
    expect(parse("m[01]=x")).toEqual({ m: { "01": "x" } });
    expect(parse("m[0]=x&m[k]=y")).toEqual({ m: { 0: "x", k: "y" } });
    expect(parse("m[-1]=x")).toEqual({ m: { "-1": "x" } });
    expect(parse("m[a b]=x")).toEqual({ m: { "a b": "x" } });
  });

  it("refuses a key given both as a value and as an object, or twice", () => {
    for (const query of ["a=1&a[b]=2", "a[b]=2&a=1", "a[b]=1&a[b][c]=2", "a[b][c]=2&a[b]=1", "a[0]=x&a[0]=y", "metadata[k]=1&metadata[k]=2", "a[x]=1&a=2"]) {
      refused(query);
    }
  });

  it("refuses names that could reach an object's prototype", () => {
    for (const segment of ["__proto__", "constructor", "prototype"]) {
      for (const query of [`${segment}=1`, `${segment}[polluted]=1`, `a[${segment}]=1`, `a[${segment}][polluted]=1`, `a[0][${segment}]=1`]) {
        expect(refused(query)).toMatch(/Invalid parameter name/);
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses nesting deeper than ten levels", () => {
    const ten = "a" + "[x]".repeat(9);
    expect(parse(`${ten}=1`)).toBeTypeOf("object");
    expect(refused(`${ten}[x]=1`)).toMatch(/nested too deeply/);
    expect(refused(`a${"[0]".repeat(50)}=1`)).toMatch(/nested too deeply/);
  });

  it("refuses array indices above 1000, however they are written", () => {
    expect((parse("a[1000]=x").a as unknown[]).length).toBe(1);
    for (const query of ["a[1001]=x", "a[99999999999999999999]=x", "a[0][b][5000]=x", `a[1000]=x&a[]=y`]) {
      expect(refused(query)).toMatch(/index too large/);
    }
  });

  it("refuses malformed names", () => {
    for (const query of ["a[b=1", "a[b]c=1", "a[b]]=1", "a[b[c]]=1", "a]b[c=1", "a[b][=1"]) {
      expect(refused(query)).toMatch(/Malformed parameter name/);
    }
  });

  it("reads back what qs writes, for nested objects with string leaves", () => {
    const samples: Record<string, unknown>[] = [
      { name: "Alice" },
      { metadata: { level: "3", team: "red & blue", empty: "" } },
      { expand: ["accounts", "transactionIntents"] },
      { domain: { name: "App", version: "1", chainId: "31337", verifyingContract: "0xabc" }, primaryType: "Mail" },
      {
        chainId: "31337",
        interactions: [
          { contract: "con_1", functionName: "transfer", functionArgs: ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "100"] },
          { contract: "con_2", functionName: "mint", functionArgs: ["pla_1"], value: "0" },
        ],
      },
      { types: { Mail: [{ name: "from", type: "Person" }, { name: "contents", type: "string" }], Person: [{ name: "wallet", type: "address" }] } },
      { abi: [{ type: "function", name: "f", inputs: [{ name: "t", type: "tuple", components: [{ name: "a", type: "uint256" }] }] }] },
      { matrix: [["a", "b"], ["c"]], unicode: "⛓ ключ", symbols: "[]=&?#%+ " },
      { a: { b: { c: { d: { e: { f: { g: { h: { i: "nine deep" } } } } } } } } },
    ];
    for (const sample of samples) {
      const encoded = qs.stringify(sample, { arrayFormat: "indices" });
      expect(parseBracketParams(new URLSearchParams(encoded)), encoded).toEqual(sample);
    }
  });
});

describe("parseBracketParams limits", () => {
  it("caps repeated plain keys like indices", () => {
    expect(refused(`expand[1000]=a&expand=b`)).toMatch(/repeated too many times/);
    expect((parse(Array.from({ length: 1000 }, () => "expand=a").join("&")).expand as string[]).length).toBe(1000);
  });

  it("accepts 1,000 parameters and refuses the 1,001st, naming the limit", () => {
    const params = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=1`).join("&");
    expect(Object.keys(parse(params(1000)))).toHaveLength(1000);
    expect(refused(params(1001))).toMatch(/Too many parameters: at most 1,000/);
    expect(refused(Array.from({ length: 1001 }, () => "a[]=x").join("&"))).toMatch(/at most 1,000/);
    // a budget left over by the query string
    expect(() => parseBracketParams(new URLSearchParams(params(10)), 9)).toThrow(/at most 1,000/);
  });
});

describe("form bodies", () => {
  it("count parameters by a scan before decoding any, skipping empty pieces as URLSearchParams does", () => {
    expect(countParams("")).toBe(0);
    expect(countParams("a=1")).toBe(1);
    expect(countParams("a=1&&b=2&")).toBe(2);
    expect(countParams("&&&")).toBe(0);
    expect(countParams("a&b&c")).toBe(3);
    expect(() => parseForm(`${"x=1&".repeat(100_000)}`)).toThrow(/at most 1,000/);
    expect(parseForm(`${"&".repeat(100_000)}a=1`)).toEqual({ a: "1" });
  });
});
