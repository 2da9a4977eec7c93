import type { ReactNode } from "react";
import { ModeSwitch, ProjectNav, ProjectSwitcher, SignOutButton } from "@/components/nav";
import { Providers } from "@/components/providers";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";

export default async function ProjectLayout({ children, params }: { children: ReactNode; params: ScopeParams }) {
  const scope = await scopeOf(params);
  return (
    <Providers>
      <div className="min-h-screen">
        <header className="sticky top-0 z-10 border-b border-slate-200 bg-white/95 backdrop-blur">
          <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-3 px-4 py-2">
            <span className="font-semibold">Smart wallets</span>
            <ProjectSwitcher projects={scope.projects} current={scope.project.id} mode={scope.mode} />
            <ModeSwitch projectId={scope.project.id} mode={scope.mode} />
            <span className="ml-auto">
              <SignOutButton />
            </span>
          </div>
          {scope.mode === "test" && <div className="bg-amber-100 px-4 py-0.5 text-center text-xs text-amber-900">Test mode: test keys and test data</div>}
        </header>
        <div className="mx-auto flex max-w-7xl flex-col gap-4 px-4 py-4 md:flex-row md:gap-8 md:py-6">
          <aside className="md:w-52 md:shrink-0">
            <ProjectNav base={scope.base} />
          </aside>
          <main className="min-w-0 flex-1">{children}</main>
        </div>
      </div>
    </Providers>
  );
}
