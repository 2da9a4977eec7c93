import { SignInForm } from "@/components/auth-forms";
import { enabledOAuthProviders } from "@/lib/dashboard/auth";

export const metadata = { title: "Sign in" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ error?: string; next?: string }> }) {
  const { error, next } = await searchParams;
  return (
    <>
      <h1 className="mb-6 text-xl font-semibold">Sign in to your dashboard</h1>
      <SignInForm providers={enabledOAuthProviders()} next={typeof next === "string" ? next : undefined} initialError={error ? "Could not sign you in. Try again." : undefined} />
    </>
  );
}
