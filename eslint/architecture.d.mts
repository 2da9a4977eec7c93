import type { ESLint } from "eslint";

export interface ImportGraph {
  edges: Map<string, { to: string; specifier: string }[]>;
  cycleOf: Map<string, string[]>;
  domainEdges: Map<string, string[]>;
  domainCycleOf: Map<string, string[]>;
}
export function runtimeImports(fileName: string, text: string): string[];
export function domainOf(file: string): string | null;
export function importGraph(root: string, files?: string[]): ImportGraph;
declare const plugin: ESLint.Plugin;
export default plugin;
