import Link from "next/link";
import { SignUpForm } from "@/components/auth-forms";
import { signUpClosed } from "@/lib/developers/service";

export const metadata = { title: "Create an account" };
export const dynamic = "force-dynamic"; // SIGNUP is read when the page is asked for, not at build

export default function SignUpPage() {
  if (signUpClosed()) {
    return (
      <>
        <h1 className="mb-1 text-xl font-semibold">Sign-up is by invitation</h1>
        <p className="mb-6 text-sm text-slate-600">Ask an organization owner on this server for an invitation link, then open it to create your account. (Whoever runs the server opens sign-up to everyone with SIGNUP=open.)</p>
        <p className="text-center text-sm text-slate-600">
          Already have an account? <Link href="/login" className="font-medium text-indigo-700 hover:underline">Sign in</Link>
        </p>
      </>
    );
  }
  return (
    <>
      <h1 className="mb-1 text-xl font-semibold">Create your account</h1>
      <p className="mb-6 text-sm text-slate-600">You get an organization and a project with test and live keys.</p>
      <SignUpForm />
    </>
  );
}
