export function serverNodeOptions(env: NodeJS.ProcessEnv): string | undefined;
