/**
 * The tenant every domain function takes first, so no query can forget it: a project and its mode (test or
 * live). Its own module so that the ~100 files naming it depend on this, not on the projects service.
 */
export interface ProjectContext {
  projectId: string;
  livemode: boolean;
}

export type Mode = "test" | "live";
export const modeOf = (livemode: boolean): Mode => (livemode ? "live" : "test");
