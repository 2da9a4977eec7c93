import path from "node:path";

/** Where the embedded default keeps its state (database, master key, printed project). */
export const dataDir = () => path.resolve(/* turbopackIgnore: true */ process.env.DATA_DIR ?? ".data");
