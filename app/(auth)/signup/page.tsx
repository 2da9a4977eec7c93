import { SignUpForm } from "@/components/auth-forms";

export const metadata = { title: "Create an account" };

export default function SignUpPage() {
  return (
    <>
      <h1 className="mb-1 text-xl font-semibold">Create your account</h1>
      <p className="mb-6 text-sm text-slate-600">You get an organization and a project with test and live keys.</p>
      <SignUpForm />
    </>
  );
}
